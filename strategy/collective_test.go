package strategy_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// trainThroughAllReduce trains w [3] with SGD on a loss that depends on the
// global mean of z = x·w (all replicas' real rows) through tanh(z·mean), 23
// rows in global batches of 8. With allReduce false the mean is computed
// locally, which is the global mean only with one replica: the reference.
func trainThroughAllReduce(t *testing.T, n int, allReduce bool) []float64 {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	var w *graph.Variable
	var opt nn.Optimizer
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{3, 1}, []float64{0.3, -0.2, 0.5})
		opt = nn.NewSGD(0.5)
	})
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		g := ctx.Graph()
		z := graph.MatMul(x, g.Var(w)) // [rows, 1]
		sum := graph.MaskedSum(z, ctx.Mask())
		if allReduce {
			sum = ctx.AllReduce(strategy.Sum, sum)
		}
		mean := graph.Div(sum, ctx.GlobalCount())
		per := graph.Reshape(graph.Activate(graph.Mul(z, mean), graph.Tanh), -1)
		loss := graph.Div(graph.Sum(graph.Mul(per, ctx.Mask())), ctx.GlobalCount())
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*graph.Variable{w}))
		return loss
	}
	x := data.RandomNormal(21, 23, 3)
	for it := s.DistributeDataset(data.FromTensorSlices(x).Batch(8).Repeat(2)).Iter(); it.Next(); {
		s.Run(step, it.Batch())
	}
	return w.Value()
}

// TestAllReduceIsDifferentiable: a loss through a cross-replica mean trains
// N replicas exactly like one replica computing the mean itself. Were the
// reduction's gradient missing (a stop-gradient), the mean's share of the
// gradient would be lost for every N, 1 included, and the weights would
// differ from the reference.
func TestAllReduceIsDifferentiable(t *testing.T) {
	want := trainThroughAllReduce(t, 1, false)
	for n := 1; n <= 4; n++ {
		got := trainThroughAllReduce(t, n, true)
		if d := maxRelDiff(got, want); d > 1e-12 {
			t.Errorf("%d replicas: weights %v, reference %v (relative difference %.3g)", n, got, want, d)
		}
	}
}

// TestFailureReleasesAllReduce: a replica failing before an all-reduction
// releases the others waiting in it; the error names the failed replica, not
// one that was released, and the next step runs.
func TestFailureReleasesAllReduce(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(3), strategy.WithDType(graph.Float32))
	defer closeStrategy(t, s)
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return ctx.AllReduce(strategy.Sum, graph.Sum(x))
	}
	x := data.RandomNormal(3, 6, 2)
	b := []any{strategy.NewPerReplica(x, x, x)}
	s.Run(step, b...)
	undo := strategy.SetTestHookRun(func(r int) error {
		if r == 2 {
			time.Sleep(10 * time.Millisecond) // the others are waiting by now
			return errors.New("device lost")
		}
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := s.TryRun(step, b...)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("TryRun hangs: replicas waiting in the all-reduction were not released")
	}
	undo()
	var re *strategy.ReplicaError
	if !errors.As(err, &re) || re.Replica != 2 || re.Others != 0 || err.Error() != "strategy: replica 2: device lost" {
		t.Fatalf("TryRun error %v, want replica 2's own failure alone", err)
	}
	got := s.Run(step, b...)
	want := 0.0
	for _, v := range x.Data {
		want += 3 * float64(float32(v))
	}
	for r, v := range got.Values() {
		if d := v.Scalar() - want; d > 1e-4 || d < -1e-4 {
			t.Errorf("after the failure: replica %d: %v, want %v", r, v.Scalar(), want)
		}
	}
}

// TestAllReduceMismatchIsTraceError: replicas building different
// all-reductions fail at trace time instead of hanging.
func TestAllReduceMismatchIsTraceError(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float32))
	defer closeStrategy(t, s)
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		y := ctx.AllReduce(strategy.Sum, graph.Sum(x))
		if ctx.ReplicaID() == 1 {
			y = ctx.AllReduce(strategy.Sum, y)
		}
		return y
	}
	x := data.RandomNormal(3, 4, 2)
	_, err := s.TryRun(step, strategy.NewPerReplica(x, x))
	var re *strategy.ReplicaError
	if !errors.As(err, &re) || re.Replica != 1 || re.Phase != "trace" {
		t.Fatalf("TryRun error %v, want a trace error for replica 1", err)
	}
}

// TestFreezingRetraces: changing a variable's trainability between steps
// makes the step retrace, so a frozen variable stops training at once, and
// unfreezing resumes it.
func TestFreezingRetraces(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(4, nn.Tanh), nn.Dense(2))
		opt = nn.NewSGD(0.1)
	})
	step := strategytest.ClassifierStep(model, opt, 0)
	x, y := data.RandomNormal(1, 8, 3), data.RandomInts(2, 2, 8)
	batch := func() *strategy.PerReplicaBatch {
		it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(8)).Iter()
		defer it.Close()
		it.Next()
		return it.Batch()
	}
	first := model.Layers()[0].(*nn.DenseLayer)
	s.Run(step, batch())
	for i, c := range []struct {
		freeze      bool
		wantChanged bool
	}{{true, false}, {true, false}, {false, true}} {
		first.Kernel().SetTrainable(!c.freeze)
		first.Bias().SetTrainable(!c.freeze)
		before := first.Kernel().Value()
		s.Run(step, batch())
		changed := fmt.Sprint(before) != fmt.Sprint(first.Kernel().Value())
		if changed != c.wantChanged {
			t.Errorf("step %d (frozen %v): kernel changed %v, want %v", i, c.freeze, changed, c.wantChanged)
		}
	}
	if got := s.Traces(); got != 1 {
		t.Errorf("%d traces cached, want 1 (stale traces dropped)", got)
	}
}
