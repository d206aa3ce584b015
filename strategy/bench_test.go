package strategy_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/bench"
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
			s, step, batch := mlpStep(b, n, []int{10, 16, 2}, 64)
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

// mlpStep is bench.MLPStep on n replicas, traced by one step.
func mlpStep(b *testing.B, n int, dims []int, globalBatch int, opts ...strategy.Option) (*strategy.Mirrored, func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor, *strategy.PerReplicaBatch) {
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithReplicas(n)}, opts...)...)
	b.Cleanup(func() { s.Close() })
	step, batch, done, err := bench.MLPStep(s, dims, globalBatch)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(done)
	s.Run(step, batch) // trace
	return s, step, batch
}

// benchDims is the MLP of `gotrain bench mlp`, with its global batch.
var benchDims, benchBatch = []int{784, 512, 512, 10}, 256

// BenchmarkMLPStep is the step of `gotrain bench mlp` on 2 replicas with and
// without WithCheckNumerics.
func BenchmarkMLPStep(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("check=%v", on), func(b *testing.B) {
			s, step, batch := mlpStep(b, 2, benchDims, benchBatch, strategy.WithCheckNumerics(on))
			b.ReportAllocs()
			for b.Loop() {
				s.Run(step, batch)
			}
		})
	}
}

// BenchmarkCheckNumerics is what WithCheckNumerics adds to a replica's part
// of that step: the scan of its gradients (or their operands) and outputs.
func BenchmarkCheckNumerics(b *testing.B) {
	s, _, _ := mlpStep(b, 2, benchDims, benchBatch)
	n, _ := strategy.CheckNumerics(s, 0)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := strategy.CheckNumerics(s, 0); err != nil {
			b.Fatal(err)
		}
	}
}
