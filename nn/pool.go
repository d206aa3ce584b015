package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// MaxPool2DLayer takes the maximum of each pool x pool window of NHWC images,
// per channel (keras layers.MaxPooling2D). Create it with MaxPool2D.
type MaxPool2DLayer struct{ pool2D }

// AveragePooling2DLayer takes the mean of each pool x pool window of NHWC
// images, per channel (keras layers.AveragePooling2D); with Same padding a
// window overhanging the border averages the pixels inside only. Create it
// with AveragePooling2D.
type AveragePooling2DLayer struct{ pool2D }

// pool2D is what the pooling layers share: the window and the graph op.
type pool2D struct {
	layerBase
	size             int
	strideH, strideW int
	padding          Padding
	op               func(x *Tensor, poolH, poolW, strideH, strideW int, pad graph.Padding) *Tensor
}

// MaxPool2D returns a max-pooling layer over square windows of side pool,
// named max_pooling2d, max_pooling2d_1, ... Options: Named, WithStrides
// (default pool, pool), WithPadding (default Valid). It panics if pool < 1
// or on an option it does not take.
func MaxPool2D(pool int, opts ...LayerOption) *MaxPool2DLayer {
	return &MaxPool2DLayer{newPool2D("MaxPool2D", "max_pooling2d", graph.MaxPool2D, pool, opts)}
}

// AveragePooling2D returns an average-pooling layer over square windows of
// side pool, named average_pooling2d, average_pooling2d_1, ... Options:
// Named, WithStrides (default pool, pool), WithPadding (default Valid). It
// panics if pool < 1 or on an option it does not take.
func AveragePooling2D(pool int, opts ...LayerOption) *AveragePooling2DLayer {
	return &AveragePooling2DLayer{newPool2D("AveragePooling2D", "average_pooling2d", graph.AvgPool2D, pool, opts)}
}

func newPool2D(layer, name string, op func(*Tensor, int, int, int, int, graph.Padding) *Tensor, pool int, opts []LayerOption) pool2D {
	if pool < 1 {
		panic(usageError("%s: want pool ≥ 1, got %d", layer, pool))
	}
	c := layerConfig{strideH: pool, strideW: pool}
	c.apply(layer, opts, "Named", "WithStrides", "WithPadding")
	if c.name == "" {
		c.name = strategy.UniqueName(name)
	}
	return pool2D{layerBase: newBase(c.name), size: pool, strideH: c.strideH, strideW: c.strideW, padding: c.padding, op: op}
}

// Call returns the pooled x. It panics with an error wrapping ErrShape,
// naming the layer, unless x is [batch, h, w, channels] and, with Valid
// padding, at least pool x pool.
func (l *pool2D) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, 4, "[batch, height, width, channels]")
	if l.padding == Valid && (shape[1] < l.size || shape[2] < l.size) {
		panic(shapeError("%s: want an image of at least %dx%d, got %dx%d", l.name, l.size, l.size, shape[1], shape[2]))
	}
	restore := graphOf(ctx, x).SetScope(l.name)
	defer restore()
	return l.op(x, l.size, l.size, l.strideH, l.strideW, l.padding)
}

// Build does nothing: the layer has no variables.
func (l *pool2D) Build([]int) {}

// Built reports true.
func (l *pool2D) Built() bool { return true }

// OutputShape returns [batch, oh, ow, channels], or nil for an input of
// another rank.
func (l *pool2D) OutputShape(in []int) []int {
	if len(in) != 4 {
		return nil
	}
	return []int{in[0], windowOut(in[1], l.size, l.strideH, 1, l.padding), windowOut(in[2], l.size, l.strideW, 1, l.padding), in[3]}
}

// Variables returns nil.
func (l *pool2D) Variables() []*Variable { return nil }

// TrainableVariables returns nil.
func (l *pool2D) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (l *pool2D) SetTrainable(t bool) { l.setTrainable(t) }

// GlobalAveragePooling2DLayer averages NHWC images over height and width:
// [batch, h, w, c] to [batch, c] (keras layers.GlobalAveragePooling2D).
// Create it with GlobalAveragePooling2D.
type GlobalAveragePooling2DLayer struct{ layerBase }

// GlobalAveragePooling2D returns a global average-pooling layer, named
// global_average_pooling2d, global_average_pooling2d_1, ... unless Named. It
// panics on an option other than Named.
func GlobalAveragePooling2D(opts ...LayerOption) *GlobalAveragePooling2DLayer {
	var c layerConfig
	c.apply("GlobalAveragePooling2D", opts, "Named")
	if c.name == "" {
		c.name = strategy.UniqueName("global_average_pooling2d")
	}
	return &GlobalAveragePooling2DLayer{newBase(c.name)}
}

// Call returns the mean of x over its height and width. It panics with an
// error wrapping ErrShape, naming the layer, unless x is [batch, h, w,
// channels].
func (l *GlobalAveragePooling2DLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	checkInput(l.name, x, 4, "[batch, height, width, channels]")
	restore := graphOf(ctx, x).SetScope(l.name)
	defer restore()
	return graph.MeanAxes(x, false, 1, 2)
}

// Build does nothing: the layer has no variables.
func (l *GlobalAveragePooling2DLayer) Build([]int) {}

// Built reports true.
func (l *GlobalAveragePooling2DLayer) Built() bool { return true }

// OutputShape returns [batch, channels], or nil for an input of another
// rank.
func (l *GlobalAveragePooling2DLayer) OutputShape(in []int) []int {
	if len(in) != 4 {
		return nil
	}
	return []int{in[0], in[3]}
}

// Variables returns nil.
func (l *GlobalAveragePooling2DLayer) Variables() []*Variable { return nil }

// TrainableVariables returns nil.
func (l *GlobalAveragePooling2DLayer) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (l *GlobalAveragePooling2DLayer) SetTrainable(t bool) { l.setTrainable(t) }
