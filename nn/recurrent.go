package nn

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// recurrentConfig holds the options of LSTM, GRU and Bidirectional.
type recurrentConfig struct {
	returnSeq   bool
	goBackwards bool
	dropout     float64 // RecurrentDropout's rate; refused above 0
	merge       MergeMode
}

// ReturnSequences makes LSTM or GRU return its output at every step,
// [batch, time, units], instead of the last step's [batch, units] (Keras's
// return_sequences=True).
func ReturnSequences() LayerOption {
	return option("ReturnSequences", func(c *layerConfig) { c.rnn.returnSeq = true })
}

// GoBackwards makes LSTM or GRU read its input from the last step to the
// first; with ReturnSequences, the outputs come in that order too, as
// Keras's go_backwards does. Bidirectional sets it on its backward copy.
func GoBackwards() LayerOption {
	return option("GoBackwards", func(c *layerConfig) { c.rnn.goBackwards = true })
}

// RecurrentDropout is Keras's recurrent_dropout: LSTM and GRU accept a
// rate of 0 and refuse any other with an error wrapping ErrUsage, because
// they do not implement it: drop the input or the output with a Dropout
// layer instead. It panics if rate is outside [0, 1).
func RecurrentDropout(rate float64) LayerOption {
	if !(rate >= 0 && rate < 1) {
		panic(usageError("RecurrentDropout: want a rate in [0, 1), got %v", rate))
	}
	return option("RecurrentDropout", func(c *layerConfig) { c.rnn.dropout = rate }, rate)
}

// recurrentOptions are the options LSTM and GRU take.
var recurrentOptions = []string{"Named", "ReturnSequences", "GoBackwards", "RecurrentDropout", "KernelInitializer"}

// RecurrentLayer is a layer that steps through the time axis of its input
// [batch, time, features] with weights shared by every step: LSTM, GRU and
// Bidirectional implement it.
type RecurrentLayer interface {
	Layer
	// CallWithState is Call with the mask and initial states Keras's call
	// takes, and the final states Keras's return_state adds: see
	// GRULayer.CallWithState.
	CallWithState(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, training bool) (*Tensor, []*Tensor)
}

// direction is a recurrent layer Bidirectional can run: LSTM or GRU.
type direction interface {
	RecurrentLayer
	// unroll returns the output of every step in time order, and the
	// final states; zero makes masked steps output zeros.
	unroll(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, zero bool) ([]*Tensor, []*Tensor)
	// twin returns an unbuilt layer of the same kind and settings named
	// name, reading backwards if backwards (Bidirectional's copy).
	twin(name string, backwards bool) direction
	base() *recurrent
}

// cell is what differs between LSTM and GRU: the gates' weights and one
// step. Every gate's input product runs for all steps at once (project);
// only the recurrent product and the gates' elementwise math run per step.
type cell interface {
	// buildCell creates the weights for inputs of the given width.
	buildCell(in int)
	// project returns x [n, in] times the input kernel plus the input
	// bias: [n, gates·units].
	project(g *graph.Graph, x *Tensor) *Tensor
	// stepper returns the step function, its weights read once for every
	// step of g.
	stepper(g *graph.Graph) stepFunc
}

// stepFunc returns the states after one step from xt [batch, gates·units]
// (project's rows for the step) and the states before; the first state is
// the step's output.
type stepFunc func(xt *Tensor, states []*Tensor) []*Tensor

// recurrent is what LSTM and GRU share: their settings, the checks and the
// unrolling over time.
type recurrent struct {
	layerBase
	units       int
	gates       int // 4 (LSTM) or 3 (GRU)
	states      int // 2 (LSTM: h, c) or 1 (GRU: h)
	returnSeq   bool
	goBackwards bool
	init        Initializer // the input kernel's; nil: Glorot uniform
	in          int         // the input width built for; 0 until built
	// kernel [in, gates·units], recurrentKernel [units, gates·units] and
	// bias (the cell's shape) are nil until built.
	kernel, recurrentKernel, bias *Variable
}

// newRecurrent applies opts for layer (LSTM or GRU) and names it.
func newRecurrent(layer, prefix string, units, gates, states int, opts []LayerOption) recurrent {
	if units < 1 {
		panic(usageError("%s: want at least 1 unit, got %d", layer, units))
	}
	var c layerConfig
	c.apply(layer, opts, recurrentOptions...)
	if c.rnn.dropout > 0 {
		panic(usageError("%s: RecurrentDropout(%v): recurrent dropout is not implemented; "+
			"drop the layer's input or output with nn.Dropout instead", layer, c.rnn.dropout))
	}
	if c.name == "" {
		c.name = strategy.UniqueName(prefix)
	}
	return recurrent{layerBase: newBase(c.name), units: units, gates: gates, states: states,
		returnSeq: c.rnn.returnSeq, goBackwards: c.rnn.goBackwards, init: c.init}
}

