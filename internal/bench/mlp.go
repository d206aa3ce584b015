// Package bench holds the training workloads that gotrain's benchmarks time,
// so that `gotrain bench` and the packages' go test benchmarks (gorgoniamodel's
// comparison with Gorgonia, internal/mpi's cluster step) time the same step.
package bench

import (
	"fmt"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// MLP measures training throughput, as `gotrain bench mlp` reports it:
// an MLP with layer widths dims (dims[0] inputs, nn.ReLU hidden layers, dims[last]
// classes, softmax cross-entropy, Adam) trained on one fixed random global
// batch of the given size with the given number of replicas, for steps timed
// steps after one untimed step (which traces). It returns examples per second.
// It returns an error for invalid arguments or a failed step.
func MLP(replicas int, dims []int, batch, steps int, dt graph.DType, opts ...strategy.Option) (samplesPerSec float64, err error) {
	if replicas < 1 || len(dims) < 2 || batch < 1 || steps < 1 {
		return 0, fmt.Errorf("bench: MLP: want replicas ≥ 1, at least 2 dims, batch ≥ 1, steps ≥ 1, got %d, %v, %d, %d", replicas, dims, batch, steps)
	}
	for _, d := range dims {
		if d < 1 {
			return 0, fmt.Errorf("bench: MLP: want dims ≥ 1, got %v", dims)
		}
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("bench: MLP: %v", v)
		}
	}()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithReplicas(replicas), strategy.WithDType(dt)}, opts...)...)
	defer s.Close()
	step, b, done, err := MLPStep(s, dims, batch)
	if err != nil {
		return 0, fmt.Errorf("bench: MLP: %w", err)
	}
	defer done()
	if _, err := s.TryRun(step, b); err != nil {
		return 0, err
	}
	start := time.Now()
	for range steps {
		if _, err := s.TryRun(step, b); err != nil {
			return 0, err
		}
	}
	return float64(batch*steps) / time.Since(start).Seconds(), nil
}

// MLPStep builds on s the MLP that MLP times (layer widths dims, ReLU hidden
// layers, softmax cross-entropy, Adam) and one fixed random global batch of
// batch examples, and returns the training step, that batch, and done,
// which releases the batch's iterator once the caller has stopped running
// the step. The step is not traced yet.
func MLPStep(s *strategy.Mirrored, dims []int, batch int) (step func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor, b *strategy.PerReplicaBatch, done func(), err error) {
	x := data.RandomNormal(1, batch, dims[0])
	y := data.RandomInts(2, dims[len(dims)-1], batch)
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(batch)).Iter()
	if !it.Next() {
		it.Close()
		return nil, nil, nil, fmt.Errorf("no batch: %v", it.Err())
	}
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential()
		for i, d := range dims[1:] {
			act := nn.ReLU
			if i == len(dims)-2 {
				act = nn.Linear
			}
			model.Add(nn.Dense(d, act))
		}
		opt = nn.NewAdam(0.001)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step = func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), batch)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	return step, it.Batch(), it.Close, nil
}
