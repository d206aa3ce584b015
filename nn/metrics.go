package nn

import (
	"fmt"
	"math"
	"sort"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/strategy"
)

// Metric is a running statistic over an epoch's examples, computed on the
// host from the values strategy.Run returns (Keras's metrics): update it
// after every step, read Result, and Reset it between epochs.
//
// Each metric has two ways in: Update takes host tensors whose rows are all
// real examples, and UpdateReplicas takes Run's per-replica outputs and
// gathers them with strategy.Mirrored.Gather, which drops the padding rows of
// a partial last batch, so the result is exact whatever the batch size and
// replica count. Labels can be returned by the step function (the label
// input is a tensor like any other) or taken from the batch with GatherBatch.
//
// Metrics are not safe for concurrent use: update them from the goroutine
// of the training loop.
type Metric interface {
	// Name returns the metric's name, e.g. "accuracy".
	Name() string
	// Result returns the metric over every example since the last Reset.
	Result() float64
	// Reset forgets every example.
	Reset()
}

var (
	_ Metric = (*Mean)(nil)
	_ Metric = (*SparseCategoricalAccuracy)(nil)
	_ Metric = (*Precision)(nil)
	_ Metric = (*Recall)(nil)
	_ Metric = (*AUC)(nil)
)

// GatherBatch returns component k of a distributed batch (0: the first
// tensor of each element, such as the features; 1: the labels) as one host
// tensor with only the real rows, in the order of the global batch. On
// several workers it holds every worker's rows, as the predictions Evaluate
// gathers do, so every worker must call it at the same point (it is the
// batch's strategy's Gather of b.Component(k)). It panics with an error
// wrapping ErrUsage if k is out of range.
func GatherBatch(b *strategy.PerReplicaBatch, k int) data.Tensor {
	if b == nil || b.NumReplicas() == 0 {
		panic(usageError("GatherBatch: want a batch, got none"))
	}
	if k < 0 || k >= len(b.Replica(0)) {
		panic(usageError("GatherBatch: want a component in [0, %d), got %d", len(b.Replica(0)), k))
	}
	if s := b.Strategy(); s != nil && s.NumWorkers() > 1 {
		return s.Gather(b.Component(k), 0)
	}
	var shape []int
	var out []float64
	rows := 0
	for r := range b.NumReplicas() {
		t := b.Replica(r)[k]
		real := b.RealRows(r)
		w := 1
		for _, d := range t.Shape[1:] {
			w *= d
		}
		out = append(out, t.Data[:real*w]...)
		rows += real
		shape = t.Shape
	}
	return data.NewTensor(append([]int{rows}, shape[1:]...), out)
}

// gather returns the real rows of a per-example PerReplica output.
func gather(who string, s *strategy.Mirrored, p strategy.PerReplica) data.Tensor {
	if s == nil {
		panic(usageError("%s: UpdateReplicas: want the strategy, got nil", who))
	}
	vals := p.Values()
	if len(vals) == 0 || len(vals[0].Shape) == 0 {
		panic(usageError("%s: UpdateReplicas: want per-example values with a batch axis; for a scalar such as a loss, use Update(s.Reduce(strategy.Sum, loss))", who))
	}
	return s.Gather(p, 0)
}

// Mean is the (weighted) mean of every value given to it
// (keras.metrics.Mean). The zero value is ready to use, named "mean".
type Mean struct {
	name         string
	total, count float64
}

// NewMean returns a Mean with the given name (empty: "mean").
func NewMean(name string) *Mean { return &Mean{name: name} }

// Name returns the metric's name.
func (m *Mean) Name() string {
	if m.name == "" {
		return "mean"
	}
	return m.name
}

// Update adds every element of values, each with weight 1, or with the
// weight of sampleWeight: one weight per element, or one per row of values.
// It panics with an error wrapping ErrShape if the weights do not fit.
func (m *Mean) Update(values data.Tensor, sampleWeight ...data.Tensor) {
	switch len(sampleWeight) {
	case 0:
		for _, v := range values.Data {
			m.total += v
		}
		m.count += float64(len(values.Data))
		return
	case 1:
	default:
		panic(usageError("%s: Update: want at most one sample weight tensor, got %d", m.Name(), len(sampleWeight)))
	}
	w := sampleWeight[0].Data
	per := 1
	switch {
	case len(w) == len(values.Data):
	case len(values.Shape) > 0 && len(w) == values.Shape[0] && len(w) > 0:
		per = len(values.Data) / len(w)
	default:
		panic(shapeError("%s: Update: want one weight per value (%d) or per row, got %d", m.Name(), len(values.Data), len(w)))
	}
	for i, v := range values.Data {
		wi := w[i/per]
		m.total += wi * v
		m.count += wi
	}
}

// UpdateReplicas adds the real rows of a per-example output of
// strategy.Run (see Metric).
func (m *Mean) UpdateReplicas(s *strategy.Mirrored, values strategy.PerReplica) {
	m.Update(gather(m.Name(), s, values))
}

