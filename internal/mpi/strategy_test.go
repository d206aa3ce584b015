//go:build mpi && cgo

package mpi_test

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/mpi"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// train fits a 10-8-3 classifier to 103 examples in global batches of 16
// for 2 epochs on a strategy made with opts, and returns the per-step
// losses and every variable by name. after, when not nil, is called with
// the variables after every step.
func train(t *testing.T, dt graph.DType, newOpt func() nn.Optimizer, after func(step int, vars map[string][]float64), opts ...strategy.Option) ([]float64, map[string][]float64) {
	t.Helper()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithDType(dt), strategy.WithSeed(3)}, opts...)...)
	defer s.Close()
	x := data.RandomNormal(11, 103, 10)
	y := data.RandomInts(12, 3, 103)
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(16).Repeat(2))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(8, nn.Tanh), nn.Dense(3))
		opt = newOpt()
	})
	step := strategytest.ClassifierStep(model, opt, 16)
	var losses []float64
	for it := dist.Iter(); it.Next(); {
		out, err := s.TryRun(step, it.Batch())
		if err != nil {
			t.Fatalf("step %d: %v", len(losses)+1, err)
		}
		losses = append(losses, s.Reduce(strategy.Sum, out).Scalar())
		if after != nil {
			after(len(losses), variables(s))
		}
	}
	return losses, variables(s)
}

// variables is every variable of s by name.
func variables(s *strategy.Mirrored) map[string][]float64 {
	vars := map[string][]float64{}
	for _, v := range s.Variables() {
		vars[v.Name()] = v.Value()
	}
	return vars
}

// sameOnEveryRank reports ranks whose variables are not rank 0's bits.
func sameOnEveryRank(t *testing.T, world *mpi.World, what string, vars map[string][]float64) {
	t.Helper()
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	slices.Sort(names)
	h := fnv.New64a()
	for _, n := range names {
		for _, x := range vars[n] {
			h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)))
		}
	}
	sum := h.Sum64()
	all, err := world.AllGather([]float64{float64(uint32(sum)), float64(sum >> 32)})
	if err != nil {
		t.Fatal(err)
	}
	for r, a := range all {
		if !slices.Equal(a, all[0]) {
			t.Errorf("%s: rank %d's variables are not rank 0's bits", what, r)
		}
	}
}

// relDiff is max |a-b| / max |b|.
func relDiff(a, b []float64) float64 {
	scale, d := 0.0, 0.0
	for i := range b {
		scale = max(scale, math.Abs(b[i]))
		d = max(d, math.Abs(a[i]-b[i]))
	}
	if scale == 0 {
		return d
	}
	return d / scale
}

// TestStrategyMatchesOneReplica is the multi-worker equivalence property
// over MPI: every rank of the mpirun job is a worker of 1 or 2 replicas,
// and after 14 steps of Adam or SGD with momentum, in float32 and float64,
// the losses and weights match one replica trained in this process within
// 1e-5 and 1e-12, and every rank holds the same bits after every step.
func TestStrategyMatchesOneReplica(t *testing.T) {
	world, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]func() nn.Optimizer{
		"adam":         func() nn.Optimizer { return nn.NewAdam(0.01) },
		"sgd-momentum": func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9)) },
	}
	for _, replicas := range []int{1, 2} {
		for _, dt := range []struct {
			dt  graph.DType
			tol float64
		}{{graph.Float32, 1e-5}, {graph.Float64, 1e-12}} {
			for _, name := range []string{"adam", "sgd-momentum"} {
				what := fmt.Sprintf("%d ranks × %d replicas, %v, %s", world.Size(), replicas, dt.dt, name)
				wantLoss, want := train(t, dt.dt, opts[name], nil, strategy.WithReplicas(1))
				after := func(step int, vars map[string][]float64) {
					sameOnEveryRank(t, world, fmt.Sprintf("%s, after step %d", what, step), vars)
				}
				gotLoss, got := train(t, dt.dt, opts[name], after, strategy.WithCluster(world), strategy.WithReplicas(replicas))
				if len(gotLoss) != 14 || relDiff(gotLoss, wantLoss) > dt.tol {
					t.Errorf("%s: losses %v, one replica %v", what, gotLoss, wantLoss)
				}
				for n := range want {
					if d := relDiff(got[n], want[n]); d > dt.tol {
						t.Errorf("%s: %s differs from one replica's by %.3g", what, n, d)
					}
				}
			}
		}
	}
}
