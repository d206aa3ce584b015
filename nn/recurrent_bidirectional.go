package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// MergeMode is how Bidirectional joins its two directions' outputs.
type MergeMode int

const (
	// MergeConcat concatenates forward and backward along the last axis
	// (2·units wide): Keras's default.
	MergeConcat MergeMode = iota
	// MergeSum adds them.
	MergeSum
	// MergeMul multiplies them elementwise.
	MergeMul
	// MergeAverage averages them.
	MergeAverage
)

var mergeNames = [...]string{"concat", "sum", "mul", "ave"}

// String returns Keras's name of the mode: concat, sum, mul or ave.
func (m MergeMode) String() string {
	if m >= 0 && int(m) < len(mergeNames) {
		return mergeNames[m]
	}
	return fmt.Sprintf("MergeMode(%d)", int(m))
}

// Merge sets how Bidirectional joins its directions (MergeConcat by
// default). It panics on an unknown mode.
func Merge(mode MergeMode) LayerOption {
	if mode < MergeConcat || mode > MergeAverage {
		panic(usageError("Merge: want MergeConcat, MergeSum, MergeMul or MergeAverage, got %v", mode))
	}
	return option("Merge", func(c *layerConfig) { c.rnn.merge = mode }, mode)
}

// BidirectionalLayer runs a recurrent layer forwards and a copy of it
// backwards over the same input and merges their outputs (keras
// layers.Bidirectional, torch's bidirectional=True). Create it with
// Bidirectional.
type BidirectionalLayer struct {
	layerBase
	fwd, bwd direction
	merge    MergeMode
}

// Bidirectional wraps layer (an LSTM or GRU, not built yet), named
// bidirectional, bidirectional_1, ...: the layer becomes the forward
// direction, renamed NAME/forward_LAYER, and an unbuilt copy of it reading
// backwards NAME/backward_LAYER, so their variables are
// bidirectional/forward_gru/kernel, ... The two directions' outputs are
// concatenated on the last axis (Keras's merge_mode="concat"), or merged
// as Merge says; with ReturnSequences the backward outputs are put back in
// time order first. Options: Named, Merge.
//
// It panics with an error wrapping ErrUsage if layer is nil, already
// built, reads backwards, or is itself a Bidirectional, or on an option it
// does not take.
func Bidirectional(layer RecurrentLayer, opts ...LayerOption) *BidirectionalLayer {
	var c layerConfig
	c.apply("Bidirectional", opts, "Named", "Merge")
	d, ok := layer.(direction)
	if !ok {
		panic(usageError("Bidirectional: want an LSTM or GRU layer, got %T", layer))
	}
	base := d.base()
	if base.Built() || base.goBackwards {
		panic(usageError("Bidirectional: want a layer neither built nor reading backwards, got %s (built %v, backwards %v)",
			base.name, base.Built(), base.goBackwards))
	}
	if c.name == "" {
		c.name = strategy.UniqueName("bidirectional")
	}
	inner := base.name
	base.name = c.name + "/forward_" + inner
	return &BidirectionalLayer{layerBase: newBase(c.name), fwd: d,
		bwd: d.twin(c.name+"/backward_"+inner, true), merge: c.rnn.merge}
}

// Forward returns the forward layer.
func (l *BidirectionalLayer) Forward() RecurrentLayer { return l.fwd }

// Backward returns the backward layer.
func (l *BidirectionalLayer) Backward() RecurrentLayer { return l.bwd }

// Merge returns how the directions' outputs are joined.
func (l *BidirectionalLayer) Merge() MergeMode { return l.merge }

// Build builds both directions for inputs [batch, time, features].
func (l *BidirectionalLayer) Build(inputShape []int) {
	l.fwd.Build(inputShape)
	l.bwd.Build(inputShape)
}

// Built reports whether both directions have their variables.
func (l *BidirectionalLayer) Built() bool { return l.fwd.Built() && l.bwd.Built() }

// OutputShape returns the wrapped layer's output shape, its last axis
// doubled by MergeConcat.
func (l *BidirectionalLayer) OutputShape(in []int) []int {
	out := l.fwd.OutputShape(in)
	if l.merge == MergeConcat {
		out[len(out)-1] *= 2
	}
	return out
}

// Call returns the merged outputs of both directions over x [batch, time,
// features], from zero initial states.
func (l *BidirectionalLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	y, _ := l.CallWithState(ctx, x, nil, nil, training)
	return y
}

// CallWithState is Call with a mask [batch, time] and initial states (the
// forward layer's, then the backward layer's: [h_fwd, h_bwd] for GRU,
// [h_fwd, c_fwd, h_bwd, c_bwd] for LSTM; nil: zeros), and returns the
// final states in that order too, as Keras's Bidirectional does. With a
// mask and ReturnSequences, a masked step outputs zeros in both directions
// (Keras sets zero_output_for_mask on both); otherwise masked steps behave
// as GRULayer.CallWithState says. It panics with an error wrapping ErrShape
// or ErrUsage, naming the layer, if the mask or the initial states do not
// fit.
func (l *BidirectionalLayer) CallWithState(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, training bool) (*Tensor, []*Tensor) {
	var fi, bi []*Tensor
	if initial != nil {
		n := l.fwd.base().states
		if len(initial) != 2*n {
			panic(usageError("%s: want %d initial states (forward's, then backward's), got %d", l.name, 2*n, len(initial)))
		}
		fi, bi = initial[:n], initial[n:]
	}
	seq := l.fwd.base().returnSeq
	fo, fs := l.fwd.unroll(ctx, x, mask, fi, seq)
	bo, bs := l.bwd.unroll(ctx, x, mask, bi, seq)
	states := append(fs, bs...)
	if !seq {
		// The forward direction ends at the last step, the backward at the first.
		return l.join(fo[len(fo)-1], bo[0]), states
	}
	// Both sequences in time order, [batch, time, units], merged by one op.
	return l.join(graph.Stack(1, fo...), graph.Stack(1, bo...)), states
}

// join merges a forward and a backward output.
func (l *BidirectionalLayer) join(f, b *Tensor) *Tensor {
	switch l.merge {
	case MergeSum:
		return graph.Add(f, b)
	case MergeMul:
		return graph.Mul(f, b)
	case MergeAverage:
		return graph.Scale(graph.Add(f, b), 0.5)
	}
	return graph.Concat(-1, f, b)
}

// Variables returns the forward layer's variables, then the backward's.
func (l *BidirectionalLayer) Variables() []*Variable {
	return append(l.fwd.Variables(), l.bwd.Variables()...)
}

// TrainableVariables returns the trainable ones of Variables.
func (l *BidirectionalLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes both directions.
func (l *BidirectionalLayer) SetTrainable(t bool) {
	l.frozen = !t
	l.fwd.SetTrainable(t)
	l.bwd.SetTrainable(t)
}
