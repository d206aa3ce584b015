package strategy_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// splitRun trains a 700-100-3 model (its 70,000-element kernel is cut
// between replicas) for steps steps with an update that subtracts half the
// summed gradient, registered with or without a Split. It returns the final
// weights and how often the Split's Begin and End ran.
func splitRun(t *testing.T, n int, dt graph.DType, split bool, steps int) (weights [][]float64, begins, ends int) {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(5))
	defer closeStrategy(t, s)
	const rows = 12
	x := data.RandomNormal(41, rows, 700)
	y := data.RandomInts(42, 3, rows)
	var model *nn.Sequential
	s.Scope(func() { model = nn.NewSequential(nn.Dense(100, nn.Tanh), nn.Dense(3)) })
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	var nBegin, nEnd atomic.Int32
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), rows)
		vars := model.TrainableVariables()
		grads := ctx.Gradients(loss, vars)
		u := strategy.Update{Name: "half", Vars: vars, Grads: grads, Apply: func(gs []strategy.Grad) {
			for _, g := range gs {
				halfStep(g, 0)
			}
		}}
		if split {
			u.Split = &strategy.Split{
				Begin: func() { nBegin.Add(1) },
				Part: func(i, off int, g strategy.Grad) {
					if g.Var != vars[i] {
						panic(fmt.Sprintf("Part(%d, ...) got variable %s, want %s", i, g.Var.Name(), vars[i].Name()))
					}
					if l := len(g.F32) + len(g.F64); l > strategy.SplitBlock {
						panic(fmt.Sprintf("Part got %d elements, want at most %d", l, strategy.SplitBlock))
					}
					halfStep(g, off)
				},
				End: func() { nEnd.Add(1) },
			}
		}
		ctx.ApplyUpdate(u)
		return loss
	}
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(rows)).Iter()
	defer it.Close()
	if !it.Next() {
		t.Fatalf("no batch: %v", it.Err())
	}
	for range steps {
		s.Run(step, it.Batch())
	}
	for _, v := range s.Variables() {
		weights = append(weights, v.Value())
	}
	return weights, int(nBegin.Load()), int(nEnd.Load())
}

// halfStep subtracts half of g from elements [off, off+len) of its variable.
func halfStep(g strategy.Grad, off int) {
	if g.F32 != nil {
		w := g.Var.F32()[off:]
		for i, v := range g.F32 {
			w[i] -= 0.5 * v
		}
		return
	}
	w := g.Var.F64()[off:]
	for i, v := range g.F64 {
		w[i] -= 0.5 * v
	}
}

// An update applied in parts by the replicas gives the same bits as the same
// update applied whole by Apply: every element is updated once, with the
// gradient summed in the same order.
func TestSplitMatchesApply(t *testing.T) {
	const steps = 3
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		for n := 1; n <= 4; n++ {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				want, _, _ := splitRun(t, n, dt, false, steps)
				got, begins, ends := splitRun(t, n, dt, true, steps)
				for i := range want {
					if !slices.Equal(got[i], want[i]) {
						t.Errorf("variable %d: split update differs from Apply (max difference %g)", i, maxAbsDiff(got[i], want[i]))
					}
				}
				if begins != steps || ends != steps {
					t.Errorf("Begin ran %d times, End %d, want %d each", begins, ends, steps)
				}
			})
		}
	}
}

func maxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// A failed step runs Begin but neither Part nor End, and changes nothing.
func TestSplitFailedStep(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(3), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	var w *graph.Variable
	const size = strategy.SplitMin + 77 // cut three ways, unevenly
	s.Scope(func() { w = s.CreateVariable("w", []int{size}, nil) })
	var begins, parts, ends atomic.Int32
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		loss := graph.Sum(graph.Mul(x, ctx.Graph().Var(w)))
		ctx.ApplyUpdate(strategy.Update{
			Name: "count", Vars: []*graph.Variable{w}, Grads: ctx.Gradients(loss, []*graph.Variable{w}),
			Apply: func([]strategy.Grad) { t.Error("Apply ran for an update with a Split") },
			Split: &strategy.Split{
				Begin: func() { begins.Add(1) },
				Part:  func(_, off int, g strategy.Grad) { parts.Add(1); halfStep(g, off) },
				End:   func() { ends.Add(1) },
			},
		})
		return loss
	}
	x := data.RandomNormal(7, 3, size)
	s.Run(step, x)
	if begins.Load() != 1 || ends.Load() != 1 || parts.Load() < 3 {
		t.Fatalf("a good step: Begin %d, End %d, Part %d times; want 1, 1 and at least one per replica", begins.Load(), ends.Load(), parts.Load())
	}
	before, partsBefore := w.Value(), parts.Load()
	undo := strategy.SetTestHookRun(func(r int) error {
		if r == 2 {
			return errors.New("device lost")
		}
		return nil
	})
	_, err := s.TryRun(step, x)
	undo()
	if err == nil || err.Error() != "strategy: replica 2: device lost" {
		t.Fatalf("TryRun error %q, want replica 2's", err)
	}
	if begins.Load() != 2 || ends.Load() != 1 || parts.Load() != partsBefore {
		t.Errorf("after a failed step: Begin ran %d times, End %d, Part %d; want 2, 1 and still %d", begins.Load(), ends.Load(), parts.Load(), partsBefore)
	}
	if !slices.Equal(w.Value(), before) {
		t.Error("a failed step changed the variable")
	}
}

// A step that returns its gradients gets each replica's own, as in
// TensorFlow: the replicas copy their outputs before the update overwrites
// a gradient buffer with the cross-replica sum. Their sum is what SGD with
// rate 1 subtracted.
func TestStepOutputsAreLocal(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	var w *graph.Variable
	var opt nn.Optimizer
	const size = strategy.SplitMin + 5 // cut between the replicas
	s.Scope(func() {
		w = s.CreateVariable("w", []int{size}, nil)
		opt = nn.NewSGD(1)
	})
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		loss := graph.Sum(graph.Mul(graph.Mul(x, x), ctx.Graph().Var(w)))
		grads := ctx.Gradients(loss, []*graph.Variable{w})
		opt.ApplyGradients(ctx, grads)
		return grads[0]
	}
	xs := []data.Tensor{data.RandomNormal(9, 1, size), data.RandomNormal(10, 1, size)}
	before := w.Value()
	got := s.Run(step, strategy.NewPerReplica(xs...)).Values()
	after := w.Value()
	for r, x := range xs {
		for i, v := range x.Data {
			if got[r].Data[i] != v*v {
				t.Fatalf("replica %d's returned gradient[%d] = %g, want its own x² = %g", r, i, got[r].Data[i], v*v)
			}
		}
	}
	for i := range before {
		if want := before[i] - (got[0].Data[i] + got[1].Data[i]); after[i] != want {
			t.Fatalf("w[%d] = %g after the step, want %g minus both replicas' gradients = %g", i, after[i], before[i], want)
		}
	}
}
