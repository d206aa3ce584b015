package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// MultiHeadAttentionLayer is multi-head scaled dot-product attention (keras
// layers.MultiHeadAttention, torch nn.MultiheadAttention): the query, key
// and value are projected to heads·keyDim features, split into heads, each
// head attends with softmax(q·kᵀ/√keyDim)·v, and the heads are joined and
// projected back to the query's width. Create it with MultiHeadAttention.
//
// Call is self-attention (query, key and value are x), so the layer chains
// in a Sequential; its three projections run as one product, whose heads
// graph.SelfAttention attends in place (the composed ops, with transposes,
// when attention dropout is on while training). Attend takes a
// separate key and value (cross-attention).
//
// Its kernels are 2-D: query/kernel, key/kernel and value/kernel
// [width, heads·keyDim], output/kernel [heads·keyDim, width], where Keras
// keeps [width, heads, keyDim]; the values are the same, in the same order.
type MultiHeadAttentionLayer struct {
	layerBase
	heads, keyDim int
	causal        bool
	rate          float64
	useB          bool
	init          Initializer
	q, k, v, o    *Variable // kernels; nil until built
	qb, kb, vb    *Variable // biases; nil until built or without bias
	ob            *Variable
	drop          dropState
}

// WithCausalMask makes MultiHeadAttention attend from each position to
// itself and earlier positions only (Keras's use_causal_mask), as a
// language model must.
func WithCausalMask() LayerOption {
	return option("WithCausalMask", func(c *layerConfig) { c.causal = true })
}

// AttentionDropout sets the fraction of attention weights
// MultiHeadAttention drops while training (Keras's dropout argument;
// default 0). It panics if rate is outside [0, 1).
func AttentionDropout(rate float64) LayerOption {
	if !(rate >= 0 && rate < 1) {
		panic(usageError("AttentionDropout: want a rate in [0, 1), got %v", rate))
	}
	return option("AttentionDropout", func(c *layerConfig) { c.rate = rate }, rate)
}

// MultiHeadAttention returns an attention layer with the given number of
// heads of keyDim features each, named multi_head_attention, ... Options:
// Named, WithCausalMask, AttentionDropout, WithSeed (of the dropout),
// WithoutBias (no bias in the four projections), KernelInitializer (of the
// four kernels; Glorot uniform by default). It panics if heads or keyDim is
// < 1, or on an option it does not take.
func MultiHeadAttention(heads, keyDim int, opts ...LayerOption) *MultiHeadAttentionLayer {
	if heads < 1 || keyDim < 1 {
		panic(usageError("MultiHeadAttention: want heads ≥ 1 and keyDim ≥ 1, got %d and %d", heads, keyDim))
	}
	var c layerConfig
	c.apply("MultiHeadAttention", opts, "Named", "WithCausalMask", "AttentionDropout", "WithSeed", "WithoutBias", "KernelInitializer")
	if c.name == "" {
		c.name = strategy.UniqueName("multi_head_attention")
	}
	return &MultiHeadAttentionLayer{layerBase: newBase(c.name), heads: heads, keyDim: keyDim, causal: c.causal, rate: c.rate,
		useB: !c.noBias, init: c.init, drop: dropState{seed: c.seed, seeded: c.has("WithSeed")}}
}

// Heads returns the number of heads.
func (l *MultiHeadAttentionLayer) Heads() int { return l.heads }

// KeyDim returns the features of each head.
func (l *MultiHeadAttentionLayer) KeyDim() int { return l.keyDim }

// Built reports whether the layer has its variables.
func (l *MultiHeadAttentionLayer) Built() bool { return l.q != nil }

// Build creates the four projections for inputs [batch, time, width]
// (query, key and value of that width). It panics unless the shape has
// rank 3 and width ≥ 1.
func (l *MultiHeadAttentionLayer) Build(inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) != 3 || inputShape[2] < 1 {
		panic(shapeError("%s: want input shape [batch, time, width], got %v", l.name, inputShape))
	}
	c, hd := inputShape[2], l.heads*l.keyDim
	l.checkAlloc("query/kernel", []int{c, hd})
	kernel := func(name string, shape []int) *Variable {
		return l.newWeight(name, shape, initial(l.init, GlorotUniformInit{}, l.name+"/"+name, shape))
	}
	l.q = kernel("query/kernel", []int{c, hd})
	l.k = kernel("key/kernel", []int{c, hd})
	l.v = kernel("value/kernel", []int{c, hd})
	l.o = kernel("output/kernel", []int{hd, c})
	if l.useB {
		l.qb = l.newWeight("query/bias", []int{hd}, nil)
		l.kb = l.newWeight("key/bias", []int{hd}, nil)
		l.vb = l.newWeight("value/bias", []int{hd}, nil)
		l.ob = l.newWeight("output/bias", []int{c}, nil)
	}
	if l.rate > 0 {
		l.drop.build(&l.layerBase)
	}
}

// OutputShape returns the input shape: the output has the query's width.
func (l *MultiHeadAttentionLayer) OutputShape(in []int) []int { return append([]int(nil), in...) }