// twinOptions returns the options for a copy of the layer named name,
// reading backwards if backwards.
func (l *recurrent) twinOptions(name string, backwards bool) []LayerOption {
	opts := []LayerOption{Named(name)}
	if l.returnSeq {
		opts = append(opts, ReturnSequences())
	}
	if backwards {
		opts = append(opts, GoBackwards())
	}
	if l.init != nil {
		opts = append(opts, KernelInitializer(l.init))
	}
	return opts
}

// Units returns the width of the output and of each state.
func (l *recurrent) Units() int { return l.units }

// Built reports whether the layer has its variables.
func (l *recurrent) Built() bool { return l.in > 0 }

func (l *recurrent) base() *recurrent { return l }

// Variables returns kernel, recurrent_kernel and bias (once built).
func (l *recurrent) Variables() []*Variable { return nonNil(l.kernel, l.recurrentKernel, l.bias) }

// TrainableVariables returns the trainable ones of Variables.
func (l *recurrent) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes the layer's weights.
func (l *recurrent) SetTrainable(t bool) { l.setTrainable(t, l.kernel, l.recurrentKernel, l.bias) }

// Kernel returns the input kernel [features, gates·units], nil before the
// layer is built.
func (l *recurrent) Kernel() *Variable { return l.kernel }

// RecurrentKernel returns the recurrent kernel [units, gates·units], nil
// before the layer is built.
func (l *recurrent) RecurrentKernel() *Variable { return l.recurrentKernel }

// Bias returns the bias (GRU: [2, 3·units]; LSTM: [4·units]), nil before
// the layer is built.
func (l *recurrent) Bias() *Variable { return l.bias }

// OutputShape returns [batch, time, units] with ReturnSequences, else
// [batch, units], for an input [batch, time, features].
func (l *recurrent) OutputShape(in []int) []int {
	if len(in) < 2 {
		return []int{l.units}
	}
	if l.returnSeq {
		return []int{in[0], in[1], l.units}
	}
	return []int{in[0], l.units}
}

// build checks inputShape and creates c's weights once.
func (l *recurrent) build(c cell, inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) != 3 || inputShape[2] < 1 {
		panic(shapeError("%s: want input shape [batch, time, features], got %v", l.name, inputShape))
	}
	l.checkAlloc("kernel", []int{inputShape[2], l.gates * l.units})
	c.buildCell(inputShape[2])
	l.in = inputShape[2]
}

// check builds the layer for x and panics unless x, mask and initial fit:
// x [batch, time, features] of the built width, mask [batch, time],
// initial one [batch, units] per state.
func (l *recurrent) check(c cell, x, mask *Tensor, initial []*Tensor) []int {
	shape := checkInput(l.name, x, 3, "[batch, time, features]")
	l.build(c, shape)
	if shape[2] != l.in || shape[1] < 1 {
		panic(shapeError("%s: want input shape [batch, time ≥ 1, %d], got %v", l.name, l.in, shape))
	}
	checkMask(l.name, x, mask)
	if initial != nil {
		if len(initial) != l.states {
			panic(usageError("%s: want %d initial states, got %d", l.name, l.states, len(initial)))
		}
		for i, s := range initial {
			if s == nil || len(s.Shape()) != 2 || s.Shape()[0] != shape[0] || s.Shape()[1] != l.units {
				got := "nil"
				if s != nil {
					got = fmt.Sprint(s.Shape())
				}
				panic(shapeError("%s: want initial state %d of shape [%d %d] for input %v, got %s", l.name, i, shape[0], l.units, shape, got))
			}
		}
	}
	return shape
}

// checkMask panics unless mask is nil or [batch, time] of x's.
func checkMask(layer string, x, mask *Tensor) {
	if mask == nil {
		return
	}
	xs, ms := x.Shape(), mask.Shape()
	if len(ms) != 2 || ms[0] != xs[0] || ms[1] != xs[1] {
		panic(shapeError("%s: want mask shape [%d %d] (the input's [batch, time]), got %v for input %v", layer, xs[0], xs[1], ms, xs))
	}
}

