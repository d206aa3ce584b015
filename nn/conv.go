package nn

import (
	"math"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Conv2DLayer is a 2-D convolution over NHWC images (keras layers.Conv2D):
// act(conv(x, kernel) + bias), kernel [k, k, in, filters], bias [filters].
// Create it with Conv2D.
type Conv2DLayer struct {
	convBase
	strideH, strideW int
	dilH, dilW       int
}

// convBase is what Conv2D and Conv1D share: the kernel, the bias and the
// accessors of both.
type convBase struct {
	layerBase
	filters, size int
	padding       Padding
	act           Activation
	useB          bool
	kernel        *Variable // nil until built
	bias          *Variable // nil until built or without bias
}

func newConvBase(c layerConfig, filters, size int) convBase {
	return convBase{layerBase: newBase(c.name), filters: filters, size: size, padding: c.padding, act: c.act, useB: !c.noBias}
}

// build creates the kernel of the given shape, Glorot uniform over fan-in
// shape[:-1] and fan-out shape[:-2]·filters (as Keras), and the bias
// (zeros).
func (l *convBase) build(shape []int) {
	window := 1
	for _, d := range shape[:len(shape)-2] {
		window *= d
	}
	in := shape[len(shape)-2]
	l.checkAlloc("kernel", shape)
	init := glorot(l.name+"/kernel", window*in*l.filters, window*in, window*l.filters)
	l.kernel = l.newWeight("kernel", shape, init)
	if l.useB {
		l.bias = l.newWeight("bias", []int{l.filters}, nil)
	}
}

// conv returns the convolution of the NHWC image x with the kernel read as
// k4 [kh, kw, in, filters], through the layer's activation.
func (l *convBase) conv(ctx *strategy.ReplicaContext, x *Tensor, k4 []int, sh, sw, dh, dw int) *Tensor {
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	var b *Tensor
	if l.bias != nil {
		b = g.Var(l.bias)
	}
	return graph.Conv2DDilated(x, graph.Reshape(g.Var(l.kernel), k4...), b, sh, sw, dh, dw, l.padding, l.act)
}

// Built reports whether the layer has its variables.
func (l *convBase) Built() bool { return l.kernel != nil }

// Variables returns kernel and bias (once built).
func (l *convBase) Variables() []*Variable { return nonNil(l.kernel, l.bias) }

// TrainableVariables returns the trainable ones of Variables.
func (l *convBase) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes kernel and bias.
func (l *convBase) SetTrainable(t bool) { l.setTrainable(t, l.kernel, l.bias) }

// Kernel returns the kernel variable, [k, k, in, filters] for Conv2D and
// [k, in, filters] for Conv1D; nil before Build.
func (l *convBase) Kernel() *Variable { return l.kernel }

// Bias returns the bias variable, nil before Build or without bias.
func (l *convBase) Bias() *Variable { return l.bias }

// Conv2D returns a convolution layer with the given number of filters and a
// square kernel of side kernel, named conv2d, conv2d_1, ... Options: Named,
// WithStrides (default 1, 1), WithDilation (default 1, 1), WithPadding
// (default Valid; Same pads as TensorFlow for every stride), WithActivation
// (default Linear), WithoutBias. The product runs as im2col and one gemm
// (see graph.Conv2DDilated). It panics if filters or kernel is < 1, or on
// an option it does not take.
func Conv2D(filters, kernel int, opts ...LayerOption) *Conv2DLayer {
	if filters < 1 || kernel < 1 {
		panic(usageError("Conv2D: want filters ≥ 1 and kernel ≥ 1, got %d and %d", filters, kernel))
	}
	c := convConfig("Conv2D", "conv2d", opts)
	return &Conv2DLayer{convBase: newConvBase(c, filters, kernel), strideH: c.strideH, strideW: c.strideW, dilH: c.dilH, dilW: c.dilW}
}

// convConfig applies the options of the convolution layer named layer,
// with strides and dilations 1 unless given, naming it after name unless
// Named.
func convConfig(layer, name string, opts []LayerOption) layerConfig {
	c := layerConfig{strideH: 1, strideW: 1, dilH: 1, dilW: 1}
	c.apply(layer, opts, "Named", "WithStrides", "WithDilation", "WithPadding", "WithActivation", "WithoutBias")
	if c.name == "" {
		c.name = strategy.UniqueName(name)
	}
	return c
}

// Build creates the kernel (Glorot uniform over fan-in k·k·in and fan-out
// k·k·filters, as Keras) and the bias (zeros) for inputs [batch, h, w, in].
// It panics unless the shape has rank 4 with in ≥ 1.
func (l *Conv2DLayer) Build(inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) != 4 || inputShape[3] < 1 {
		panic(shapeError("%s: want input shape [batch, height, width, channels], got %v", l.name, inputShape))
	}
	l.build([]int{l.size, l.size, inputShape[3], l.filters})
}

