package nn

import (
	"github.com/gotrain/gotrain/graph"
	"slices"
)

// Loss is what every loss of this package is: Call returns the loss of
// predictions yPred against labels yTrue, reduced as the loss's Reduction
// says (ReductionNone: one value per example, for ComputeAverageLoss), each
// example's loss first multiplied by its sample weight when one is given
// ([batch], [batch, 1] or a scalar; Keras's sample_weight).
type Loss interface {
	Call(yTrue, yPred *Tensor, sampleWeight ...*Tensor) *Tensor
}

var (
	_ Loss = SparseCategoricalCrossentropy{}
	_ Loss = CategoricalCrossentropy{}
	_ Loss = BinaryCrossentropy{}
	_ Loss = MeanSquaredError{}
)

// probEpsilon keeps log finite for probabilities of exactly 0 or 1 (Keras's
// backend epsilon, which it uses to clip).
const probEpsilon = 1e-7

func checkPair(name string, yTrue, yPred *Tensor) {
	if yTrue == nil || yPred == nil {
		panic(usageError("%s: want labels and predictions, got %v and %v", name, yTrue, yPred))
	}
}

// CategoricalCrossentropy is the cross-entropy between label distributions
// [batch, classes] (one-hot or probabilities) and predictions [batch,
// classes]: logits when FromLogits, else probabilities, which are
// renormalized to sum to 1 per row as Keras does
// (keras.losses.CategoricalCrossentropy). The per-example loss is
// -Σⱼ y[i,j]·log softmax(logits)[i,j], computed stably.
type CategoricalCrossentropy struct {
	FromLogits bool
	Reduction  Reduction
}

// Call returns the loss (see Loss). It panics with an error wrapping ErrShape
// if labels and predictions are not matrices of one shape, and with ErrUsage
// for ReductionAuto or ReductionSumOverBatchSize inside strategy.Run.
func (l CategoricalCrossentropy) Call(yTrue, yPred *Tensor, sampleWeight ...*Tensor) *Tensor {
	const name = "categorical_crossentropy"
	checkPair(name, yTrue, yPred)
	ls, ps := yTrue.Shape(), yPred.Shape()
	if len(ps) != 2 || !slices.Equal(ls, ps) {
		panic(shapeError("%s: want labels and predictions [batch, classes] of one shape, got %v and %v", name, ls, ps))
	}
	g := yPred.Graph()
	restore := g.SetScope(name)
	defer restore()
	logits := yPred
	if !l.FromLogits {
		// log softmax(log p) = log(p/Σp): the renormalization comes free.
		logits = graph.Log(graph.Add(yPred, g.Const(probEpsilon)))
	}
	return l.Reduction.reduce(name, graph.SoftmaxCrossEntropy(yTrue, logits), sampleWeight)
}

// BinaryCrossentropy is the cross-entropy between binary labels (0 or 1, or
// probabilities) and predictions of one shape, [batch] or [batch, d]: logits
// when FromLogits, else probabilities (keras.losses.BinaryCrossentropy).
// Elementwise it is -(y·log p + (1-y)·log(1-p)); for [batch, d] the
// per-example loss is the mean over the d outputs, as Keras takes it over the
// last axis.
//
// From logits it is computed as max(x,0) - x·y + log(1+e^-|x|), stable for
// any x. From probabilities, 1e-7 is added inside each log so that p = 0 or
// 1 stays finite (Keras clips p to [1e-7, 1-1e-7] instead; the two agree to
// about 1e-7 away from the ends).
type BinaryCrossentropy struct {
	FromLogits bool
	Reduction  Reduction
}

// Call returns the loss (see Loss). It panics with an error wrapping ErrShape
// if labels and predictions differ in shape or are not of rank 1 or 2, and
// with ErrUsage for ReductionAuto or ReductionSumOverBatchSize inside
// strategy.Run.
func (l BinaryCrossentropy) Call(yTrue, yPred *Tensor, sampleWeight ...*Tensor) *Tensor {
	const name = "binary_crossentropy"
	g, restore := elementwisePair(name, yTrue, yPred)
	defer restore()
	var elem *Tensor
	if l.FromLogits {
		elem = graph.SigmoidCrossEntropy(yTrue, yPred)
	} else {
		eps := g.Const(probEpsilon)
		one := g.Const(1)
		pos := graph.Mul(yTrue, graph.Log(graph.Add(yPred, eps)))
		neg := graph.Mul(graph.Sub(one, yTrue), graph.Log(graph.Add(graph.Sub(one, yPred), eps)))
		elem = graph.Neg(graph.Add(pos, neg))
	}
	return l.Reduction.reduce(name, lastAxisMean(elem), sampleWeight)
}

// MeanSquaredError is the mean of (yTrue - yPred)² over the last axis of
// [batch, d] values, or the square itself for [batch]
// (keras.losses.MeanSquaredError).
type MeanSquaredError struct {
	Reduction Reduction
}

// Call returns the loss (see Loss). It panics with an error wrapping ErrShape
// if labels and predictions differ in shape or are not of rank 1 or 2, and
// with ErrUsage for ReductionAuto or ReductionSumOverBatchSize inside
// strategy.Run.
func (l MeanSquaredError) Call(yTrue, yPred *Tensor, sampleWeight ...*Tensor) *Tensor {
	const name = "mean_squared_error"
	_, restore := elementwisePair(name, yTrue, yPred)
	defer restore()
	return l.Reduction.reduce(name, lastAxisMean(graph.Square(graph.Sub(yPred, yTrue))), sampleWeight)
}

// elementwisePair checks the labels and predictions of an elementwise loss
// (one shape, [batch] or [batch, d]) and enters the loss's graph scope; the
// caller defers restore. It panics with an error wrapping ErrShape otherwise.
func elementwisePair(name string, yTrue, yPred *Tensor) (g *graph.Graph, restore func()) {
	checkPair(name, yTrue, yPred)
	ls, ps := yTrue.Shape(), yPred.Shape()
	if (len(ps) != 1 && len(ps) != 2) || !slices.Equal(ls, ps) {
		panic(shapeError("%s: want labels and predictions [batch] or [batch, d] of one shape, got %v and %v", name, ls, ps))
	}
	g = yPred.Graph()
	return g, g.SetScope(name)
}

// lastAxisMean turns elementwise losses [batch, d] into per-example ones
// [batch]; [batch] is returned as is.
func lastAxisMean(x *Tensor) *Tensor {
	if len(x.Shape()) == 2 {
		return graph.MeanAxis(x, 1)
	}
	return x
}
