package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// MaxPool2DLayer takes the maximum of each pool x pool window of NHWC images,
// per channel (keras layers.MaxPooling2D). Create it with MaxPool2D.
type MaxPool2DLayer struct {
	layerBase
	size             int
	strideH, strideW int
	padding          Padding
}

// MaxPool2D returns a max-pooling layer over square windows of side pool,
// named max_pooling2d, max_pooling2d_1, ... Options: Named, WithStrides
// (default pool, pool), WithPadding (default Valid). It panics if pool < 1
// or on an option it does not take.
func MaxPool2D(pool int, opts ...LayerOption) *MaxPool2DLayer {
	if pool < 1 {
		panic(usageError("MaxPool2D: want pool ≥ 1, got %d", pool))
	}
	c := layerConfig{strideH: pool, strideW: pool}
	c.apply("MaxPool2D", opts, "Named", "WithStrides", "WithPadding")
	if c.name == "" {
		c.name = strategy.UniqueName("max_pooling2d")
	}
	return &MaxPool2DLayer{layerBase: newBase(c.name), size: pool, strideH: c.strideH, strideW: c.strideW, padding: c.padding}
}

// Call returns the pooled x. It panics with an error wrapping ErrShape,
// naming the layer, unless x is [batch, h, w, channels] and, with Valid
// padding, at least pool x pool.
func (l *MaxPool2DLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, 4, "[batch, height, width, channels]")
	if l.padding == Valid && (shape[1] < l.size || shape[2] < l.size) {
		panic(shapeError("%s: want an image of at least %dx%d, got %dx%d", l.name, l.size, l.size, shape[1], shape[2]))
	}
	restore := graphOf(ctx, x).SetScope(l.name)
	defer restore()
	return graph.MaxPool2D(x, l.size, l.size, l.strideH, l.strideW, l.padding)
}

// Build does nothing: the layer has no variables.
func (l *MaxPool2DLayer) Build([]int) {}

// Built reports true.
func (l *MaxPool2DLayer) Built() bool { return true }

// OutputShape returns [batch, oh, ow, channels], or nil for an input of
// another rank.
func (l *MaxPool2DLayer) OutputShape(in []int) []int {
	if len(in) != 4 {
		return nil
	}
	return []int{in[0], windowOut(in[1], l.size, l.strideH, l.padding), windowOut(in[2], l.size, l.strideW, l.padding), in[3]}
}

// Variables returns nil.
func (l *MaxPool2DLayer) Variables() []*Variable { return nil }

// TrainableVariables returns nil.
func (l *MaxPool2DLayer) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (l *MaxPool2DLayer) SetTrainable(t bool) { l.setTrainable(t) }
