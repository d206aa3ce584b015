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
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(5), strategy.WithDeferProducts(false))
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
		apply := strategy.UpdateFunc(func(gs []strategy.Grad) {
			for _, g := range gs {
				halfStep(g, 0)
			}
		})
		u := strategy.Registration{Name: "half", Vars: vars, Grads: grads, Update: apply}
		if split {
			u.Update = splitFuncs{
				UpdateFunc: apply,
				begin:      func() { nBegin.Add(1) },
				part: func(i, off int, g strategy.Grad) {
					if g.Var != vars[i] {
						panic(fmt.Sprintf("Part(%d, ...) got variable %s, want %s", i, g.Var.Name(), vars[i].Name()))
					}
					if l := len(g.F32) + len(g.F64); l > strategy.SplitBlock {
						panic(fmt.Sprintf("Part got %d elements, want at most %d", l, strategy.SplitBlock))
					}
					halfStep(g, off)
				},
				end: func() { nEnd.Add(1) },
			}
		}
		ctx.ApplyUpdate(u)
		return loss
	}
	return trainOn(t, s, step, x, y, steps), int(nBegin.Load()), int(nEnd.Load())
}

// splitFuncs is a Split of functions.
type splitFuncs struct {
	strategy.UpdateFunc
	begin func()
	part  func(i, off int, g strategy.Grad)
	end   func()
}

func (f splitFuncs) Begin()                           { f.begin() }
func (f splitFuncs) Part(i, off int, g strategy.Grad) { f.part(i, off, g) }
func (f splitFuncs) End()                             { f.end() }

// trainOn runs step steps times on the one global batch of x and y, and
// returns the values of s's variables.
func trainOn(t *testing.T, s *strategy.Mirrored, step any, x, y data.Tensor, steps int) (weights [][]float64) {
	t.Helper()
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(x.Shape[0])).Iter()
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
	return weights
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
// gradient summed in the same order. (A deferred product is summed by the
// BLAS, which may round otherwise: TestDeferredProducts.)
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

// TestDeferredProducts checks that the weight gradients of a model whose
// update the replicas share are taken out of the programs and summed from
// every replica's operands after the barrier, and that training ends with
// the weights it ends with when the programs compute them. A weight
// gradient the step returns stays in the programs.
func TestDeferredProducts(t *testing.T) {
	const steps = 3
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		tol := 1e-12
		if dt == graph.Float32 {
			tol = 1e-5
		}
		for n := 1; n <= 4; n++ {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				want, none := deferRun(t, n, dt, false, false, steps)
				got, deferred := deferRun(t, n, dt, true, false, steps)
				returned, kept := deferRun(t, n, dt, true, true, steps)
				// The 700×100 kernel in a part per replica, the 100×3
				// kernel whole on one; biases are not products.
				if none != 0 || deferred != n+1 || kept != 1 {
					t.Errorf("deferred parts: %d with deferring off, %d on, %d when the step returns the first kernel's gradient; want 0, %d, 1", none, deferred, kept, n+1)
				}
				for i := range want {
					if d := maxRelDiff(got[i], want[i]); d > tol {
						t.Errorf("variable %d: deferred products end %g away from products in the programs, want ≤ %g", i, d, tol)
					}
					if d := maxRelDiff(returned[i], want[i]); d > tol {
						t.Errorf("variable %d with a returned gradient: %g away, want ≤ %g", i, d, tol)
					}
				}
			})
		}
	}
}

// deferRun trains splitRun's 700-100-3 model with SGD for steps steps,
// deferring products or not, and returns the weights and the deferred
// parts. With returnGrad the step returns the first kernel's gradient.
func deferRun(t *testing.T, n int, dt graph.DType, deferOn, returnGrad bool, steps int) (weights [][]float64, deferred int) {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(5), strategy.WithDeferProducts(deferOn))
	defer closeStrategy(t, s)
	const rows = 13 // divides by no replica count past 1: padded and masked
	x := data.RandomNormal(43, rows, 700)
	y := data.RandomInts(44, 3, rows)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(100, nn.ReLU), nn.Dense(3))
		// SGD: Adam would turn a last-bit difference in a near-zero
		// gradient into a step of its learning rate.
		opt = nn.NewSGD(0.1)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) []*nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), rows)
		grads := ctx.Gradients(loss, model.TrainableVariables())
		opt.ApplyGradients(ctx, grads)
		if returnGrad {
			return []*nn.Tensor{loss, grads[0]}
		}
		return []*nn.Tensor{loss}
	}
	return trainOn(t, s, step, x, y, steps), strategy.DeferredProducts(s)
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
		ctx.ApplyUpdate(strategy.Registration{
			Name: "count", Vars: []*graph.Variable{w}, Grads: ctx.Gradients(loss, []*graph.Variable{w}),
			Update: splitFuncs{
				UpdateFunc: func([]strategy.Grad) { t.Error("Apply ran for an update with a Split") },
				begin:      func() { begins.Add(1) },
				part:       func(_, off int, g strategy.Grad) { parts.Add(1); halfStep(g, off) },
				end:        func() { ends.Add(1) },
			},
		})
		return loss
	}
	x := s.Broadcast(data.RandomNormal(7, 3, size))
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
