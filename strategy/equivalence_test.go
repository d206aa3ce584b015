package strategy_test

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

// trainRun trains a 10-hidden-3 classifier on 103 examples in global batches
// of 16 (neither divides) for epochs passes with n replicas, and returns the
// final weights by variable name plus the per-step losses.
func trainRun(t *testing.T, n int, dt graph.DType, newOpt func() nn.Optimizer, epochs, hidden int) (map[string][]float64, []float64) {
	t.Helper()
	return trainRunWith(t, dt, newOpt, epochs, hidden, strategy.WithReplicas(n))
}

// trainRunWith is trainRun on a strategy made with opts.
func trainRunWith(t *testing.T, dt graph.DType, newOpt func() nn.Optimizer, epochs, hidden int, opts ...strategy.Option) (map[string][]float64, []float64) {
	t.Helper()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithDType(dt), strategy.WithSeed(3)}, opts...)...)
	defer closeStrategy(t, s)
	const globalBatch = 16
	x := data.RandomNormal(11, 103, 10)
	y := data.RandomInts(12, 3, 103)
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(globalBatch).Repeat(epochs))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(hidden, nn.Tanh), nn.Dense(3))
		opt = newOpt()
	})
	step := strategytest.ClassifierStep(model, opt, globalBatch)
	var losses []float64
	it := dist.Iter()
	for it.Next() {
		losses = append(losses, s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return strategytest.Variables(s), losses
}

func closeStrategy(t *testing.T, s *strategy.Mirrored) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// maxRelDiff returns max |a-b| / max(|b|) over the elements: the error
// relative to the tensor's scale, so near-zero elements do not dominate.
func maxRelDiff(a, b []float64) float64 {
	scale := 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	d := 0.0
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		d = max(d, math.Abs(a[i]-b[i]))
	}
	if scale == 0 {
		return d
	}
	return d / scale
}

// TestReplicasMatchOneReplica is the core property of data parallelism: N
// replicas on the same global batches give the weights of one replica.
func TestReplicasMatchOneReplica(t *testing.T) {
	// The wide cases (a 10×6600 kernel) have the replicas cut the update
	// of a variable between them (strategy.Split); in the narrow ones each
	// replica updates whole variables. The wide ones run in float64 only:
	// in float32 their 14 steps drift 1e-5 to 3e-5 apart between replica
	// counts whether or not the update is cut (a sum over 16 rows rounds
	// otherwise than two over 8), past the tolerance of the narrow model.
	const narrow, wide = 8, 6600
	opts := []struct {
		name   string
		new    func() nn.Optimizer
		hidden int
	}{
		{"adam", func() nn.Optimizer { return nn.NewAdam(0.01) }, narrow},
		{"adam-wide", func() nn.Optimizer { return nn.NewAdam(0.01) }, wide},
		{"sgd-momentum", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9)) }, narrow},
		{"sgd-nesterov-wide", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9), nn.WithNesterov()) }, wide},
		{"adamw", func() nn.Optimizer { return nn.NewAdamW(0.01, nn.WithWeightDecay(0.05)) }, narrow},
		{"rmsprop-momentum-wide", func() nn.Optimizer { return nn.NewRMSprop(0.01, nn.WithMomentum(0.5)) }, wide},
		// Clipping by global norm must see the cross-replica sum, not one replica's share.
		{"adam-clipped-cosine", func() nn.Optimizer {
			return nn.NewAdam(0, nn.WithClipGlobalNorm(0.05), nn.WithSchedule(nn.CosineDecay{Initial: 0.002, DecaySteps: 14, WarmupSteps: 3, WarmupTarget: 0.02}))
		}, narrow},
		{"accumulated-sgd", func() nn.Optimizer { return nn.Accumulate(nn.NewSGD(0.1, nn.WithMomentum(0.9)), 3) }, narrow},
	}
	dts := []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float32, 1e-5}, {graph.Float64, 1e-12}}
	for _, o := range opts {
		for _, d := range dts {
			if o.hidden == wide && d.dt == graph.Float32 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", o.name, d.dt), func(t *testing.T) {
				want, wantLoss := trainRun(t, 1, d.dt, o.new, 2, o.hidden)
				if len(wantLoss) != 14 {
					t.Fatalf("1 replica ran %d steps, want 14", len(wantLoss))
				}
				for n := 2; n <= 4; n++ {
					got, gotLoss := trainRun(t, n, d.dt, o.new, 2, o.hidden)
					if len(got) != len(want) {
						t.Fatalf("%d replicas: %d variables, want %d", n, len(got), len(want))
					}
					worst, where := 0.0, ""
					for name, w := range want {
						if r := maxRelDiff(got[name], w); r > worst {
							worst, where = r, name
						}
					}
					if worst > d.tol {
						t.Errorf("%d replicas: weights differ from 1 replica by %.3g (in %s), want ≤ %g", n, worst, where, d.tol)
					}
					if r := maxRelDiff(gotLoss, wantLoss); r > d.tol {
						t.Errorf("%d replicas: losses %v, 1 replica %v", n, gotLoss, wantLoss)
					}
					t.Logf("%d replicas: max relative weight difference %.3g", n, worst)
				}
			})
		}
	}
}