// Result returns the mean, or 0 before any value.
func (m *Mean) Result() float64 {
	if m.count == 0 {
		return 0
	}
	return m.total / m.count
}

// Reset forgets every value.
func (m *Mean) Reset() { m.total, m.count = 0, 0 }

// SparseCategoricalAccuracy is the fraction of examples whose largest
// prediction is at the label's class (keras.metrics.SparseCategoricalAccuracy;
// on ties the first largest wins). The zero value is ready to use.
type SparseCategoricalAccuracy struct {
	correct, count float64
}

// Name returns "accuracy".
func (m *SparseCategoricalAccuracy) Name() string { return "accuracy" }

// Update adds examples: class ids yTrue [n] (or [n, 1]) and predictions yPred
// [n, classes] (logits or probabilities). It panics with an error wrapping
// ErrShape if the shapes do not fit.
func (m *SparseCategoricalAccuracy) Update(yTrue, yPred data.Tensor) {
	if len(yPred.Shape) != 2 || len(yTrue.Data) != yPred.Shape[0] {
		panic(shapeError("accuracy: want labels [n] and predictions [n, classes], got %v and %v", yTrue.Shape, yPred.Shape))
	}
	c := yPred.Shape[1]
	for i, label := range yTrue.Data {
		row := yPred.Data[i*c : (i+1)*c]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if float64(best) == label {
			m.correct++
		}
	}
	m.count += float64(len(yTrue.Data))
}

// UpdateReplicas adds the real rows of per-example outputs of strategy.Run
// (see Metric).
func (m *SparseCategoricalAccuracy) UpdateReplicas(s *strategy.Mirrored, yTrue, yPred strategy.PerReplica) {
	m.Update(gather(m.Name(), s, yTrue), gather(m.Name(), s, yPred))
}

// Result returns the accuracy, or 0 before any example.
func (m *SparseCategoricalAccuracy) Result() float64 {
	if m.count == 0 {
		return 0
	}
	return m.correct / m.count
}

// Reset forgets every example.
func (m *SparseCategoricalAccuracy) Reset() { m.correct, m.count = 0, 0 }

// confusion counts binary outcomes at one threshold: a prediction is
// positive when it is greater than the threshold, a label when it is not 0
// (Keras's rule).
type confusion struct {
	threshold      float64
	tp, fp, fn, tn float64
}

func (c *confusion) update(who string, yTrue, yPred data.Tensor) {
	if len(yTrue.Data) != len(yPred.Data) {
		panic(shapeError("%s: want one label per prediction, got %d labels for %d predictions (shapes %v and %v)", who, len(yTrue.Data), len(yPred.Data), yTrue.Shape, yPred.Shape))
	}
	for i, p := range yPred.Data {
		pos := yTrue.Data[i] != 0
		switch {
		case p > c.threshold && pos:
			c.tp++
		case p > c.threshold:
			c.fp++
		case pos:
			c.fn++
		default:
			c.tn++
		}
	}
}

func checkThreshold(who string, t float64) {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		panic(usageError("%s: want a finite threshold, got %g", who, t))
	}
}

// binaryMetric is what Precision and Recall share: the confusion counts of
// binary predictions at a threshold, and how they are updated. Each adds its
// own Result.
type binaryMetric struct {
	name string
	c    confusion
}

func newBinaryMetric(name string, threshold float64) binaryMetric {
	checkThreshold(name, threshold)
	return binaryMetric{name: name, c: confusion{threshold: threshold}}
}

// Name returns the metric's name, "precision" or "recall".
func (m *binaryMetric) Name() string { return m.name }

// Update adds examples: labels (0 negative, anything else positive) and
// predictions with one value per label (probabilities, or logits with
// threshold 0). It panics with an error wrapping ErrShape if the counts
// differ.
func (m *binaryMetric) Update(yTrue, yPred data.Tensor) { m.c.update(m.name, yTrue, yPred) }

// UpdateReplicas adds the real rows of per-example outputs of strategy.Run
// (see Metric).
func (m *binaryMetric) UpdateReplicas(s *strategy.Mirrored, yTrue, yPred strategy.PerReplica) {
	m.Update(gather(m.name, s, yTrue), gather(m.name, s, yPred))
}

// Reset forgets every example.
func (m *binaryMetric) Reset() { m.c = confusion{threshold: m.c.threshold} }

// Precision is tp/(tp+fp) of binary predictions (keras.metrics.Precision):
// a prediction counts as positive when it is greater than the threshold.
type Precision struct{ binaryMetric }

// NewPrecision returns a Precision with the given threshold (Keras's default
// is 0.5). It panics with an error wrapping ErrUsage if it is not finite.
func NewPrecision(threshold float64) *Precision {
	return &Precision{newBinaryMetric("precision", threshold)}
}

