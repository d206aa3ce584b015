package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBenchRNN runs gotrain bench rnn at a tiny size against a stand-in
// for PyTorch's script (a shell script that prints the line torch_rnn.py
// prints, and the arguments it got), and checks the report: each round's
// two lines, the model's settings passed on, and the ratio of the medians.
func TestBenchRNN(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python")
	script := "#!/bin/sh\necho \"torch rnn: args $*: samples/s 100.0\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	torch := filepath.Join(dir, "torch_rnn.py")
	if err := os.WriteFile(torch, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"rnn", "--batch", "4", "--seq", "3", "--vocab", "5", "--embd", "2", "--units", "3", "--steps", "4", "--warmup", "1",
		"--replicas", "2", "--threads", "1", "--python", fake, "--torch", torch}
	if err := runBench(args, &out, &errOut); err != nil {
		t.Fatalf("gotrain bench %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^== GRU 3 units over 3 steps, embedding 2, vocabulary 5, global batch 4, Adam; gotrain 2 replicas × 1 threads, PyTorch 2 threads$`),
		regexp.MustCompile(`^round 1: gotrain rnn: [0-9.]+ samples/s, [0-9.]+ ms/step, loss [0-9.]+$`),
		regexp.MustCompile(`^round 1: torch rnn: args .*torch_rnn.py --batch 4 --seq 3 --vocab 5 --embd 2 --units 3 --steps 4 --warmup 1 --threads 2: samples/s 100.0$`),
		regexp.MustCompile(`^round 2: gotrain rnn: `),
		regexp.MustCompile(`^round 2: torch rnn: `),
		regexp.MustCompile(`^gotrain rnn: [0-9.]+ samples/s, PyTorch 100.0 samples/s \(medians of 2\): [0-9.]+× PyTorch 2 threads$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
	if err := runBench([]string{"rnn", "--torch", filepath.Join(dir, "missing.py")}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--torch") {
		t.Errorf("a missing script: error %v, want one naming --torch", err)
	}
}
