package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// DenseLayer is a fully connected layer: act(x·kernel + bias), with kernel
// [in, units] and bias [units], acting on the last axis of its input as
// Keras's Dense does: [batch, ..., in] gives [batch, ..., units]. Create it
// with Dense.
type DenseLayer struct {
	layerBase
	units  int
	act    Activation
	useB   bool
	init   Initializer // the kernel's; nil: Glorot uniform
	kernel *Variable   // nil until built
	bias   *Variable   // nil until built or without bias
}

// Dense returns a fully connected layer with the given number of units,
// named dense, dense_1, ... unique within the current strategy. Options: an
// Activation (Linear by default), Named, WithoutBias, KernelInitializer:
//
//	nn.Dense(512, nn.GELU, nn.WithoutBias(), nn.Named("block_0/mlp/up"))
//
// It panics if units < 1, if more than one activation is given, or on an
// option it does not take.
func Dense(units int, opts ...LayerOption) *DenseLayer {
	if units < 1 {
		panic(usageError("Dense: want at least 1 unit, got %d", units))
	}
	var c layerConfig
	c.apply("Dense", opts, "Named", "WithoutBias", "KernelInitializer", "WithActivation")
	if n := c.count("WithActivation"); n > 1 {
		panic(usageError("Dense: want at most one activation, got %d", n))
	}
	d := &DenseLayer{layerBase: newBase(c.name), units: units, act: c.act, useB: !c.noBias, init: c.init}
	if d.name == "" {
		d.name = strategy.UniqueName("dense")
	}
	return d
}

// Units returns the output width.
func (d *DenseLayer) Units() int { return d.units }

// Activation returns the layer's activation.
func (d *DenseLayer) Activation() Activation { return d.act }

// Built reports whether the layer has its variables.
func (d *DenseLayer) Built() bool { return d.kernel != nil }

// Build creates the kernel (Glorot uniform) and bias (zeros) for inputs of
// shape [batch, ..., in], under the current strategy (see
// strategy.CreateVariable). It panics unless the shape has rank ≥ 2 with
// in ≥ 1.
func (d *DenseLayer) Build(inputShape []int) {
	if d.Built() {
		return
	}
	if len(inputShape) < 2 || inputShape[len(inputShape)-1] < 1 {
		panic(shapeError("%s: want input shape [batch, ..., width], got %v", d.name, inputShape))
	}
	in := inputShape[len(inputShape)-1]
	d.checkAlloc("kernel", []int{in, d.units})
	kname := d.name + "/kernel"
	d.kernel = d.newWeight("kernel", []int{in, d.units}, initial(d.init, GlorotUniformInit{}, kname, []int{in, d.units}))
	if d.useB {
		d.bias = d.newWeight("bias", []int{d.units}, nil)
	}
}

// InputWidth returns the input width the layer was built for, or 0.
func (d *DenseLayer) InputWidth() int {
	if d.kernel == nil {
		return 0
	}
	return d.kernel.Shape()[0]
}

// OutputShape returns [batch, ..., units] for an input [batch, ..., in].
func (d *DenseLayer) OutputShape(inputShape []int) []int {
	if len(inputShape) == 0 {
		return []int{d.units}
	}
	out := append([]int(nil), inputShape[:len(inputShape)-1]...)
	return append(out, d.units)
}

// Call returns act(x·kernel + bias) over x's last axis, building the layer
// on the first call. An input of rank above 2 ([batch, time, in]) is
// reshaped to the matrix [batch·time, in] for the one product and the
// result back to [batch, time, units]; a reshape costs no copy. It panics
// with an error wrapping ErrShape, naming the layer, if x has rank below 2
// or a last axis other than the width the layer was built for.
func (d *DenseLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(d.name, x, -2, "[batch, ..., width]")
	if !d.Built() {
		d.Build(shape)
	}
	in := shape[len(shape)-1]
	if want := d.InputWidth(); in != want {
		panic(shapeError("%s: want input width %d, got %d", d.name, want, in))
	}
	g := graphOf(ctx, x)
	restore := g.SetScope(d.name)
	defer restore()
	w := g.Var(d.kernel)
	var b *Tensor
	if d.bias != nil {
		b = g.Var(d.bias)
	}
	if len(shape) > 2 {
		x = graph.Reshape(x, x.Len()/in, in)
	}
	y := graph.Dense(x, w, b, d.act)
	if len(shape) > 2 {
		y = graph.Reshape(y, d.OutputShape(shape)...)
	}
	return y
}

// Variables returns kernel and bias (once built).
func (d *DenseLayer) Variables() []*Variable {
	var vs []*Variable
	if d.kernel != nil {
		vs = append(vs, d.kernel)
	}
	if d.bias != nil {
		vs = append(vs, d.bias)
	}
	return vs
}

// TrainableVariables returns the trainable ones of Variables.
func (d *DenseLayer) TrainableVariables() []*Variable { return trainable(d.Variables()) }

// SetTrainable freezes or unfreezes kernel and bias.
func (d *DenseLayer) SetTrainable(t bool) { d.setTrainable(t, d.kernel, d.bias) }

// Kernel returns the kernel variable, nil before the layer is built.
func (d *DenseLayer) Kernel() *Variable { return d.kernel }

// Bias returns the bias variable, nil before the layer is built or without bias.
func (d *DenseLayer) Bias() *Variable { return d.bias }
