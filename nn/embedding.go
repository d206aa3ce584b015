package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// EmbeddingLayer maps integer ids to rows of a trainable table [vocab, dim]
// (keras layers.Embedding). Create it with Embedding.
type EmbeddingLayer struct{ tableLayer }

// tableLayer is what Embedding and PositionEmbedding share: a trainable
// table [rows, dim], made lazily.
type tableLayer struct {
	layerBase
	rows, dim int
	init      Initializer // nil: uniform in ±0.05
	table     *Variable   // nil until built
}

// newTableLayer checks the sizes for the constructor ctor, whose row count
// is called rowsName, and applies the options (Named, KernelInitializer);
// base is the name to make unique when none is given.
func newTableLayer(ctor, base, rowsName string, rows, dim int, opts []LayerOption) tableLayer {
	if rows < 1 || dim < 1 {
		panic(usageError("%s: want %s ≥ 1 and dim ≥ 1, got %d and %d", ctor, rowsName, rows, dim))
	}
	var c layerConfig
	c.apply(ctor, opts, "Named", "KernelInitializer")
	if c.name == "" {
		c.name = strategy.UniqueName(base)
	}
	return tableLayer{layerBase: newBase(c.name), rows: rows, dim: dim, init: c.init}
}

// Embedding returns an embedding layer for ids in [0, vocab) and vectors of
// width dim, named embedding, embedding_1, ... unless Named. Options: Named,
// KernelInitializer (of the table). It panics if vocab or dim is < 1 or on
// an option it does not take.
func Embedding(vocab, dim int, opts ...LayerOption) *EmbeddingLayer {
	return &EmbeddingLayer{newTableLayer("Embedding", "embedding", "vocab", vocab, dim, opts)}
}

// Built reports whether the layer has its table.
func (l *tableLayer) Built() bool { return l.table != nil }

// Build creates the table, uniform in ±0.05 as Keras initializes an
// embedding unless KernelInitializer gave another initializer.
func (l *tableLayer) Build([]int) {
	if l.Built() {
		return
	}
	shape := []int{l.rows, l.dim}
	l.checkAlloc("embeddings", shape)
	l.table = l.newWeight("embeddings", shape, initial(l.init, uniformInit{0.05}, l.name+"/embeddings", shape))
}

// uniformInit draws uniformly from ±limit.
type uniformInit struct{ limit float64 }

func (u uniformInit) Initial(name string, shape []int) []float64 {
	return u.values(name, elements(shape))
}

// values returns n values drawn uniformly from ±limit, from the stream for
// name.
func (u uniformInit) values(name string, n int) []float64 {
	rng := initStream(name)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = (2*rng.Float64() - 1) * u.limit
	}
	return vals
}

// Variables returns the table (once built).
func (l *tableLayer) Variables() []*Variable { return nonNil(l.table) }

// TrainableVariables returns the table unless frozen.
func (l *tableLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes the table.
func (l *tableLayer) SetTrainable(t bool) { l.setTrainable(t, l.table) }

// Table returns the table variable [rows, dim] (Embedding's [vocab, dim],
// PositionEmbedding's [maxLen, dim]), nil before Build.
func (l *tableLayer) Table() *Variable { return l.table }

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

// Attend returns x·tableᵀ, the scores of every id for each vector of x
// [..., dim], shape [..., vocab]: the layer used again as the output layer
// of a language model whose output weights are tied to its input embedding
// (GPT-2's lm_head). The table is one variable read twice, so its gradient
// is the sum of the lookup's and Attend's, and VariablesOf lists it once.
// It builds the table if Call has not.
//
// It panics with an error wrapping ErrShape if x has rank below 2 or a last
// axis other than dim.
func (l *EmbeddingLayer) Attend(ctx *strategy.ReplicaContext, x *Tensor) *Tensor {
	if x == nil {
		panic(usageError("%s: Attend: want an input tensor, got nil", l.name))
	}
	shape := x.Shape()
	last := len(shape) - 1
	if len(shape) < 2 || shape[last] != l.dim {
		panic(shapeError("%s: Attend: want input shape [batch, ..., %d], got %v", l.name, l.dim, shape))
	}
	l.Build(nil)
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	rows := x.Len() / l.dim
	out := append(append([]int(nil), shape[:last]...), l.rows)
	return graph.Reshape(graph.MatMulT(graph.Reshape(x, rows, l.dim), g.Var(l.table), false, true), out...)
}

// PositionEmbeddingLayer is a trainable table [maxLen, dim] of position
// vectors (keras_nlp's PositionEmbedding, GPT-2's wpe): for a sequence of T
// steps it returns rows 0..T-1, which a model adds to its token embeddings.
// Create it with PositionEmbedding.
type PositionEmbeddingLayer struct{ tableLayer }

// PositionEmbedding returns a position embedding for sequences of up to
// maxLen steps and vectors of width dim, named position_embedding,
// position_embedding_1, ... unless Named. Its table starts uniform in
// ±0.05, as Embedding's, unless KernelInitializer says otherwise. It panics
// if maxLen or dim is < 1 or on an option it does not take.
func PositionEmbedding(maxLen, dim int, opts ...LayerOption) *PositionEmbeddingLayer {
	return &PositionEmbeddingLayer{newTableLayer("PositionEmbedding", "position_embedding", "maxLen", maxLen, dim, opts)}
}

// OutputShape returns [T, dim] for an input [batch, T] or [batch, T, dim].
func (l *PositionEmbeddingLayer) OutputShape(in []int) []int {
	if len(in) < 2 {
		return []int{l.dim}
	}
	return []int{in[1], l.dim}
}

// Call returns the table's rows 0..T-1, shape [T, dim], for x of shape
// [batch, T] (token ids) or [batch, T, dim] (token embeddings); only x's
// shape matters. The rows are the same for every example, so the result has
// no batch axis; adding it to [batch, T, dim] broadcasts it over the batch.
// Its gradient sums into the rows read.
//
// It panics with an error wrapping ErrShape if x has rank below 2 or 3 with
// a last axis other than dim, or T is more than maxLen.
func (l *PositionEmbeddingLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	if x == nil {
		panic(usageError("%s: want an input tensor, got nil", l.name))
	}
	shape := x.Shape()
	if len(shape) < 2 || len(shape) > 3 || (len(shape) == 3 && shape[2] != l.dim) {
		panic(shapeError("%s: want input shape [batch, steps] or [batch, steps, %d], got %v", l.name, l.dim, shape))
	}
	t := shape[1]
	if t > l.rows {
		panic(shapeError("%s: sequence of %d longer than the table's %d positions", l.name, t, l.rows))
	}
	l.Build(shape)
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	table := g.Var(l.table)
	if t == l.rows {
		return table
	}
	return graph.Slice(table, 0, 0, t)
}

// MaxLen returns the longest sequence the table covers.
func (l *PositionEmbeddingLayer) MaxLen() int { return l.rows }
