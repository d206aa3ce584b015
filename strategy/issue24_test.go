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

// The session variables of TestIssue24: a compiled cell's step function
// reads package variables like these, and the cell compiler registers them
// (internal/stepdeps); here the tests register them by hand.
var (
	i24Model   *nn.Sequential
	i24Current nn.Optimizer
	i24Scale   float64
	i24Total   float64 // assigned by the training loop, read by no step
	i24Calls   int     // counts the step's calls: one per replica per trace
)

func i24Step(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
	i24Calls++
	loss := graph.Sum(i24Model.Call(ctx, x, true))
	i24Current.ApplyGradients(ctx, ctx.Gradients(loss, i24Model.TrainableVariables()))
	return loss
}

func i24ScaleStep(x *nn.Tensor) *nn.Tensor {
	i24Calls++
	return graph.Scale(graph.Sum(x), i24Scale)
}

func init() {
	stepdeps.Register(i24Step, "i24Step", stepdeps.Var(&i24Model, "i24Model"), stepdeps.Var(&i24Current, "i24Current"))
	stepdeps.Register(i24ScaleStep, "i24ScaleStep", stepdeps.Var(&i24Scale, "i24Scale"))
}

// TestIssue24OptimizerSwitch: after `current = optB` the next Run traces
// again, says why, and B makes the second four updates; a loop assigning a
// variable no step reads, or assigning current the value it holds, traces
// nothing.
func TestIssue24OptimizerSwitch(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	var optA, optB nn.Optimizer
	s.Scope(func() {
		i24Model = nn.NewSequential(nn.Dense(1))
		optA, optB = nn.NewSGD(0.1), nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	i24Calls = 0
	i24Current = optA
	for range 4 {
		i24Total += s.Reduce(strategy.Sum, s.Run(i24Step, in)).Scalar()
	}
	i24Current = optB
	for range 4 {
		i24Total += s.Reduce(strategy.Sum, s.Run(i24Step, in)).Scalar()
	}
	i24Current = optB // the same value: nothing to trace
	s.Run(i24Step, in)
	if a, b := optA.Iterations(), optB.Iterations(); a != 4 || b != 5 {
		t.Errorf("updates: A %d, B %d; want 4 and 5", a, b)
	}
	if traces := i24Calls / 2; traces != 2 {
		t.Errorf("%d traces, want 2", traces)
	}
	if want := "strategy: retracing i24Step: i24Current changed since it was traced\n"; warn.String() != want {
		t.Errorf("warnings:\n%q\nwant\n%q", warn.String(), want)
	}
}

// TestIssue24ValueFoldedIntoTheGraph: a float the step folds into its graph
// as a constant is read again after it changes; a variable changed at
// every step stops being named after a few retraces and gets one line of
// advice instead.
func TestIssue24ValueFoldedIntoTheGraph(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	in := s.Broadcast(data.NewTensor([]int{2}, []float64{1, 2}))
	i24Calls = 0
	for k := range 8 {
		i24Scale = float64(k)
		if got, want := s.Reduce(strategy.Sum, s.Run(i24ScaleStep, in)).Scalar(), 2*3*float64(k); got != want {
			t.Fatalf("scale %d: %v, want %v", k, got, want)
		}
	}
	if traces := i24Calls / 2; traces != 8 {
		t.Errorf("%d traces, want 8", traces)
	}
	lines := strings.Split(strings.TrimSuffix(warn.String(), "\n"), "\n")
	want := slices.Repeat([]string{"strategy: retracing i24ScaleStep: i24Scale changed since it was traced"}, 4)
	if len(lines) != 5 || !slices.Equal(lines[:4], want) || !strings.Contains(lines[4], "i24Scale changed since it was traced, 5 times now") {
		t.Errorf("warnings:\n%s\nwant 4 lines naming i24Scale, then one of advice", warn.String())
	}
}

// TestIssue24SteadyRunAllocs: watching the step's variables adds no
// allocation to a Run that does not trace.
func TestIssue24SteadyRunAllocs(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithCheckNumerics(false))
	defer closeStrategy(t, s)
	s.Scope(func() {
		i24Model = nn.NewSequential(nn.Dense(1))
		i24Current = nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	unwatched := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return i24Step(ctx, x) }
	s.Run(i24Step, in)
	s.Run(unwatched, in)
	watchedAllocs := testing.AllocsPerRun(20, func() { s.Run(i24Step, in) })
	unwatchedAllocs := testing.AllocsPerRun(20, func() { s.Run(unwatched, in) })
	if watchedAllocs != unwatchedAllocs {
		t.Errorf("a Run of a watched step allocates %v times, of an unwatched one %v", watchedAllocs, unwatchedAllocs)
	}
}

var i24Scale2 float64

func i24ScaleStep2(x *nn.Tensor) *nn.Tensor { return graph.Scale(graph.Sum(x), i24Scale2) }

func init() {
	stepdeps.Register(i24ScaleStep2, "i24ScaleStep2", stepdeps.Var(&i24Scale2, "i24Scale2"))
}

// TestIssue24LookalikeWatchesItsOwnVariables: a step function whose graph
// repeats a cached trace's reuses that trace, which then watches the new
// function's variables, not the old one's.
func TestIssue24LookalikeWatchesItsOwnVariables(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	in := s.Broadcast(data.NewTensor([]int{2}, []float64{1, 2}))
	i24Scale, i24Scale2 = 1, 1
	s.Run(i24ScaleStep, in)
	s.Run(i24ScaleStep2, in) // the same graph: i24ScaleStep's trace answers
	i24Scale2 = 2
	if got := s.Reduce(strategy.Sum, s.Run(i24ScaleStep2, in)).Scalar(); got != 12 {
		t.Errorf("after i24Scale2 = 2: %v, want 12", got)
	}
	if want := "strategy: retracing i24ScaleStep2: i24Scale2 changed since it was traced\n"; warn.String() != want {
		t.Errorf("warnings:\n%q\nwant\n%q", warn.String(), want)
	}
}

// BenchmarkIssue24Watched is a small step's Run with and without the
// session variables it reads watched: the difference is what checking
// them costs per Run.
func BenchmarkIssue24Watched(b *testing.B) {
	s := strategy.NewMirrored(strategy.WithReplicas(1), strategy.WithDType(graph.Float64), strategy.WithCheckNumerics(false))
	b.Cleanup(func() { s.Close() })
	s.Scope(func() {
		i24Model = nn.NewSequential(nn.Dense(1))
		i24Current = nn.NewSGD(0.1)
	})
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	unwatched := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return i24Step(ctx, x) }
	for _, tt := range []struct {
		name string
		step func(*strategy.ReplicaContext, *nn.Tensor) *nn.Tensor
	}{{"unwatched", unwatched}, {"watched", i24Step}} {
		b.Run(tt.name, func(b *testing.B) {
			s.Run(tt.step, in)
			b.ReportAllocs()
			for b.Loop() {
				s.Run(tt.step, in)
			}
		})
	}
}
