package nn

import (
	"slices"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// BatchNormalizationLayer normalizes its input per channel (the last axis)
// with the batch's mean and variance while training, and with moving
// averages of them otherwise, then scales by gamma and shifts by beta (keras
// layers.BatchNormalization). Create it with BatchNormalization.
//
// While training, the statistics are taken over the real rows of the batch
// only (the step's mask excludes padding), over every axis but the last. With
// SyncBatchStats they are taken over the real rows of all replicas together,
// through a differentiable cross-replica sum (ReplicaContext.AllReduce), so N
// replicas compute exactly what one replica computes on the global batch.
// Each channel's sum and sum of squares are taken in one pass and reduced
// together (one all-reduce, as Keras's SyncBatchNormalization does); the
// variance E[x²] - mean² loses accuracy in float32 only where a channel's
// mean is many standard deviations from 0. Without it each replica
// normalizes its own shard, as Keras does by default.
//
// The moving mean and variance are non-trainable variables updated once per
// step, after every replica ran: moving = momentum·moving + (1-momentum)·batch,
// with the batch statistics averaged over replicas (identical on every
// replica when synced). The variance is the biased one (divided by the
// count), as in Keras.
//
// A frozen layer (SetTrainable(false)) also normalizes with the moving
// averages, as Keras does since TensorFlow 2.
type BatchNormalizationLayer struct {
	layerBase
	sync       bool
	momentum   float64
	epsilon    float64
	gamma      *Variable // nil until built; [channels], ones
	beta       *Variable // nil until built; [channels], zeros
	movingMean *Variable // nil until built; [channels], zeros, never trainable
	movingVar  *Variable // nil until built; [channels], ones, never trainable
}

// SyncBatchStats makes BatchNormalization compute its batch statistics over
// all replicas (keras SyncBatchNormalization, BatchNormalization(synchronized=True)).
func SyncBatchStats() LayerOption {
	return option("SyncBatchStats", func(c *layerConfig) { c.sync = true })
}

// BatchNormMomentum sets the momentum of the moving averages (default 0.99).
// It panics unless 0 ≤ m ≤ 1.
func BatchNormMomentum(m float64) LayerOption {
	if !(m >= 0 && m <= 1) {
		panic(usageError("BatchNormMomentum: want a momentum in [0, 1], got %v", m))
	}
	return option("BatchNormMomentum", func(c *layerConfig) { c.momentum = m }, m)
}

// BatchNormEpsilon sets the ε added to the variance (default 1e-3, Keras's).
// It panics if eps ≤ 0.
func BatchNormEpsilon(eps float64) LayerOption {
	if !(eps > 0) {
		panic(usageError("BatchNormEpsilon: want ε > 0, got %v", eps))
	}
	return option("BatchNormEpsilon", func(c *layerConfig) { c.epsilon = eps }, eps)
}

// BatchNormalization returns a batch normalization layer over the last axis,
// named batch_normalization, batch_normalization_1, ... Options: Named,
// SyncBatchStats, BatchNormMomentum, BatchNormEpsilon. It panics on an option
// it does not take.
func BatchNormalization(opts ...LayerOption) *BatchNormalizationLayer {
	c := layerConfig{momentum: 0.99, epsilon: 1e-3}
	c.apply("BatchNormalization", opts, "Named", "SyncBatchStats", "BatchNormMomentum", "BatchNormEpsilon")
	if c.name == "" {
		c.name = strategy.UniqueName("batch_normalization")
	}
	return &BatchNormalizationLayer{layerBase: newBase(c.name), sync: c.sync, momentum: c.momentum, epsilon: c.epsilon}
}

// Synced reports whether the layer takes its statistics over all replicas.
func (l *BatchNormalizationLayer) Synced() bool { return l.sync }

// Built reports whether the layer has its variables.
func (l *BatchNormalizationLayer) Built() bool { return l.gamma != nil }

// Build creates gamma (ones), beta (zeros), and the moving mean (zeros) and
// variance (ones) for inputs whose last axis has the channels. It panics
// unless the shape has rank ≥ 2 and at least one channel.
func (l *BatchNormalizationLayer) Build(inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) < 2 || inputShape[len(inputShape)-1] < 1 {
		panic(shapeError("%s: want input shape [batch, ..., channels], got %v", l.name, inputShape))
	}
	c := inputShape[len(inputShape)-1]
	ones := make([]float64, c)
	for i := range ones {
		ones[i] = 1
	}
	l.gamma = l.newWeight("gamma", []int{c}, ones)
	l.beta = l.newWeight("beta", []int{c}, nil)
	l.movingMean = l.newState("moving_mean", []int{c}, nil)
	l.movingVar = l.newState("moving_variance", []int{c}, ones)
}

// OutputShape returns the input shape.
func (l *BatchNormalizationLayer) OutputShape(in []int) []int { return append([]int(nil), in...) }

// Call normalizes x, building the layer on the first call. Training with
// SyncBatchStats needs ctx; without ctx (outside strategy.Run) the moving
// averages are not updated. It panics with an error wrapping ErrShape,
// naming the layer, if x's channels differ from the built ones, and with
// ErrUsage if the layer is synced, training and ctx is nil.
func (l *BatchNormalizationLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	return l.CallAct(ctx, x, nil, Linear, training)
}

