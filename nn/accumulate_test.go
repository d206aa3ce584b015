package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// trainMLP trains a small classifier with the given replicas, optimizer and
// global batch, on 36 examples, for the given number of passes, and returns
// its weights.
func trainMLP(t *testing.T, replicas int, newOpt func() nn.Optimizer, batch, globalBatch, epochs int) []float64 {
	t.Helper()
	s := newStrategy(t, strategy.WithReplicas(replicas))
	x := data.RandomNormal(11, 36, 5)
	y := data.RandomInts(12, 3, 36)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(4, nn.Tanh), nn.Dense(3))
		opt = newOpt()
	})
	step := strategytest.ClassifierStep(model, opt, globalBatch)
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(batch))
	for range epochs {
		it := dist.Iter()
		for it.Next() {
			s.Run(step, it.Batch())
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
	}
	var w []float64
	for _, v := range model.Variables() {
		w = append(w, v.Value()...)
	}
	return w
}

// TestAccumulateEqualsOneLargeStep: k steps of b examples with losses
// averaged over k·b, accumulated, update the weights as one step of k·b.
func TestAccumulateEqualsOneLargeStep(t *testing.T) {
	opts := []struct {
		name string
		opt  func() nn.Optimizer
	}{
		{"sgd-momentum", func() nn.Optimizer { return nn.NewSGD(0.5, nn.WithMomentum(0.9)) }},
		{"adam-clip", func() nn.Optimizer { return nn.NewAdam(0.05, nn.WithClipGlobalNorm(0.1)) }},
		{"rmsprop-schedule", func() nn.Optimizer {
			return nn.NewRMSprop(0, nn.WithSchedule(nn.ExponentialDecay{Initial: 0.01, DecaySteps: 1, DecayRate: 0.5}))
		}},
	}
	for _, o := range opts {
		for _, k := range []int{1, 3} {
			for _, replicas := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/k=%d/replicas=%d", o.name, k, replicas), func(t *testing.T) {
					const b = 4
					want := trainMLP(t, 1, o.opt, k*b, k*b, 2)
					var acc *nn.Accumulator
					got := trainMLP(t, replicas, func() nn.Optimizer { acc = nn.Accumulate(o.opt(), k); return acc }, b, k*b, 2)
					for i := range want {
						if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
							t.Fatalf("weight %d: accumulated %.15g, one large step %.15g", i, got[i], want[i])
						}
					}
					if want := 2 * 36 / (k * b); acc.Iterations() != want || acc.Pending() != 0 {
						t.Errorf("Iterations %d, Pending %d; want %d and 0", acc.Iterations(), acc.Pending(), want)
					}
				})
			}
		}
	}
}

func ExampleAccumulate() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.Accumulator
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{1}, []float64{0})
		opt = nn.Accumulate(nn.NewSGD(1), 3)
	})
	// loss = -w: each step's gradient is -1; every 3rd step applies -3.
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Neg(graph.Sum(ctx.Graph().Var(w)))
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	for range 4 {
		s.Run(step)
		fmt.Printf("w = %.1f, updates %d, pending %d\n", w.Value()[0], opt.Iterations(), opt.Pending())
	}
	// Output:
	// w = 0.0, updates 0, pending 1
	// w = 0.0, updates 0, pending 2
	// w = 3.0, updates 1, pending 0
	// w = 3.0, updates 1, pending 1
}
