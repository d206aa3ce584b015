package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// GRULayer is a gated recurrent unit layer (keras layers.GRU with its
// defaults, torch nn.GRU) over inputs [batch, time, features]. Create it
// with GRU.
//
// Each step computes, from the step's input x and the previous state h,
//
//	z = σ(x·Wz + bz + h·Uz + rz)          update gate
//	r = σ(x·Wr + br + h·Ur + rr)          reset gate
//	n = tanh(x·Wn + bn + r ⊙ (h·Un + rn)) candidate
//	h' = z ⊙ h + (1 - z) ⊙ n
//
// with the reset gate applied after the recurrent product: Keras's
// reset_after=True (its default since Keras 2.3 and TensorFlow 2, and the
// convention of cuDNN and torch.nn.GRU), which is why the recurrent
// product has a bias of its own. Keras's reset_after=False is not offered.
//
// Its variables are kernel [features, 3·units], recurrent_kernel [units,
// 3·units] (columns in Keras's gate order z, r, n) and bias [2, 3·units]
// (row 0 the input's b, row 1 the recurrent product's r), as Keras keeps
// them. torch.nn.GRU keeps the transposes with its gates in the order r, z,
// n: weight_ih_l0 is [Wr; Wz; Wn]ᵀ, bias_ih_l0 is (br, bz, bn) and
// bias_hh_l0 is (rr, rz, rn).
type GRULayer struct{ recurrent }

// GRU returns a GRU layer with the given number of units, named gru,
// gru_1, ... Options: Named, ReturnSequences, GoBackwards,
// KernelInitializer (of kernel; Glorot uniform by default; the recurrent
// kernel is orthogonal, the biases zero, as in Keras), RecurrentDropout (0
// only). Call returns the last step's output [batch, units], or with
// ReturnSequences every step's [batch, time, units]; CallWithState takes a
// mask and an initial state and returns the final state too (Keras's
// return_state).
//
// It panics if units < 1, on an option it does not take, or on a
// recurrent dropout above 0.
func GRU(units int, opts ...LayerOption) *GRULayer {
	return &GRULayer{recurrent: newRecurrent("GRU", "gru", units, 3, 1, opts)}
}

// Build creates the weights for inputs [batch, time, features]. It panics
// with an error wrapping ErrShape unless the shape has rank 3.
func (l *GRULayer) Build(inputShape []int) { l.build(l, inputShape) }

func (l *GRULayer) buildCell(in int) {
	u := l.units
	l.kernel = l.newWeight("kernel", []int{in, 3 * u}, initial(l.init, GlorotUniformInit{}, l.name+"/kernel", []int{in, 3 * u}))
	l.recurrentKernel = l.newWeight("recurrent_kernel", []int{u, 3 * u}, orthogonal(l.name+"/recurrent_kernel", u, 3*u))
	l.bias = l.newWeight("bias", []int{2, 3 * u}, nil)
}

func (l *GRULayer) project(g *graph.Graph, x *Tensor) *Tensor {
	u := l.units
	b := graph.Reshape(graph.Slice(g.Var(l.bias), 0, 0, 1), 3*u)
	return graph.Dense(x, g.Var(l.kernel), b, graph.Linear)
}

func (l *GRULayer) stepper(g *graph.Graph) stepFunc {
	u, uk := l.units, g.Var(l.recurrentKernel)
	rb := graph.Reshape(graph.Slice(g.Var(l.bias), 0, 1, 2), 3*u)
	return func(xt *Tensor, states []*Tensor) []*Tensor {
		h := states[0]
		hp := graph.Dense(h, uk, rb, graph.Linear)
		zr := graph.Activate(graph.Add(l.gate(xt, 0, 2), l.gate(hp, 0, 2)), graph.Sigmoid)
		z, r := l.gate(zr, 0, 1), l.gate(zr, 1, 1)
		n := graph.Activate(graph.Add(l.gate(xt, 2, 1), graph.Mul(r, l.gate(hp, 2, 1))), graph.Tanh)
		// z·h + (1-z)·n, written with one product.
		return []*Tensor{graph.Add(n, graph.Mul(z, graph.Sub(h, n)))}
	}
}

// Call returns the layer's output for x [batch, time, features]: the last
// step's [batch, units], or with ReturnSequences every step's [batch, time,
// units]. The initial state is zeros. It builds the layer on the first
// call, and panics with an error wrapping ErrShape, naming the layer, if x
// is not of rank 3 or not of the width the layer was built for.
func (l *GRULayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	y, _ := l.CallWithState(ctx, x, nil, nil, training)
	return y
}

// CallWithState is Call with Keras's call arguments: mask [batch, time]
// of 1 for a real step and 0 for padding (nil: every step is real), and
// initial the initial state ([h], [batch, units]; nil: zeros). It returns
// the output as Call does, and the final states ([h]) as Keras's
// return_state does.
//
// A step whose mask is 0 leaves the state as it was, and outputs the
// previous step's output (zeros before the first step), as Keras does: so
// padding at the end of a sequence, whatever its values, changes neither
// the final state nor the outputs of the real steps, nor any gradient. It
// panics with an error wrapping ErrShape, naming the layer and both
// shapes, if the mask or an initial state does not fit x.
func (l *GRULayer) CallWithState(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, training bool) (*Tensor, []*Tensor) {
	outs, states := l.unroll(ctx, x, mask, initial, false)
	return l.output(outs), states
}

func (l *GRULayer) unroll(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, zero bool) ([]*Tensor, []*Tensor) {
	return l.recurrent.unroll(ctx, l, x, mask, initial, zero)
}