// CallAct returns act(Call(x) + residual), residual nil for none: a
// residual block's join, act(shortcut + bn(conv(x))), or the ReLU after a
// batch norm. While training, the add and a ReLU run in the normalizing
// pass (graph.BatchNorm), which saves a pass over the activations each and
// their gradients' passes. It panics as Call does, and with an error
// wrapping ErrUsage, naming the layer and both shapes, if residual's shape
// is not x's.
func (l *BatchNormalizationLayer) CallAct(ctx *strategy.ReplicaContext, x, residual *Tensor, act Activation, training bool) *Tensor {
	shape := checkInput(l.name, x, -2, "[batch, ..., channels]")
	l.Build(shape)
	c := shape[len(shape)-1]
	if want := l.gamma.Len(); c != want {
		panic(shapeError("%s: want %d channels, got %d", l.name, want, c))
	}
	if residual != nil && !slices.Equal(residual.Shape(), shape) {
		panic(usageError("%s: want a residual of the input's shape %v, got %v; project the shortcut to the branch's shape (a 1x1 Conv2D with its strides and filters)",
			l.name, shape, residual.Shape()))
	}
	checkActivation(l.name, act)
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	gamma, beta := g.Var(l.gamma), g.Var(l.beta)
	if !training || l.frozen {
		scale := graph.Div(gamma, graph.Sqrt(graph.Add(g.Var(l.movingVar), g.Const(l.epsilon))))
		y := graph.Add(graph.Mul(graph.Sub(x, g.Var(l.movingMean)), scale), beta)
		if residual != nil {
			y = graph.AddSameShape(y, residual)
		}
		return act.Apply(y)
	}
	if l.sync && ctx == nil {
		panic(usageError("%s: synchronized batch statistics need the step's *strategy.ReplicaContext, got nil", l.name))
	}
	rows := shape[0]
	perRow := x.Len() / max(rows*c, 1) // elements of a channel in one row (h·w for images)
	mask := g.Mask()
	if mask == nil || mask.Len() != rows {
		mask = g.Const(1, rows)
	}
	// The count of real elements per channel; with sync the strategy feeds
	// the global number of real rows, so no reduction is needed for it.
	var count *Tensor
	if l.sync {
		count = graph.Scale(ctx.GlobalCount(), float64(perRow))
	} else {
		count = graph.Scale(graph.Sum(mask), float64(perRow))
	}
	// A replica whose shard is all padding has no statistics of its own;
	// dividing by max(count, 1) keeps its (masked) outputs finite.
	count = graph.Maximum(count, g.Const(1))
	// One pass for each channel's sum and sum of squares, one all-reduce of
	// both when synced, one pass that normalizes (graph.BatchNorm).
	sums := graph.BatchNormSums(x, mask)
	if l.sync {
		sums = ctx.AllReduce(strategy.Sum, sums)
	}
	y := graph.BatchNorm(x, sums, count, gamma, beta, residual, l.epsilon, act)
	if ctx != nil {
		mean, variance := graph.BatchNormMoments(sums, count)
		l.registerMovingUpdate(ctx, mean, variance)
	}
	return y
}

// registerMovingUpdate makes the strategy update the moving averages once
// per step. The strategy sums what it is handed over replicas, so each
// replica hands its statistics divided by the replica count: the sum is
// their mean. The scaled copies also keep the strategy's in-place sum off the
// nodes the step computes with.
func (l *BatchNormalizationLayer) registerMovingUpdate(ctx *strategy.ReplicaContext, mean, variance *Tensor) {
	inv := 1 / float64(ctx.NumReplicasInSync())
	ctx.ApplyUpdate(strategy.Registration{
		Name:   l.name + "/moving_averages",
		Vars:   []*Variable{l.movingMean, l.movingVar},
		Grads:  []*Tensor{graph.Scale(mean, inv), graph.Scale(variance, inv)},
		Update: movingAverages{momentum: l.momentum},
	})
}

// movingAverages is the update of batch norm's moving mean and variance
// with the batch's, summed over replicas already divided by their count.
type movingAverages struct{ momentum float64 }

func (u movingAverages) Apply(gs []strategy.Grad) {
	for _, gr := range gs {
		if gr.F32 != nil {
			movingAverage(gr.Var.F32(), gr.F32, u.momentum)
		} else {
			movingAverage(gr.Var.F64(), gr.F64, u.momentum)
		}
	}
}

// movingAverage is: for i, v := range batch { moving[i] = m·moving[i] + (1-m)·v }.
func movingAverage[T float32 | float64](moving, batch []T, m float64) {
	for i, v := range batch {
		moving[i] = T(m*float64(moving[i]) + (1-m)*float64(v))
	}
}

// Variables returns gamma, beta, moving mean and moving variance (once built).
func (l *BatchNormalizationLayer) Variables() []*Variable {
	return nonNil(l.gamma, l.beta, l.movingMean, l.movingVar)
}

// TrainableVariables returns gamma and beta unless frozen.
func (l *BatchNormalizationLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes gamma and beta; a frozen layer also
// normalizes with its moving averages. The moving averages never train.
func (l *BatchNormalizationLayer) SetTrainable(t bool) { l.setTrainable(t, l.gamma, l.beta) }

// MovingMean returns the moving mean variable, nil before Build.
func (l *BatchNormalizationLayer) MovingMean() *Variable { return l.movingMean }

// MovingVariance returns the moving variance variable, nil before Build.
func (l *BatchNormalizationLayer) MovingVariance() *Variable { return l.movingVar }

// Gamma returns the scale variable, nil before Build.
func (l *BatchNormalizationLayer) Gamma() *Variable { return l.gamma }

// Beta returns the offset variable, nil before Build.
func (l *BatchNormalizationLayer) Beta() *Variable { return l.beta }
