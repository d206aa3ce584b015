package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// EmbeddingLayer maps integer ids to rows of a trainable table [vocab, dim]
// (keras layers.Embedding). Create it with Embedding.
type EmbeddingLayer struct {
	layerBase
	vocab, dim int
	table      *Variable // nil until built
}

// Embedding returns an embedding layer for ids in [0, vocab) and vectors of
// width dim, named embedding, embedding_1, ... unless Named. It panics if
// vocab or dim is < 1 or on an option other than Named.
func Embedding(vocab, dim int, opts ...LayerOption) *EmbeddingLayer {
	if vocab < 1 || dim < 1 {
		panic(usageError("Embedding: want vocab ≥ 1 and dim ≥ 1, got %d and %d", vocab, dim))
	}
	var c layerConfig
	c.apply("Embedding", opts, "Named")
	if c.name == "" {
		c.name = strategy.UniqueName("embedding")
	}
	return &EmbeddingLayer{layerBase: newBase(c.name), vocab: vocab, dim: dim}
}

// Built reports whether the layer has its table.
func (l *EmbeddingLayer) Built() bool { return l.table != nil }

// Build creates the table, uniform in ±0.05 as Keras initializes it.
func (l *EmbeddingLayer) Build([]int) {
	if l.Built() {
		return
	}
	l.checkAlloc("embeddings", []int{l.vocab, l.dim})
	rng := initStream(l.name + "/embeddings")
	init := make([]float64, l.vocab*l.dim)
	for i := range init {
		init[i] = (2*rng.Float64() - 1) * 0.05
	}
	l.table = l.newWeight("embeddings", []int{l.vocab, l.dim}, init)
}

// OutputShape returns the input shape with dim appended.
func (l *EmbeddingLayer) OutputShape(in []int) []int { return append(append([]int(nil), in...), l.dim) }

// Call returns the rows of the table for the ids in x (any shape, ids as
// values), shape x.shape + [dim]. Its gradient sums into the rows read. An id
// outside [0, vocab) makes the step fail with an error naming it
// (graph.IndexError). It panics with ErrUsage if x is nil.
func (l *EmbeddingLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	if x == nil {
		panic(usageError("%s: want an input tensor, got nil", l.name))
	}
	l.Build(x.Shape())
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	return graph.Gather(g.Var(l.table), x)
}

// Variables returns the table (once built).
func (l *EmbeddingLayer) Variables() []*Variable { return nonNil(l.table) }

// TrainableVariables returns the table unless frozen.
func (l *EmbeddingLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes the table.
func (l *EmbeddingLayer) SetTrainable(t bool) { l.setTrainable(t, l.table) }

// Table returns the embedding table variable [vocab, dim], nil before Build.
func (l *EmbeddingLayer) Table() *Variable { return l.table }
