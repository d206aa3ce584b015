package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// FlattenLayer reshapes [batch, d1, d2, ...] to [batch, d1·d2·...] without a
// copy (keras layers.Flatten). Create it with Flatten.
type FlattenLayer struct{ layerBase }

// Flatten returns a flattening layer, named flatten, flatten_1, ... unless
// Named. It panics on an option other than Named.
func Flatten(opts ...LayerOption) *FlattenLayer {
	var c layerConfig
	c.apply("Flatten", opts, "Named")
	if c.name == "" {
		c.name = strategy.UniqueName("flatten")
	}
	return &FlattenLayer{newBase(c.name)}
}

// Call returns x as [batch, rest]; the result shares x's buffer. It panics
// with an error wrapping ErrShape if x has no batch axis.
func (l *FlattenLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, -1, "[batch, ...]")
	restore := graphOf(ctx, x).SetScope(l.name)
	defer restore()
	return graph.Reshape(x, l.OutputShape(shape)...)
}

// Build does nothing: the layer has no variables.
func (l *FlattenLayer) Build([]int) {}

// Built reports true.
func (l *FlattenLayer) Built() bool { return true }

// OutputShape returns [batch, product of the other dimensions].
func (l *FlattenLayer) OutputShape(in []int) []int {
	if len(in) == 0 {
		return nil
	}
	n := 1
	for _, d := range in[1:] {
		n *= d
	}
	return []int{in[0], n}
}

// Variables returns nil.
func (l *FlattenLayer) Variables() []*Variable { return nil }

// TrainableVariables returns nil.
func (l *FlattenLayer) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (l *FlattenLayer) SetTrainable(t bool) { l.setTrainable(t) }
