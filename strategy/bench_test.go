package strategy_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

var sinkLoss float64

// BenchmarkSeedStep is the seed notebook's step (10-16-2 MLP, Adam, global
// batch 64) on 1 and 2 replicas: Run plus Reduce per step, so the figure is
// the strategy's overhead around a tiny amount of compute.
func BenchmarkSeedStep(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			s := strategy.NewMirrored(strategy.WithReplicas(n))
			defer s.Close()
			const globalBatch = 64
			x := data.RandomNormal(7, globalBatch, 10)
			y := data.RandomInts(8, 2, globalBatch)
			it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(globalBatch)).Iter()
			defer it.Close()
			it.Next()
			batch := it.Batch()
			var model *nn.Sequential
			var opt nn.Optimizer
			s.Scope(func() {
				model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
				opt = nn.NewAdam(0.001)
			})
			lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
			step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
				loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), globalBatch)
				opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
				return loss
			}
			s.Run(step, batch) // trace
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				sinkLoss = s.Reduce(strategy.Sum, s.Run(step, batch)).Scalar()
			}
		})
	}
}

// BenchmarkProgramRun is the same step's compiled program alone on one
// replica, to tell the engine's time from the strategy's.
func BenchmarkProgramRun(b *testing.B) {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 64, 10)
	y := g.Placeholder("y", 64)
	w1 := graph.NewVariable("w1", []int{10, 16}, graph.Float32, nil)
	b1 := graph.NewVariable("b1", []int{16}, graph.Float32, nil)
	w2 := graph.NewVariable("w2", []int{16, 2}, graph.Float32, nil)
	b2 := graph.NewVariable("b2", []int{2}, graph.Float32, nil)
	h := graph.Dense(x, g.Var(w1), g.Var(b1), graph.ReLU)
	loss := graph.Scale(graph.Sum(graph.SparseSoftmaxCrossEntropy(y, graph.Dense(h, g.Var(w2), g.Var(b2), graph.Linear))), 1.0/64)
	grads := g.Gradients(loss, []*graph.Node{g.Var(w1), g.Var(b1), g.Var(w2), g.Var(b2)})
	p, err := g.Compile(append(grads, loss)...)
	if err != nil {
		b.Fatal(err)
	}
	p.Feed(x, data.RandomNormal(7, 64, 10).Data)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
