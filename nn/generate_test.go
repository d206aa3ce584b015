package nn_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/nn"
)

// TestGenerator samples from a bigram model (an embedding whose row i holds
// the logits of the token after i) whose table says "i is followed by
// i+1": greedy decoding walks the cycle, past the context's length; top-1
// sampling is greedy; a seed repeats its text; a prompt token outside the
// vocabulary is an error naming it.
func TestGenerator(t *testing.T) {
	const vocab = 5
	s := newStrategy(t)
	var bigram *nn.EmbeddingLayer
	s.Scope(func() { bigram = nn.Embedding(vocab, vocab); bigram.Build(nil) })
	table := make([]float64, vocab*vocab)
	for i := range vocab {
		table[i*vocab+(i+1)%vocab] = 4 // likely, not certain: sampling may stray
	}
	bigram.Table().Assign(table)
	gen := nn.NewGenerator(bigram, 3)

	got, err := gen.Generate([]int{2}, 7, nn.Temperature(0))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 4, 0, 1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("greedy: %v, want %v", got, want)
	}
	if top1, _ := gen.Generate([]int{0, 1}, 6, nn.TopK(1), nn.SampleSeed(3)); !slices.Equal(top1, []int{2, 3, 4, 0, 1, 2}) {
		t.Errorf("top-1: %v, want the greedy walk from 1", top1)
	}
	a, _ := gen.Generate([]int{1}, 40, nn.SampleSeed(9))
	b, _ := gen.Generate([]int{1}, 40, nn.SampleSeed(9))
	c, _ := gen.Generate([]int{1}, 40, nn.SampleSeed(10), nn.Temperature(3))
	if !slices.Equal(a, b) {
		t.Errorf("seed 9 twice: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seed 9 and seed 10 at temperature 3 gave the same 40 tokens %v", a)
	}
	strays := 0
	for i, id := range a {
		prev := 1
		if i > 0 {
			prev = a[i-1]
		}
		if id != (prev+1)%vocab {
			strays++
		}
	}
	// Each step follows the cycle with probability e⁴/(e⁴+4) ≈ 0.93.
	if strays > 12 {
		t.Errorf("%d of 40 sampled tokens left the cycle: %v", strays, a)
	}

	_, err = gen.Generate([]int{1, 7}, 3)
	if !errors.Is(err, nn.ErrUsage) || err.Error() != "nn: Generate: prompt token 1 is 7, outside the model's vocabulary [0, 5)" {
		t.Errorf("a token outside the vocabulary: %v", err)
	}
	if _, err := gen.Generate(nil, 3); !errors.Is(err, nn.ErrUsage) {
		t.Errorf("an empty prompt: %v", err)
	}
}

// TestBuildThenGenerate: a model of one's own, built by nn.Build inside the
// scope, generates before any Run; outside the scope Build says where to
// call it.
func TestBuildThenGenerate(t *testing.T) {
	s := newStrategy(t)
	var m *residualMLP
	s.Scope(func() { m = newResidualMLP(4, 8) })
	err, _ := panics(func() { nn.Build(m, 1, 4) }).(error)
	if !errors.Is(err, nn.ErrUsage) || err.Error() != "nn: Build: residualMLP: call it inside the strategy's Scope, where its variables belong: s.Scope(func() { nn.Build(model, 1, 4) })" {
		t.Errorf("Build outside the scope: %v", err)
	}
	s.Scope(func() { nn.Build(m, 1, 4) })
	if n := len(m.Variables()); n != 4 {
		t.Fatalf("%d variables after Build, want 4", n)
	}
	var bigram *nn.EmbeddingLayer
	s.Scope(func() { bigram = nn.Embedding(3, 3); nn.Build(bigram, 1, 2) })
	if _, err := nn.NewGenerator(bigram, 2).Generate([]int{1}, 3); err != nil {
		t.Errorf("Generate after Build: %v", err)
	}
}
