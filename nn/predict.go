package nn

import (
	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/strategy"
)

// PredictBatch is the global batch Predict and Evaluate run the model on,
// rounded up to a multiple of the replicas: every call has the same shapes,
// so the model is traced once for any number of rows, a partial last batch
// being padded and masked.
const PredictBatch = 256

// PredictionMetric is a metric updated with labels and predictions, as
// Evaluate does: SparseCategoricalAccuracy, Precision, Recall, AUC.
type PredictionMetric interface {
	Metric
	Update(yTrue, yPred data.Tensor)
}

// strategyOf returns the strategy the model runs under: the one it was
// created in, else the current one.
func (m *Sequential) strategyOf(method string) *strategy.Mirrored {
	if m.owner != nil {
		return m.owner
	}
	if s := strategy.Current(); s != nil {
		return s
	}
	panic(usageError("%s: %s: the model was created outside any strategy.Scope, so it has no strategy to run on; create it inside s.Scope(func() { ... })", m.name, method))
}

// predictStep is the step Predict and Evaluate run: the model in inference
// mode (training false). It is made once per model, so the strategy's trace
// cache finds it at every call.
func (m *Sequential) predictStep() func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor {
	if m.predict == nil {
		m.predict = func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor { return m.Call(ctx, x, false) }
	}
	return m.predict
}

// evaluateStep is predictStep for batches of (inputs, labels, ...).
func (m *Sequential) evaluateStep() func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor {
	if m.evaluate == nil {
		m.evaluate = func(ctx *strategy.ReplicaContext, x *Tensor, _ ...*Tensor) *Tensor { return m.Call(ctx, x, false) }
	}
	return m.evaluate
}

// Predict returns the model's outputs for every row of x in inference mode
// (Keras's model.predict), outside any step function: x is split into
// global batches of PredictBatch rows (the last one padded with zero rows)
// distributed over the strategy's replicas, as strategy.Run and Gather
// would, and the rows come back in order. The model is traced once and the trace is cached like a step. It
// panics with the error strategy.Run would (a wrong input width, a NaN in an
// output with the numerics check on), and with an error wrapping ErrUsage
// if the model has no strategy or x has no batch axis.
func (m *Sequential) Predict(x data.Tensor) data.Tensor {
	s := m.strategyOf("Predict")
	if len(x.Shape) == 0 {
		panic(usageError("%s: Predict: want inputs with a batch axis, got a scalar", m.name))
	}
	// Zero rows pad x to whole batches, so that every batch has the shape
	// of the one trace; their outputs are dropped.
	rows, b := x.Shape[0], predictBatch(s)
	if rows%b != 0 || rows == 0 {
		padded := data.Zeros(append([]int{(rows/b + 1) * b}, x.Shape[1:]...)...)
		copy(padded.Data, x.Data)
		x = padded
	}
	dist := s.DistributeDataset(data.FromTensorSlices(x).Batch(b))
	var parts []data.Tensor
	it := dist.Iter()
	defer it.Close()
	for it.Next() {
		parts = append(parts, s.Gather(s.Run(m.predictStep(), it.Batch()), 0))
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	out := concatRows(parts)
	return out.Slice(0, rows).Clone()
}

// Evaluate runs the model in inference mode over a dataset of (inputs,
// labels) elements, already batched, and returns each metric's result by
// name after resetting it and updating it with every example (Keras's
// model.evaluate). The batches are distributed over the strategy's replicas
// as DistributeDataset does, padding dropped. It panics as Predict does, and
// with an error wrapping ErrUsage if an element has fewer than two
// components.
func (m *Sequential) Evaluate(ds *data.Dataset, metrics ...PredictionMetric) map[string]float64 {
	s := m.strategyOf("Evaluate")
	if ds == nil {
		panic(usageError("%s: Evaluate: want a dataset of (inputs, labels), got nil", m.name))
	}
	if spec := ds.ElementSpec(); spec != nil && len(spec) < 2 {
		panic(usageError("%s: Evaluate: want elements of (inputs, labels), got %d component(s)", m.name, len(spec)))
	}
	for _, mt := range metrics {
		mt.Reset()
	}
	it := s.DistributeDataset(ds).Iter()
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		if len(b.Replica(0)) < 2 {
			panic(usageError("%s: Evaluate: want elements of (inputs, labels), got %d component(s)", m.name, len(b.Replica(0))))
		}
		pred := s.Gather(s.Run(m.evaluateStep(), b), 0)
		labels := GatherBatch(b, 1)
		for _, mt := range metrics {
			mt.Update(labels, pred)
		}
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	out := make(map[string]float64, len(metrics))
	for _, mt := range metrics {
		out[mt.Name()] = mt.Result()
	}
	return out
}

func predictBatch(s *strategy.Mirrored) int {
	n := s.NumReplicasInSync()
	return (PredictBatch + n - 1) / n * n
}

// concatRows stacks tensors along axis 0.
func concatRows(parts []data.Tensor) data.Tensor {
	rows, size := 0, 0
	for _, p := range parts {
		rows += p.Shape[0]
		size += len(p.Data)
	}
	out := make([]float64, 0, size)
	for _, p := range parts {
		out = append(out, p.Data...)
	}
	return data.NewTensor(append([]int{rows}, parts[0].Shape[1:]...), out)
}