// unroll runs c over x's steps and returns each step's output in time
// order and the final states. A step whose mask is 0 keeps every state
// and outputs the previous step's output (zeros before the first, as
// Keras does), or zeros if zero.
func (l *recurrent) unroll(ctx *strategy.ReplicaContext, c cell, x, mask *Tensor, initial []*Tensor, zero bool) ([]*Tensor, []*Tensor) {
	shape := l.check(c, x, mask, initial)
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	b, t, f := shape[0], shape[1], shape[2]
	gw := l.gates * l.units
	// The input's product for every step in one gemm, [b·t, f]×[f, gw],
	// then one slice of it per step.
	xs := timeSteps(graph.Reshape(c.project(g, graph.Reshape(x, b*t, f)), b, t, gw), b)
	var ms []*Tensor
	if mask != nil {
		ms = timeSteps(mask, b)
	}
	states := initial
	if states == nil {
		states = make([]*Tensor, l.states)
		for i := range states {
			states[i] = g.Const(0, b, l.units)
		}
	}
	// prev is the last output; with zero initial states it is always the
	// first state, so it needs no nodes of its own.
	var prev *Tensor
	if mask != nil && initial != nil && !zero {
		prev = g.Const(0, b, l.units)
	}
	step := c.stepper(g)
	outs := make([]*Tensor, t)
	for i := range t {
		k := i
		if l.goBackwards {
			k = t - 1 - i
		}
		next := step(xs[k], states)
		out := next[0]
		if mask != nil {
			m := ms[k]
			for j := range next {
				next[j] = keep(states[j], next[j], m)
			}
			switch {
			case zero:
				out = graph.Mul(m, out)
			case prev != nil:
				out = keep(prev, out, m)
				prev = out
			default:
				out = next[0]
			}
		}
		outs[k] = out
		states = next
	}
	return outs, states
}

// keep returns old + m·(new - old): new where the mask m is 1, old (bit
// for bit, with no gradient into new) where it is 0.
func keep(old, new, m *Tensor) *Tensor { return graph.Add(old, graph.Mul(m, graph.Sub(new, old))) }

// timeSteps splits x [b, t, ...] into t tensors [b, ...] (a mask [b, t]
// into t columns [b, 1]). The slices tile x, so their gradient is one
// concatenation.
func timeSteps(x *Tensor, b int) []*Tensor {
	shape := x.Shape()
	t := shape[1]
	rest := []int{b}
	if len(shape) > 2 {
		rest = append(rest, shape[2:]...)
	} else {
		rest = append(rest, 1)
	}
	if t == 1 {
		return []*Tensor{graph.Reshape(x, rest...)}
	}
	ones := make([]int, t)
	for i := range ones {
		ones[i] = 1
	}
	parts := graph.Split(x, 1, ones...)
	for i, p := range parts {
		parts[i] = graph.Reshape(p, rest...)
	}
	return parts
}

// output is outs stacked on the time axis ([batch, time, units]) with
// ReturnSequences, else the last step's: the last in time, or the first
// reading backwards. Reading backwards, the sequence is returned in the
// order read, as Keras's go_backwards does.
func (l *recurrent) output(outs []*Tensor) *Tensor {
	if !l.returnSeq {
		if l.goBackwards {
			return outs[0]
		}
		return outs[len(outs)-1]
	}
	if l.goBackwards {
		rev := make([]*Tensor, len(outs))
		for i, o := range outs {
			rev[len(outs)-1-i] = o
		}
		outs = rev
	}
	return graph.Stack(1, outs...)
}

// gate returns columns [i·units, (i+n)·units) of x [batch, gates·units].
func (l *recurrent) gate(x *Tensor, i, n int) *Tensor {
	return graph.Slice(x, 1, i*l.units, (i+n)*l.units)
}

// orthogonal returns rows·cols values of a matrix [rows, cols] whose rows
// (rows ≤ cols) or columns are orthonormal, from a Gram–Schmidt pass over
// normal draws of the stream for name: Keras's default recurrent kernel
// initializer (Orthogonal, gain 1), which keeps the recurrent product from
// growing or shrinking the state at the start.
func orthogonal(name string, rows, cols int) []float64 {
	r := initStream(name)
	// Orthonormalize the k = min(rows, cols) vectors of length n =
	// max(rows, cols), then lay them out as rows or columns.
	k, n := min(rows, cols), max(rows, cols)
	vs := make([][]float64, k)
	for i := range vs {
		for {
			v := make([]float64, n)
			for j := range v {
				v[j] = r.NormFloat64()
			}
			for _, u := range vs[:i] {
				var d float64
				for j := range v {
					d += v[j] * u[j]
				}
				for j := range v {
					v[j] -= d * u[j]
				}
			}
			var norm float64
			for _, x := range v {
				norm += x * x
			}
			if norm = math.Sqrt(norm); norm > 1e-6 {
				for j := range v {
					v[j] /= norm
				}
				vs[i] = v
				break
			}
		}
	}
	out := make([]float64, rows*cols)
	for i, v := range vs {
		for j, x := range v {
			if rows <= cols {
				out[i*cols+j] = x
			} else {
				out[j*cols+i] = x
			}
		}
	}
	return out
}

// BUG(nn): LSTM and GRU compose each step of graph ops (the recurrent
// product, slices of the gates, sigmoid and tanh, elementwise products);
// there is no fused per-step gate kernel. The profile of gotrain bench rnn
// puts most of a step's time in the product and the gates' transcendental
// functions, which a fused kernel would not remove; it would save the
// slices' copies and the separate elementwise passes.

// BUG(nn): LSTM and GRU refuse recurrent dropout (RecurrentDropout above
// 0), and GRU offers only Keras's reset_after=True.