// Result returns the precision, or 0 when nothing was predicted positive.
func (m *Precision) Result() float64 { return ratio(m.c.tp, m.c.tp+m.c.fp) }

// Recall is tp/(tp+fn) of binary predictions (keras.metrics.Recall): a
// prediction counts as positive when it is greater than the threshold.
type Recall struct{ binaryMetric }

// NewRecall returns a Recall with the given threshold (Keras's default is
// 0.5). It panics with an error wrapping ErrUsage if it is not finite.
func NewRecall(threshold float64) *Recall {
	return &Recall{newBinaryMetric("recall", threshold)}
}

// Result returns the recall, or 0 when there was no positive label.
func (m *Recall) Result() float64 { return ratio(m.c.tp, m.c.tp+m.c.fn) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// AUC is the area under the ROC curve of binary predictions in [0, 1],
// computed as keras.metrics.AUC (curve="ROC",
// summation_method="interpolation") does: confusion counts at fixed
// thresholds -ε, 1/(n-1), 2/(n-1), ..., (n-2)/(n-1), 1+ε, then the trapezoidal
// rule over the (false-positive rate, recall) points. The counts add up
// exactly across batches, so the result over an epoch is the result over all
// its examples at once.
type AUC struct {
	thresholds []float64 // ascending
	// pos[k] and neg[k] count positive and negative examples whose prediction
	// exceeds exactly k thresholds (thresholds[:k]).
	pos, neg []float64
}

// NewAUC returns an AUC with numThresholds thresholds (Keras's default is
// 200). It panics with an error wrapping ErrUsage if numThresholds < 2.
func NewAUC(numThresholds int) *AUC {
	if numThresholds < 2 {
		panic(usageError("auc: want at least 2 thresholds, got %d", numThresholds))
	}
	const eps = 1e-7
	t := make([]float64, numThresholds)
	t[0] = -eps
	for i := 1; i < numThresholds-1; i++ {
		t[i] = float64(i) / float64(numThresholds-1)
	}
	t[numThresholds-1] = 1 + eps
	return &AUC{thresholds: t, pos: make([]float64, numThresholds+1), neg: make([]float64, numThresholds+1)}
}

// Name returns "auc".
func (m *AUC) Name() string { return "auc" }

// Update adds examples: labels (0 negative, anything else positive) and
// predicted probabilities, one per label. It panics with an error wrapping
// ErrShape if the counts differ, and with ErrUsage on an AUC not made by
// NewAUC.
func (m *AUC) Update(yTrue, yPred data.Tensor) {
	if m.thresholds == nil {
		panic(usageError("auc: create it with NewAUC"))
	}
	if len(yTrue.Data) != len(yPred.Data) {
		panic(shapeError("auc: want one label per prediction, got %d labels for %d predictions (shapes %v and %v)", len(yTrue.Data), len(yPred.Data), yTrue.Shape, yPred.Shape))
	}
	for i, p := range yPred.Data {
		// k thresholds lie strictly below p: p > thresholds[j] for j < k.
		k := sort.SearchFloat64s(m.thresholds, p)
		if yTrue.Data[i] != 0 {
			m.pos[k]++
		} else {
			m.neg[k]++
		}
	}
}

// UpdateReplicas adds the real rows of per-example outputs of strategy.Run
// (see Metric).
func (m *AUC) UpdateReplicas(s *strategy.Mirrored, yTrue, yPred strategy.PerReplica) {
	m.Update(gather(m.Name(), s, yTrue), gather(m.Name(), s, yPred))
}

// Result returns the area, or 0 before any example.
func (m *AUC) Result() float64 {
	n := len(m.thresholds)
	if n == 0 {
		return 0
	}
	var totalPos, totalNeg float64
	for k := range m.pos {
		totalPos += m.pos[k]
		totalNeg += m.neg[k]
	}
	// tp(j): positives above threshold j, those exceeding more than j
	// thresholds; the sums run from the top threshold down.
	tpr := make([]float64, n)
	fpr := make([]float64, n)
	var tp, fp float64
	for j := n - 1; j >= 0; j-- {
		tp += m.pos[j+1]
		fp += m.neg[j+1]
		tpr[j] = ratio(tp, totalPos)
		fpr[j] = ratio(fp, totalNeg)
	}
	var auc float64
	for j := range n - 1 {
		auc += (fpr[j] - fpr[j+1]) * (tpr[j] + tpr[j+1]) / 2
	}
	return auc
}

// Reset forgets every example.
func (m *AUC) Reset() {
	clear(m.pos)
	clear(m.neg)
}

// MetricString returns "NAME: RESULT" for a metric, with four decimals, for
// printing a row of metrics after an epoch.
func MetricString(m Metric) string { return fmt.Sprintf("%s: %.4f", m.Name(), m.Result()) }

// BUG(nn): AUC computes the ROC curve only; Keras's curve="PR" and its
// "minoring"/"majoring" summation methods are not implemented.