// OutputShape returns [batch, oh, ow, filters] for an input [batch, h, w,
// in], or nil for an input shape of another rank.
func (l *Conv2DLayer) OutputShape(in []int) []int {
	if len(in) != 4 {
		return nil
	}
	oh := windowOut(in[1], l.size, l.strideH, l.dilH, l.padding)
	ow := windowOut(in[2], l.size, l.strideW, l.dilW, l.padding)
	return []int{in[0], oh, ow, l.filters}
}

// windowOut is the output length of a window of size k, stride s and
// dilation d over n.
func windowOut(n, k, s, d int, p Padding) int {
	if p == Same || p == Causal {
		return (n + s - 1) / s
	}
	return max(0, (n-(k-1)*d-1)/s+1)
}

// Call returns the convolution of x, building the layer on the first call.
// It panics with an error wrapping ErrShape, naming the layer, if x is not
// [batch, h, w, in] with the channels the layer was built for.
func (l *Conv2DLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, 4, "[batch, height, width, channels]")
	l.Build(shape)
	if want := l.kernel.Shape()[2]; shape[3] != want {
		panic(shapeError("%s: want %d input channels, got %d", l.name, want, shape[3]))
	}
	return l.conv(ctx, x, l.kernel.Shape(), l.strideH, l.strideW, l.dilH, l.dilW)
}

// glorot returns n values uniform in ±√(6/(fanIn+fanOut)) from the stream
// for name (GlorotUniform for kernels that are not matrices).
func glorot(name string, n, fanIn, fanOut int) []float64 {
	return uniformInit{math.Sqrt(6 / float64(fanIn+fanOut))}.values(name, n)
}

func nonNil(vs ...*Variable) []*Variable {
	var out []*Variable
	for _, v := range vs {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// Conv1DLayer is a 1-D convolution over sequences [batch, time, channels]
// (keras layers.Conv1D): act(conv(x, kernel) + bias), kernel [k, in,
// filters], bias [filters]. It runs as Conv2D over a one-row image. Create
// it with Conv1D.
type Conv1DLayer struct {
	convBase
	stride, dil int
}

// Conv1D returns a convolution layer over sequences with the given number
// of filters and a kernel of length kernel, named conv1d, conv1d_1, ...
// Options: Named, WithStrides(1, s) (default 1), WithDilation(1, d)
// (default 1), WithPadding (Valid by default, Same, or Causal: output t sees
// inputs up to t), WithActivation (default Linear), WithoutBias: the
// options of Conv2D, the sequence being the width of a one-row image. It
// panics if filters or kernel is < 1, on a stride or dilation of the row
// axis other than 1, or on an option it does not take.
func Conv1D(filters, kernel int, opts ...LayerOption) *Conv1DLayer {
	if filters < 1 || kernel < 1 {
		panic(usageError("Conv1D: want filters ≥ 1 and kernel ≥ 1, got %d and %d", filters, kernel))
	}
	c := convConfig("Conv1D", "conv1d", opts)
	if c.strideH != 1 || c.dilH != 1 {
		panic(usageError("Conv1D: want WithStrides(1, s) and WithDilation(1, d) (a sequence is one row), got strides %d, %d and dilation %d, %d",
			c.strideH, c.strideW, c.dilH, c.dilW))
	}
	return &Conv1DLayer{convBase: newConvBase(c, filters, kernel), stride: c.strideW, dil: c.dilW}
}

// Build creates the kernel (Glorot uniform over fan-in k·in and fan-out
// k·filters, as Keras) and the bias (zeros) for inputs [batch, time, in].
// It panics unless the shape has rank 3 with in ≥ 1.
func (l *Conv1DLayer) Build(inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) != 3 || inputShape[2] < 1 {
		panic(shapeError("%s: want input shape [batch, time, channels], got %v", l.name, inputShape))
	}
	l.build([]int{l.size, inputShape[2], l.filters})
}

// OutputShape returns [batch, steps, filters] for an input [batch, time,
// in], or nil for an input shape of another rank.
func (l *Conv1DLayer) OutputShape(in []int) []int {
	if len(in) != 3 {
		return nil
	}
	return []int{in[0], windowOut(in[1], l.size, l.stride, l.dil, l.padding), l.filters}
}

// Call returns the convolution of x over its time axis, building the layer
// on the first call. It panics with an error wrapping ErrShape, naming the
// layer, if x is not [batch, time, in] with the channels the layer was
// built for.
func (l *Conv1DLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, 3, "[batch, time, channels]")
	l.Build(shape)
	if want := l.kernel.Shape()[1]; shape[2] != want {
		panic(shapeError("%s: want %d input channels, got %d", l.name, want, shape[2]))
	}
	if l.padding == Valid && shape[1] < (l.size-1)*l.dil+1 {
		panic(shapeError("%s: want a sequence of at least %d steps for valid padding, got %d", l.name, (l.size-1)*l.dil+1, shape[1]))
	}
	y := l.conv(ctx, graph.Reshape(x, shape[0], 1, shape[1], shape[2]), []int{1, l.size, shape[2], l.filters}, 1, l.stride, 1, l.dil)
	return graph.Reshape(y, shape[0], y.Shape()[2], l.filters)
}
