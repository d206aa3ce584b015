package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// TestBenchResNet runs the bench at a tiny size without PyTorch and checks
// its report: the header, a line per run in the order they ran, the ratio,
// then the table of the step's convolutions beside the FMA peaks.
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
	if _, oneDNN := graph.ConvBackend(); oneDNN {
		want = append(want, regexp.MustCompile(`^FMA peak \(float32, 8 lanes\): one core [0-9.]+ GFLOP/s; [0-9]+ cores at once [0-9.]+ GFLOP/s each$`))
		if loops.FMAPeak(16, time.Millisecond) > 0 {
			want = append(want, regexp.MustCompile(`^FMA peak \(float32, 16 lanes\): `))
		}
		want = append(want,
			regexp.MustCompile(`^convolutions of the step, batch 8, 1 thread: forward \+ gradients`),
			regexp.MustCompile(`^shape +layers +ms step +ms oneDNN +GF/s step +GF/s oneDNN +%peak +implementations$`))
		// The model's 8 shapes, most of the step's work first, with their layers and
		// the three primitives' implementations: the stem's has no
		// backward-data, as nothing asks for the image's gradient.
		three, stem := `\S+:\S+/\S+:\S+/\S+:\S+`, `\S+:\S+/-/\S+:\S+`
		for _, r := range []struct{ shape, layers, impls string }{
			{`[8,14,14,16]*[3,3,16,16] stride 1x1 dilation 1x1 pad 1,1 -> [8,14,14,16]`, "4", three},
			{`[8,4,4,64]*[3,3,64,64] stride 1x1 dilation 1x1 pad 1,1 -> [8,4,4,64]`, "3", three},
			{`[8,7,7,32]*[3,3,32,32] stride 1x1 dilation 1x1 pad 1,1 -> [8,7,7,32]`, "3", three},
			{`[8,14,14,16]*[3,3,16,32] stride 2x2 dilation 1x1 pad 0,0 -> [8,7,7,32]`, "1", three},
			{`[8,7,7,32]*[3,3,32,64] stride 2x2 dilation 1x1 pad 1,1 -> [8,4,4,64]`, "1", three},
			{`[8,7,7,32]*[1,1,32,64] stride 2x2 dilation 1x1 pad 0,0 -> [8,4,4,64]`, "1", three},
			{`[8,28,28,1]*[3,3,1,16] stride 2x2 dilation 1x1 pad 0,0 -> [8,14,14,16]`, "1", stem},
			{`[8,14,14,16]*[1,1,16,32] stride 2x2 dilation 1x1 pad 0,0 -> [8,7,7,32]`, "1", three},
		} {
			want = append(want, regexp.MustCompile(`^`+regexp.QuoteMeta(r.shape)+` +`+r.layers+`( +[0-9.]+){4} +[0-9]+%  `+r.impls+`$`))
		}
		want = append(want, regexp.MustCompile(`^all convolutions of a step +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+%$`))
	} else {
		want = append(want, regexp.MustCompile(`^no oneDNN convolutions to time: float32 convolutions run on im2col`))
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