func (l *GRULayer) twin(name string, backwards bool) direction {
	return GRU(l.units, l.twinOptions(name, backwards)...)
}

// LSTMLayer is a long short-term memory layer (keras layers.LSTM with its
// defaults, torch nn.LSTM) over inputs [batch, time, features]. Create it
// with LSTM.
//
// Each step computes, from the step's input x and the previous states h
// and c,
//
//	i = σ(x·Wi + h·Ui + bi)    input gate
//	f = σ(x·Wf + h·Uf + bf)    forget gate
//	g = tanh(x·Wg + h·Ug + bg) candidate
//	o = σ(x·Wo + h·Uo + bo)    output gate
//	c' = f ⊙ c + i ⊙ g
//	h' = o ⊙ tanh(c')
//
// Its variables are kernel [features, 4·units], recurrent_kernel [units,
// 4·units] (columns in Keras's gate order i, f, g, o, which Keras calls i,
// f, c, o) and bias [4·units], the forget gate's part starting at 1
// (Keras's unit_forget_bias). torch.nn.LSTM keeps the transposes in the
// same gate order (i, f, g, o) and two biases whose sum is this bias.
type LSTMLayer struct{ recurrent }

// LSTM returns an LSTM layer with the given number of units, named lstm,
// lstm_1, ... Options: Named, ReturnSequences, GoBackwards,
// KernelInitializer (of kernel; Glorot uniform by default; the recurrent
// kernel is orthogonal), RecurrentDropout (0 only). Call returns the last
// step's output h [batch, units], or with ReturnSequences every step's
// [batch, time, units]; CallWithState takes a mask and the initial states
// and returns the final states [h, c] too (Keras's return_state).
//
// It panics if units < 1, on an option it does not take, or on a
// recurrent dropout above 0.
func LSTM(units int, opts ...LayerOption) *LSTMLayer {
	return &LSTMLayer{recurrent: newRecurrent("LSTM", "lstm", units, 4, 2, opts)}
}

// Build creates the weights for inputs [batch, time, features]. It panics
// with an error wrapping ErrShape unless the shape has rank 3.
func (l *LSTMLayer) Build(inputShape []int) { l.build(l, inputShape) }

func (l *LSTMLayer) buildCell(in int) {
	u := l.units
	l.kernel = l.newWeight("kernel", []int{in, 4 * u}, initial(l.init, GlorotUniformInit{}, l.name+"/kernel", []int{in, 4 * u}))
	l.recurrentKernel = l.newWeight("recurrent_kernel", []int{u, 4 * u}, orthogonal(l.name+"/recurrent_kernel", u, 4*u))
	b := make([]float64, 4*u)
	for j := u; j < 2*u; j++ {
		b[j] = 1
	}
	l.bias = l.newWeight("bias", []int{4 * u}, b)
}

func (l *LSTMLayer) project(g *graph.Graph, x *Tensor) *Tensor {
	return graph.Dense(x, g.Var(l.kernel), g.Var(l.bias), graph.Linear)
}

func (l *LSTMLayer) stepper(g *graph.Graph) stepFunc {
	uk := g.Var(l.recurrentKernel)
	return func(xt *Tensor, states []*Tensor) []*Tensor {
		h, c := states[0], states[1]
		z := graph.Add(xt, graph.MatMul(h, uk))
		ifg := graph.Activate(l.gate(z, 0, 2), graph.Sigmoid)
		i, f := l.gate(ifg, 0, 1), l.gate(ifg, 1, 1)
		cand := graph.Activate(l.gate(z, 2, 1), graph.Tanh)
		o := graph.Activate(l.gate(z, 3, 1), graph.Sigmoid)
		c2 := graph.Add(graph.Mul(f, c), graph.Mul(i, cand))
		return []*Tensor{graph.Mul(o, graph.Activate(c2, graph.Tanh)), c2}
	}
}

// Call returns the layer's output h for x [batch, time, features]: the
// last step's [batch, units], or with ReturnSequences every step's [batch,
// time, units]. The initial states are zeros. It builds the layer on the
// first call, and panics with an error wrapping ErrShape, naming the
// layer, if x is not of rank 3 or not of the width the layer was built for.
func (l *LSTMLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	y, _ := l.CallWithState(ctx, x, nil, nil, training)
	return y
}

// CallWithState is Call with Keras's call arguments: mask [batch, time]
// of 1 for a real step and 0 for padding (nil: every step is real), and
// initial the initial states [h, c] (each [batch, units]; nil: zeros). It
// returns the output as Call does, and the final states [h, c] as Keras's
// return_state does. Masked steps behave as GRULayer.CallWithState says.
func (l *LSTMLayer) CallWithState(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, training bool) (*Tensor, []*Tensor) {
	outs, states := l.unroll(ctx, x, mask, initial, false)
	return l.output(outs), states
}

func (l *LSTMLayer) unroll(ctx *strategy.ReplicaContext, x, mask *Tensor, initial []*Tensor, zero bool) ([]*Tensor, []*Tensor) {
	return l.recurrent.unroll(ctx, l, x, mask, initial, zero)
}

func (l *LSTMLayer) twin(name string, backwards bool) direction {
	return LSTM(l.units, l.twinOptions(name, backwards)...)
}

var (
	_ direction      = (*GRULayer)(nil)
	_ direction      = (*LSTMLayer)(nil)
	_ RecurrentLayer = (*BidirectionalLayer)(nil)
)
