package nn

import (
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Reduction says how a loss combines its per-example values (Keras's
// loss reduction).
type Reduction int

const (
	// ReductionAuto is the default: SumOverBatchSize outside strategy.Run, an
	// error inside it (as in TensorFlow).
	ReductionAuto Reduction = iota
	// ReductionNone returns the per-example losses [batch]; combine them with
	// ComputeAverageLoss.
	ReductionNone
	// ReductionSum returns the sum over the real examples (padding excluded).
	ReductionSum
	// ReductionSumOverBatchSize returns the mean over the batch. Inside
	// strategy.Run the batch is the replica's shard, so the result would be
	// off by the replica count: it is an error there.
	ReductionSumOverBatchSize
)

func (r Reduction) String() string {
	switch r {
	case ReductionAuto:
		return "auto"
	case ReductionNone:
		return "none"
	case ReductionSum:
		return "sum"
	case ReductionSumOverBatchSize:
		return "sum_over_batch_size"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// reduce weights the per-example losses [batch] by the optional sample
// weights and combines them as r says.
func (r Reduction) reduce(name string, perExample *Tensor, sampleWeight []*Tensor) *Tensor {
	perExample = weigh(name, perExample, sampleWeight)
	switch r {
	case ReductionNone:
		return perExample
	case ReductionSum:
		return maskedSum(perExample)
	case ReductionAuto, ReductionSumOverBatchSize:
		if strategy.CurrentReplicaContext() != nil {
			panic(usageError("%s: %v reduction inside strategy.Run divides by the per-replica batch; use ReductionNone and ComputeAverageLoss", name, ReductionSumOverBatchSize))
		}
		return graph.Mean(perExample)
	}
	panic(usageError("%s: unknown reduction %d", name, int(r)))
}

// weigh multiplies per-example losses [batch] by a sample weight: a scalar,
// [batch] or [batch, 1] (Keras's sample_weight). No weight returns
// perExample unchanged. It panics with ErrUsage for more than one weight and
// with ErrShape for a weight of another shape.
func weigh(name string, perExample *Tensor, sampleWeight []*Tensor) *Tensor {
	switch len(sampleWeight) {
	case 0:
		return perExample
	case 1:
	default:
		panic(usageError("%s: want at most one sample weight tensor, got %d", name, len(sampleWeight)))
	}
	w := sampleWeight[0]
	if w == nil {
		panic(usageError("%s: sample weight is nil", name))
	}
	batch := perExample.Shape()[0]
	ws := w.Shape()
	switch {
	case w.Len() == 1 && len(ws) <= 1:
	case len(ws) == 1 && ws[0] == batch:
	case len(ws) == 2 && ws[0] == batch && ws[1] == 1:
		w = graph.Reshape(w, batch)
	default:
		panic(shapeError("%s: want sample weights [%d] or a scalar, got %v", name, batch, ws))
	}
	return graph.Mul(perExample, w)
}

// maskedSum sums the per-example values of the real rows: the graph's mask
// (set by strategy.Run) zeroes padding rows.
func maskedSum(perExample *Tensor) *Tensor {
	if m := perExample.Graph().Mask(); m != nil && slices.Equal(m.Shape(), perExample.Shape()) {
		return graph.Sum(graph.Mul(perExample, m))
	}
	return graph.Sum(perExample)
}

// SparseCategoricalCrossentropy is the cross-entropy between integer class
// labels [batch] (or [batch, 1]) and predictions [batch, classes]: logits when
// FromLogits, else probabilities (keras.losses.SparseCategoricalCrossentropy).
// For a sequence model, labels [batch, steps...] and predictions [batch,
// steps..., classes] give each example the mean of its steps' losses, so
// that ComputeAverageLoss is the mean over every step of the global batch.
type SparseCategoricalCrossentropy struct {
	FromLogits bool
	Reduction  Reduction
}

// Call returns the loss reduced as l.Reduction says (ReductionNone: one value
// per example), each example's loss first multiplied by its sample weight
// when one is given ([batch], [batch, 1] or a scalar). It panics with an
// error wrapping ErrShape if the labels, predictions or weights disagree on
// the batch, and with ErrUsage for ReductionAuto or ReductionSumOverBatchSize
// inside strategy.Run.
func (l SparseCategoricalCrossentropy) Call(yTrue, yPred *Tensor, sampleWeight ...*Tensor) *Tensor {
	const name = "sparse_categorical_crossentropy"
	if yTrue == nil || yPred == nil {
		panic(usageError("%s: want labels and predictions, got %v and %v", name, yTrue, yPred))
	}
	ls, ps := yTrue.Shape(), yPred.Shape()
	if len(ps) < 2 {
		panic(shapeError("%s: want predictions [batch, classes] or [batch, steps..., classes], got %v", name, ps))
	}
	if len(ls) == len(ps) && ls[len(ls)-1] == 1 {
		ls = ls[:len(ls)-1]
		yTrue = graph.Reshape(yTrue, ls...)
	}
	if !slices.Equal(ls, ps[:len(ps)-1]) {
		panic(shapeError("%s: want labels %v for predictions %v, got %v", name, ps[:len(ps)-1], ps, ls))
	}
	g := yPred.Graph()
	restore := g.SetScope(name)
	defer restore()
	logits := yPred
	if !l.FromLogits {
		// softmax(log p) = p/Σp, so the fused op gives -log(p[label]) for
		// normalized p; the epsilon keeps log finite, like Keras's clipping.
		logits = graph.Log(graph.Add(yPred, g.Const(1e-7)))
	}
	if len(ps) == 2 {
		return l.Reduction.reduce(name, graph.SparseSoftmaxCrossEntropy(yTrue, logits), sampleWeight)
	}
	// A sequence: each example's loss is the mean over its steps, so that
	// ComputeAverageLoss gives the mean over every step of the global batch
	// and the batch mask still masks whole examples.
	rows := yTrue.Len()
	classes := ps[len(ps)-1]
	perStep := graph.SparseSoftmaxCrossEntropy(graph.Reshape(yTrue, rows), graph.Reshape(logits, rows, classes))
	perExample := graph.MeanAxes(graph.Reshape(perStep, ps[0], rows/max(ps[0], 1)), false, 1)
	return l.Reduction.reduce(name, perExample, sampleWeight)
}

// ComputeAverageLoss returns sum(perExample · w · mask) / globalBatchSize: the
// replica's share of the mean loss over the global batch
// (tf.nn.compute_average_loss). Summing it over replicas (strategy.Sum) gives
// the mean loss of the step, and its gradients summed over replicas are the
// gradients of that mean, so N replicas train like one. The mask (set by
// strategy.Run) excludes padding rows.
//
// With globalBatchSize 0 it divides by the true number of real examples in
// the global batch instead, which is exact also for a partial last batch.
// The optional sample weight w ([batch], [batch, 1] or a scalar) multiplies
// each example's loss before the mask and the division, as in
// tf.nn.compute_average_loss: the divisor stays the example count, not the
// sum of the weights.
//
// It panics if globalBatchSize < 0, perExample is not a vector, or the
// weight does not fit it.
func ComputeAverageLoss(perExample *Tensor, globalBatchSize int, sampleWeight ...*Tensor) *Tensor {
	if perExample == nil {
		panic(usageError("ComputeAverageLoss: want per-example losses, got nil"))
	}
	if globalBatchSize < 0 {
		panic(usageError("ComputeAverageLoss: want a global batch size ≥ 0, got %d", globalBatchSize))
	}
	sh := perExample.Shape()
	if len(sh) == 2 && sh[1] == 1 {
		perExample = graph.Reshape(perExample, sh[0])
		sh = sh[:1]
	}
	if len(sh) != 1 {
		panic(shapeError("ComputeAverageLoss: want per-example losses [batch], got %v; use ReductionNone", sh))
	}
	g := perExample.Graph()
	restore := g.SetScope("compute_average_loss")
	defer restore()
	sum := maskedSum(weigh("ComputeAverageLoss", perExample, sampleWeight))
	if globalBatchSize > 0 {
		return graph.Scale(sum, 1/float64(globalBatchSize))
	}
	if ctx := strategy.CurrentReplicaContext(); ctx != nil && ctx.Graph() == g {
		return graph.Div(sum, ctx.GlobalCount())
	}
	// Outside a strategy the batch is all there is.
	if m := g.Mask(); m != nil {
		return graph.Div(sum, graph.Sum(m))
	}
	return graph.Scale(sum, 1/float64(sh[0]))
}
