package nn

import (
	"slices"

	"github.com/gotrain/gotrain/graph"
)

// Add returns a + b for two tensors of one shape: the join of a residual
// connection, y = nn.Add(x, block.Call(ctx, x, training)) (keras
// layers.Add). It is graph.AddSameShape, which does not broadcast, with an
// error that says how to fix a branch that changed its input's shape.
// It panics with an error wrapping ErrUsage that names the graph scope it
// was called in and both shapes if the shapes differ: project x to the
// branch's shape first (a 1x1 Conv2D with the branch's strides and
// filters).
func Add(a, b *Tensor) *Tensor {
	if a == nil || b == nil {
		panic(usageError("add: want two tensors, got %v and %v", a, b))
	}
	if sa, sb := a.Shape(), b.Shape(); !slices.Equal(sa, sb) {
		where := "add"
		if sc := a.Graph().Scope(); sc != "" {
			where = sc + "/add"
		}
		panic(usageError("%s: want tensors of one shape for a residual, got %v and %v; project the shortcut to the branch's shape (a 1x1 Conv2D with its strides and filters)",
			where, sa, sb))
	}
	return graph.AddSameShape(a, b)
}
