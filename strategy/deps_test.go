package strategy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/stepdeps"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// Session variables: a compiled cell's step function reads package
// variables like these, and the cell compiler registers them
// (internal/stepdeps); here the tests register them by hand.
var (
	watchedModel   *nn.Sequential
	watchedOpt     nn.Optimizer
	watchedScale   float64
	unwatchedTotal float64 // assigned by the training loop, read by no step
	stepCalls      int     // counts the step's calls: one per replica per trace
)

func watchedStep(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
	stepCalls++
	loss := graph.Sum(watchedModel.Call(ctx, x, true))
	watchedOpt.ApplyGradients(ctx, ctx.Gradients(loss, watchedModel.TrainableVariables()))
	return loss
}

func scaleStep(x *nn.Tensor) *nn.Tensor {
	stepCalls++
	return graph.Scale(graph.Sum(x), watchedScale)
}

func init() {
	stepdeps.Register(watchedStep, "watchedStep", stepdeps.Var(&watchedModel, "watchedModel"), stepdeps.Var(&watchedOpt, "watchedOpt"))
	stepdeps.Register(scaleStep, "scaleStep", stepdeps.Var(&watchedScale, "watchedScale"))
}

// TestOptimizerSwitch: after `watchedOpt = optB` the next Run traces
// again, says why, and B makes the second four updates; a loop assigning a
// variable no step reads, or assigning watchedOpt the value it holds, traces
// nothing.
func TestOptimizerSwitch(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	var optA, optB nn.Optimizer
	s.Scope(func() {
		watchedModel = nn.NewSequential(nn.Dense(1))
		optA, optB = nn.NewSGD(0.1), nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	stepCalls = 0
	watchedOpt = optA
	for range 4 {
		unwatchedTotal += s.Reduce(strategy.Sum, s.Run(watchedStep, in)).Scalar()
	}
	watchedOpt = optB
	for range 4 {
		unwatchedTotal += s.Reduce(strategy.Sum, s.Run(watchedStep, in)).Scalar()
	}
	watchedOpt = optB // the same value: nothing to trace
	s.Run(watchedStep, in)
	if a, b := optA.Iterations(), optB.Iterations(); a != 4 || b != 5 {
		t.Errorf("updates: A %d, B %d; want 4 and 5", a, b)
	}
	if traces := stepCalls / 2; traces != 2 {
		t.Errorf("%d traces, want 2", traces)
	}
	if want := "strategy: retracing watchedStep: watchedOpt changed since it was traced\n"; warn.String() != want {
		t.Errorf("warnings:\n%q\nwant\n%q", warn.String(), want)
	}
}

// TestValueFoldedIntoTheGraph: a float the step folds into its graph
// as a constant is read again after it changes; a variable changed at
// every step stops being named after a few retraces and gets one line of
// advice instead.
func TestValueFoldedIntoTheGraph(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	in := s.Broadcast(data.NewTensor([]int{2}, []float64{1, 2}))
	stepCalls = 0
	for k := range 8 {
		watchedScale = float64(k)
		if got, want := s.Reduce(strategy.Sum, s.Run(scaleStep, in)).Scalar(), 2*3*float64(k); got != want {
			t.Fatalf("scale %d: %v, want %v", k, got, want)
		}
	}
	if traces := stepCalls / 2; traces != 8 {
		t.Errorf("%d traces, want 8", traces)
	}
	lines := strings.Split(strings.TrimSuffix(warn.String(), "\n"), "\n")
	want := slices.Repeat([]string{"strategy: retracing scaleStep: watchedScale changed since it was traced"}, 4)
	if len(lines) != 5 || !slices.Equal(lines[:4], want) || !strings.Contains(lines[4], "watchedScale changed since it was traced, 5 times now") {
		t.Errorf("warnings:\n%s\nwant 4 lines naming watchedScale, then one of advice", warn.String())
	}
}

// TestSteadyRunAllocs: watching the step's variables adds no
// allocation to a Run that does not trace.
func TestSteadyRunAllocs(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithCheckNumerics(false))
	defer closeStrategy(t, s)
	s.Scope(func() {
		watchedModel = nn.NewSequential(nn.Dense(1))
		watchedOpt = nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	unwatched := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return watchedStep(ctx, x) }
	s.Run(watchedStep, in)
	s.Run(unwatched, in)
	watchedAllocs := testing.AllocsPerRun(20, func() { s.Run(watchedStep, in) })
	unwatchedAllocs := testing.AllocsPerRun(20, func() { s.Run(unwatched, in) })
	if watchedAllocs != unwatchedAllocs {
		t.Errorf("a Run of a watched step allocates %v times, of an unwatched one %v", watchedAllocs, unwatchedAllocs)
	}
}

var otherScale float64

func otherScaleStep(x *nn.Tensor) *nn.Tensor { return graph.Scale(graph.Sum(x), otherScale) }

func init() {
	stepdeps.Register(otherScaleStep, "otherScaleStep", stepdeps.Var(&otherScale, "otherScale"))
}

// TestLookalikeWatchesItsOwnVariables: a step function whose graph
// repeats a cached trace's reuses that trace, which then watches the new
// function's variables, not the old one's.
func TestLookalikeWatchesItsOwnVariables(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	in := s.Broadcast(data.NewTensor([]int{2}, []float64{1, 2}))
	watchedScale, otherScale = 1, 1
	s.Run(scaleStep, in)
	s.Run(otherScaleStep, in) // the same graph: scaleStep's trace answers
	otherScale = 2
	if got := s.Reduce(strategy.Sum, s.Run(otherScaleStep, in)).Scalar(); got != 12 {
		t.Errorf("after otherScale = 2: %v, want 12", got)
	}
	if want := "strategy: retracing otherScaleStep: otherScale changed since it was traced\n"; warn.String() != want {
		t.Errorf("warnings:\n%q\nwant\n%q", warn.String(), want)
	}
}

// BenchmarkWatched is a small step's Run with and without the
// session variables it reads watched: the difference is what checking
// them costs per Run.
func BenchmarkWatched(b *testing.B) {
	s := strategy.NewMirrored(strategy.WithReplicas(1), strategy.WithDType(graph.Float64), strategy.WithCheckNumerics(false))
	b.Cleanup(func() { s.Close() })
	s.Scope(func() {
		watchedModel = nn.NewSequential(nn.Dense(1))
		watchedOpt = nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	unwatched := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return watchedStep(ctx, x) }
	for _, tt := range []struct {
		name string
		step func(*strategy.ReplicaContext, *nn.Tensor) *nn.Tensor
	}{{"unwatched", unwatched}, {"watched", watchedStep}} {
		b.Run(tt.name, func(b *testing.B) {
			s.Run(tt.step, in)
			b.ReportAllocs()
			for b.Loop() {
				s.Run(tt.step, in)
			}
		})
	}
}