// Call returns the self-attention of x [batch, time, width], building the
// layer on the first call. It panics with an error wrapping ErrShape,
// naming the layer, if x is not rank 3 or its width differs from the one
// the layer was built for.
func (l *MultiHeadAttentionLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := l.check(x, "x")
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	b, t, c := shape[0], shape[1], shape[2]
	// One product for the three projections: [b·t, c] × [c, 3·hd].
	w := graph.Concat(1, g.Var(l.q), g.Var(l.k), g.Var(l.v))
	var bias *Tensor
	if l.useB {
		bias = graph.Concat(0, g.Var(l.qb), g.Var(l.kb), g.Var(l.vb))
	}
	qkv := graph.Dense(graph.Reshape(x, b*t, c), w, bias, graph.Linear)
	if !training || l.rate == 0 {
		// The heads are read and written in place in qkv and the output,
		// without the transposes below.
		y := graph.SelfAttention(graph.Reshape(qkv, b, t, 3*l.heads*l.keyDim), l.heads, l.causal)
		return l.project(g, graph.Reshape(y, b*t, l.heads*l.keyDim), b, t, c)
	}
	// [b, t, 3, heads, keyDim] → [3, b, heads, t, keyDim]: q, k and v.
	qkv = graph.Transpose(graph.Reshape(qkv, b, t, 3, l.heads, l.keyDim), 2, 0, 3, 1, 4)
	parts := graph.Split(qkv, 0, 1, 1, 1)
	for i := range parts {
		parts[i] = graph.Reshape(parts[i], b, l.heads, t, l.keyDim)
	}
	return l.output(ctx, g, parts[0], parts[1], parts[2], b, t, c, training)
}

// Attend returns the attention of query [batch, tq, width] over key and
// value [batch, tk, width] (key nil: value, as Keras's call(query, value)).
// With WithCausalMask, query position i attends to key positions up to
// i + tk - tq. It panics with an error wrapping ErrShape, naming the layer
// and the input, on shapes that do not fit.
func (l *MultiHeadAttentionLayer) Attend(ctx *strategy.ReplicaContext, query, value, key *Tensor, training bool) *Tensor {
	if key == nil {
		key = value
	}
	qs := l.check(query, "query")
	vs := l.check(value, "value")
	ks := l.check(key, "key")
	if vs[0] != qs[0] || ks[0] != qs[0] || vs[1] != ks[1] {
		panic(shapeError("%s: want query, key and value of one batch and key and value of one length, got %v, %v and %v", l.name, qs, ks, vs))
	}
	g := graphOf(ctx, query)
	restore := g.SetScope(l.name)
	defer restore()
	b, tq, tk, c := qs[0], qs[1], ks[1], qs[2]
	project := func(x *Tensor, w, bias *Variable, t int) *Tensor {
		var bn *Tensor
		if bias != nil {
			bn = g.Var(bias)
		}
		y := graph.Dense(graph.Reshape(x, b*t, c), g.Var(w), bn, graph.Linear)
		return graph.Transpose(graph.Reshape(y, b, t, l.heads, l.keyDim), 0, 2, 1, 3)
	}
	q := project(query, l.q, l.qb, tq)
	k := project(key, l.k, l.kb, tk)
	v := project(value, l.v, l.vb, tk)
	return l.output(ctx, g, q, k, v, b, tq, c, training)
}

// check builds the layer for x's shape if needed and panics unless x is
// [batch, time, width] of the built width.
func (l *MultiHeadAttentionLayer) check(x *Tensor, what string) []int {
	shape := checkInput(l.name+": "+what, x, 3, "[batch, time, width]")
	l.Build(shape)
	if want := l.q.Shape()[0]; shape[2] != want {
		panic(shapeError("%s: want %s of width %d, got %v", l.name, what, want, shape))
	}
	return shape
}

// output attends with q, k, v [b, heads, t, keyDim], joins the heads and
// projects them to [b, tq, c].
func (l *MultiHeadAttentionLayer) output(ctx *strategy.ReplicaContext, g *graph.Graph, q, k, v *Tensor, b, tq, c int, training bool) *Tensor {
	var y *Tensor
	if training && l.rate > 0 {
		counter, stream := l.drop.step(ctx, g, l.name)
		y = graph.AttentionDropout(q, k, v, l.causal, counter, l.rate, l.drop.seed, stream)
	} else {
		y = graph.Attention(q, k, v, l.causal)
	}
	y = graph.Reshape(graph.Transpose(y, 0, 2, 1, 3), b*tq, l.heads*l.keyDim)
	return l.project(g, y, b, tq, c)
}

// project applies the output projection to the joined heads y
// [b·tq, heads·keyDim], giving [b, tq, c].
func (l *MultiHeadAttentionLayer) project(g *graph.Graph, y *Tensor, b, tq, c int) *Tensor {
	var ob *Tensor
	if l.ob != nil {
		ob = g.Var(l.ob)
	}
	return graph.Reshape(graph.Dense(y, g.Var(l.o), ob, graph.Linear), b, tq, c)
}

// Variables returns the kernels, biases and dropout counter (once built).
func (l *MultiHeadAttentionLayer) Variables() []*Variable {
	return nonNil(l.q, l.qb, l.k, l.kb, l.v, l.vb, l.o, l.ob, l.drop.counter)
}

// TrainableVariables returns the trainable ones of Variables.
func (l *MultiHeadAttentionLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes the projections.
func (l *MultiHeadAttentionLayer) SetTrainable(t bool) {
	l.setTrainable(t, l.q, l.qb, l.k, l.kb, l.v, l.vb, l.o, l.ob)
}
