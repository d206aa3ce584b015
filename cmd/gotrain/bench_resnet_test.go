package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestBenchResNet runs the bench at a tiny size without PyTorch and checks
// its report: the header, a line per run in the order they ran, the ratio.
func TestBenchResNet(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"resnet", "--replicas", "2", "--batch", "8", "--steps", "2", "--warmup", "1", "--rounds", "1", "--stem-stride", "2", "--torch", ""}
	if err := runBench(args, &out, &errOut); err != nil {
		t.Fatalf("gotrain bench %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^== ResNet 16/32/64 x 2 blocks, stem stride 2, batch 8, sync batch norm true, Adam, float32: 2 timed steps, 1 rounds; load `),
		regexp.MustCompile(`^gotrain resnet: 174970 params, replicas 2, threads 1: [0-9]+ samples/s, [0-9.]+ ms/step$`),
		regexp.MustCompile(`^gotrain resnet: 174970 params, replicas 1, threads 1: [0-9]+ samples/s, [0-9.]+ ms/step$`),
		regexp.MustCompile(`^load after: `),
		regexp.MustCompile(`^ratio gotrain 2 replicas / 1 replica on 1 thread: [0-9.]+x`),
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %v", i, lines[i], re)
		}
	}
	if err := runBench([]string{"resnet", "--rounds", "0"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "want --replicas, --batch, --steps, --warmup, --stem-stride and --rounds ≥ 1") {
		t.Errorf("--rounds 0: %v", err)
	}
}
