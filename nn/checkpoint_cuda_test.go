//go:build cuda

package nn_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// gpuCkptRun is the quick-start model with Adam on a strategy of the given
// devices (float32).
type gpuCkptRun struct {
	s     *strategy.Mirrored
	model *nn.Sequential
	opt   nn.Optimizer
	step  func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
	dist  *strategy.DistributedDataset
}

func newGPUCkptRun(t *testing.T, clip bool, devs ...string) *gpuCkptRun {
	t.Helper()
	r := &gpuCkptRun{s: strategy.NewMirrored(strategy.WithDevices(devs...), strategy.WithSeed(9))}
	t.Cleanup(func() {
		if err := r.s.Close(); err != nil {
			t.Error(err)
		}
	})
	r.s.Scope(func() {
		r.model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
		if clip {
			r.opt = nn.NewAdam(0.01, nn.WithClipGlobalNorm(1))
		} else {
			r.opt = nn.NewAdam(0.01)
		}
	})
	r.step = strategytest.ClassifierStep(r.model, r.opt, 64)
	x := data.RandomNormal(7, 256, 10)
	y := data.RandomInts(8, 2, 256)
	r.dist = r.s.DistributeDataset(data.FromTensorSlices(x, y).Batch(64))
	return r
}

func (r *gpuCkptRun) epoch(t *testing.T) {
	t.Helper()
	it := r.dist.Iter()
	for it.Next() {
		if _, err := r.s.TryRun(r.step, it.Batch()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIssue13CheckpointAcrossDevices saves a checkpoint from GPU replicas
// and restores it on CPU replicas, and the reverse: every variable (weights,
// Adam's slots, the step counter) is equal within 1e-6, and one more epoch
// on each side still agrees to 1e-5; for the update on the devices and on
// the host (clipping).
func TestIssue13CheckpointAcrossDevices(t *testing.T) {
	pairs := []struct{ from, to []string }{
		{[]string{"gpu:0", "gpu:0"}, []string{"cpu:0"}},
		{[]string{"cpu:0", "cpu:0"}, []string{"gpu:0", "gpu:1"}},
	}
	for _, clip := range []bool{false, true} {
		for _, p := range pairs {
			name := strings.Join(p.from, ",") + "→" + strings.Join(p.to, ",")
			if clip {
				name += "/clip"
			}
			t.Run(name, func(t *testing.T) {
				src := newGPUCkptRun(t, clip, p.from...)
				src.epoch(t)
				src.epoch(t)
				path := filepath.Join(t.TempDir(), "model.ckpt")
				if err := nn.SaveCheckpoint(path, src.s); err != nil {
					t.Fatal(err)
				}
				dst := newGPUCkptRun(t, clip, p.to...)
				dst.s.Scope(func() {
					dst.model.Build([]int{1, 10})
					nn.BuildOptimizer(dst.opt, dst.model.TrainableVariables())
				})
				if err := nn.RestoreCheckpoint(path, dst.s); err != nil {
					t.Fatal(err)
				}
				compareVars(t, dst.s, src.s, 1e-6)
				if got, want := dst.opt.Iterations(), src.opt.Iterations(); got != want {
					t.Errorf("restored Iterations() = %d, want %d", got, want)
				}
				src.epoch(t)
				dst.epoch(t)
				compareVars(t, dst.s, src.s, 1e-5)
			})
		}
	}
}

// compareVars fails unless every variable of got is want's of the same name
// within tol, relative to the variable's largest magnitude.
func compareVars(t *testing.T, got, want *strategy.Mirrored, tol float64) {
	t.Helper()
	wv := map[string][]float64{}
	for _, v := range want.Variables() {
		wv[v.Name()] = v.Value()
	}
	gv := got.Variables()
	if len(gv) != len(wv) {
		t.Fatalf("%d variables, want %d", len(gv), len(wv))
	}
	for _, v := range gv {
		w, ok := wv[v.Name()]
		if !ok {
			t.Fatalf("no variable %q in the source", v.Name())
		}
		g := v.Value()
		scale := 1e-30
		for _, x := range w {
			scale = math.Max(scale, math.Abs(x))
		}
		for i := range w {
			if d := math.Abs(g[i]-w[i]) / scale; d > tol || math.IsNaN(d) {
				t.Fatalf("%s[%d] = %.9g, want %.9g (relative %.3g > %g)", v.Name(), i, g[i], w[i], d, tol)
			}
		}
	}
}
