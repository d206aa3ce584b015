package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// ScaleRegularizationLoss divides a regularization loss by the number of
// replicas (tf.nn.scale_regularization_loss). Every replica adds the same
// penalty of the shared weights to its loss and the gradients are summed
// over replicas, so unscaled it would count N times; scaled, it counts once,
// exactly as with one replica. Outside strategy.Run it returns loss
// unchanged. It panics with an error wrapping ErrUsage if loss is nil.
func ScaleRegularizationLoss(loss *Tensor) *Tensor {
	if loss == nil {
		panic(usageError("ScaleRegularizationLoss: want a loss, got nil"))
	}
	ctx := strategy.CurrentReplicaContext()
	if ctx == nil || ctx.Graph() != loss.Graph() || ctx.NumReplicasInSync() == 1 {
		return loss
	}
	return graph.Scale(loss, 1/float64(ctx.NumReplicasInSync()))
}

// L2 returns λ·Σᵥ Σᵢ vᵢ², the L2 penalty of vars (Keras's
// regularizers.L2(λ) summed over the variables), as a scalar node of the
// graph of the replica being traced. It is not divided by the replica count:
// add ScaleRegularizationLoss(L2(λ, vars)) to a loss from
// ComputeAverageLoss. It panics with an error wrapping ErrUsage outside a
// step function traced by strategy.Run, if λ < 0 or if vars is empty.
func L2(lambda float64, vars []*Variable) *Tensor {
	ctx := strategy.CurrentReplicaContext()
	if ctx == nil {
		panic(usageError("L2: call it inside a step function run by strategy.Run"))
	}
	if lambda < 0 || lambda != lambda {
		panic(usageError("L2: want λ ≥ 0, got %g", lambda))
	}
	if len(vars) == 0 {
		panic(usageError("L2: want at least one variable, got none"))
	}
	g := ctx.Graph()
	restore := g.SetScope("l2")
	defer restore()
	var total *Tensor
	for i, v := range vars {
		if v == nil {
			panic(usageError("L2: variable %d is nil", i))
		}
		ss := graph.Sum(graph.Square(g.Var(v)))
		if total == nil {
			total = ss
		} else {
			total = graph.Add(total, ss)
		}
	}
	return graph.Scale(total, lambda)
}
