package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBenchGPT trains a tiny GPT on a tiny generated text with the bench's
// command line and checks its report: an estimate every --eval-every
// iterations in torch_gpt.py's form, the summary line last, and a
// validation loss that fell.
func TestBenchGPT(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.txt")
	// A text a small model learns quickly: words from a short list in a
	// fixed, repeating order.
	words := []string{"to ", "be ", "or ", "not ", "to ", "be, ", "that ", "is ", "the ", "question.\n"}
	var b strings.Builder
	for i := 0; b.Len() < 3000; i++ {
		b.WriteString(words[i%len(words)])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"gpt", "--data", path, "--iters", "200", "--batch", "4", "--replicas", "2", "--threads", "1",
		"--eval-every", "50", "--eval-iters", "3", "--layers", "1", "--heads", "2", "--embd", "16", "--block", "8"}
	if err := runBench(args, &out, &errOut); err != nil {
		t.Fatalf("gotrain bench %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	evalLine := regexp.MustCompile(`^iter (\d+): train loss ([0-9.]+), val loss ([0-9.]+), train time [0-9.]+ s$`)
	last := regexp.MustCompile(`^gotrain gpt: (\d+) params, replicas 2, threads 1: [0-9.]+ tokens/s, [0-9.]+ ms/iter, train loss ([0-9.]+), val loss ([0-9.]+), \d+ s$`)
	if len(lines) != 6 {
		t.Fatalf("got %d lines, want 5 estimates and a summary:\n%s", len(lines), out.String())
	}
	var val []float64
	for i, l := range lines[:5] {
		m := evalLine.FindStringSubmatch(l)
		if m == nil || m[1] != strconv.Itoa(50*i) {
			t.Fatalf("line %d = %q, want the estimate after %d iterations", i, l, 50*i)
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		val = append(val, v)
	}
	m := last.FindStringSubmatch(lines[5])
	if m == nil {
		t.Fatalf("last line = %q, want the summary", lines[5])
	}
	// 1 block of width 16 over the text's 16 characters: embeddings 16·16 +
	// 8·16, the block's two scales 2·16, attention 4·16·16, MLP 2·16·64, the
	// last scale 16.
	if want := strconv.Itoa(16*16 + 8*16 + 2*16 + 4*16*16 + 2*16*64 + 16); m[1] != want {
		t.Errorf("params %s, want %s", m[1], want)
	}
	if m[3] != strconv.FormatFloat(val[4], 'f', 4, 64) {
		t.Errorf("summary val loss %s, want the last estimate's %.4f", m[3], val[4])
	}
	if !(val[4] < val[0]-0.5) {
		t.Errorf("val loss went from %.4f to %.4f, want it to fall by more than 0.5", val[0], val[4])
	}
}

func TestBenchGPTErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"gpt"}, "--data: want the path of a text file"},
		{[]string{"gpt", "--data", "/nonexistent/text.txt"}, "no such file"},
		{[]string{"gpt", "--data", "x", "--dtype", "f16"}, `--dtype: want f32 or f64, got "f16"`},
		{[]string{"gpt", "--data", "x", "--replicas", "0"}, "want --replicas ≥ 1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runBench(tt.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
