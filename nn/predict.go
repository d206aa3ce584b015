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

// ownerStrategy returns the strategy current when the layer or model was
// created, nil outside any scope (strategyFor).
func (l *layerBase) ownerStrategy() *strategy.Mirrored { return l.owner }

// stepCacher is a model that keeps the step functions Predict and Evaluate
// run, so that the strategy's trace cache finds them at every call
// (Sequential). For another model they are new closures at each call, which
// the strategy traces (calls) again but does not compile again, since their
// graphs are those of the cached trace.
type stepCacher interface {
	predictStep() func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor
	evaluateStep() func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor
}

// predictStep is the step Predict and Evaluate run: the model in inference
// mode (training false). It is made once per model, so the strategy's trace
// cache finds it at every call.
func (m *Sequential) predictStep() func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor {
	if m.predict == nil {
		m.predict = newPredictStep(m)
	}
	return m.predict
}

// evaluateStep is predictStep for batches of (inputs, labels, ...).
func (m *Sequential) evaluateStep() func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor {
	if m.evaluate == nil {
		m.evaluate = newEvaluateStep(m)
	}
	return m.evaluate
}

// predictStepOf returns m's cached predict step, or a new one.
func predictStepOf(m Model) func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor {
	if c, ok := m.(stepCacher); ok {
		return c.predictStep()
	}
	return newPredictStep(m)
}

// evaluateStepOf returns m's cached evaluate step, or a new one.
func evaluateStepOf(m Model) func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor {
	if c, ok := m.(stepCacher); ok {
		return c.evaluateStep()
	}
	return newEvaluateStep(m)
}

func newPredictStep(m Model) func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor {
	return func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor { return m.Call(ctx, x, false) }
}

func newEvaluateStep(m Model) func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor {
	return func(ctx *strategy.ReplicaContext, x *Tensor, _ ...*Tensor) *Tensor { return m.Call(ctx, x, false) }
}

// Predict is the function Predict for m.
func (m *Sequential) Predict(x data.Tensor) data.Tensor { return Predict(m, x) }

// Evaluate is the function Evaluate for m.
func (m *Sequential) Evaluate(ds *data.Dataset, metrics ...PredictionMetric) map[string]float64 {
	return Evaluate(m, ds, metrics...)
}

// Predict returns m's outputs for every row of x in inference mode
// (Keras's model.predict), outside any step function: x is split into
// global batches of PredictBatch rows (the last one padded with zero rows)
// distributed over the strategy's replicas, as strategy.Run and Gather
// would, and the rows come back in order. The strategy is the one m (a
// layer, a Sequential) was created under, else the one its variables belong
// to, else the current one: a model of one's own not built yet predicts
// inside s.Scope. The model is traced once and the trace is
// cached like a step. It panics with the error strategy.Run would (a wrong
// input width, a NaN in an output with the numerics check on), and with an
// error wrapping ErrUsage if the model has no strategy or x has no batch
// axis.
func Predict(m Model, x data.Tensor) data.Tensor {
	if m == nil {
		panic(usageError("Predict: want a model, got nil"))
	}
	s := strategyFor(m, "Predict")
	if len(x.Shape) == 0 {
		panic(usageError("%s: Predict: want inputs with a batch axis, got a scalar", modelName(m)))
	}
	// Zero rows pad x to whole batches, so that every batch has the shape
	// of the one trace; their outputs are dropped.
	rows, b := x.Shape[0], predictBatch(s)
	if rows%b != 0 || rows == 0 {
		padded := data.Zeros(append([]int{(rows/b + 1) * b}, x.Shape[1:]...)...)
		copy(padded.Data, x.Data)
		x = padded
	}
	step := predictStepOf(m)
	dist := s.DistributeDataset(data.FromTensorSlices(x).Batch(b))
	var parts []data.Tensor
	it := dist.Iter()
	defer it.Close()
	for it.Next() {
		parts = append(parts, s.Gather(s.Run(step, it.Batch()), 0))
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	out := concatRows(parts)
	return out.Slice(0, rows).Clone()
}

// Evaluate runs m in inference mode over a dataset of (inputs, labels)
// elements, already batched, and returns each metric's result by name after
// resetting it and updating it with every example (Keras's model.evaluate).
// The batches are distributed over the strategy's replicas (found as for
// Predict) as DistributeDataset does, padding dropped. It panics as Predict
// does, and with an error wrapping ErrUsage if an element has fewer than two
// components.
func Evaluate(m Model, ds *data.Dataset, metrics ...PredictionMetric) map[string]float64 {
	if m == nil {
		panic(usageError("Evaluate: want a model, got nil"))
	}
	s := strategyFor(m, "Evaluate")
	name := modelName(m)
	if ds == nil {
		panic(usageError("%s: Evaluate: want a dataset of (inputs, labels), got nil", name))
	}
	if spec := ds.ElementSpec(); spec != nil && len(spec) < 2 {
		panic(usageError("%s: Evaluate: want elements of (inputs, labels), got %d component(s)", name, len(spec)))
	}
	for _, mt := range metrics {
		mt.Reset()
	}
	step := evaluateStepOf(m)
	it := s.DistributeDataset(ds).Iter()
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		if len(b.Replica(0)) < 2 {
			panic(usageError("%s: Evaluate: want elements of (inputs, labels), got %d component(s)", name, len(b.Replica(0))))
		}
		pred := s.Gather(s.Run(step, b), 0)
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
