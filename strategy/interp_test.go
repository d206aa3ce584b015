package strategy_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Interpreted step functions share reflect.MakeFunc's code pointer, so the
// trace cache must tell them apart by closure: two different interpreted
// closures must not share a trace, and one closure held in a variable must
// not retrace at every step.
func TestInterpretedStepFunctions(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	x := data.NewTensor([]int{2, 2}, []float64{1, 2, 3, 4})
	i := interp.New(interp.Options{})
	err := i.Use(interp.Exports{"gotrain/g/g": {
		"Node":  reflect.ValueOf((*graph.Node)(nil)),
		"Sum":   reflect.ValueOf(graph.Sum),
		"Scale": reflect.ValueOf(graph.Scale),
		"Run": reflect.ValueOf(func(fn any) float64 {
			return s.Reduce(strategy.Mean, s.Run(fn, s.Broadcast(x))).Scalar()
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		src    string
		want   any
		traces int
	}{
		{`import "gotrain/g"`, nil, 0},
		{`step := func(x *g.Node) *g.Node { return g.Sum(x) }`, nil, 0},
		{`other := func(x *g.Node) *g.Node { return g.Scale(g.Sum(x), 2) }`, nil, 0},
		{`g.Run(step)`, 10.0, 1},
		{`g.Run(step)`, 10.0, 1},
		{`g.Run(other)`, 20.0, 2},
		{`g.Run(step)`, 10.0, 2},
		{`total := 0.0`, nil, 0},
		{`for k := 0; k < 3; k++ { total += g.Run(other) }`, nil, 0},
		{`total`, 60.0, 2},
		// The seed's structure: step_fn written inside train_step is a new
		// interpreted closure at every call, traced once (issue 14).
		{`train := func() float64 { inner := func(x *g.Node) *g.Node { return g.Scale(g.Sum(x), 3) }; return g.Run(inner) }`, nil, 0},
		{`for k := 0; k < 8; k++ { total = train() }`, nil, 0},
		{`total`, 30.0, 3},
	}
	for _, st := range steps {
		v, err := i.Eval(st.src)
		if err != nil {
			t.Fatalf("%s: %v", st.src, err)
		}
		if st.want != nil && v.Interface() != st.want {
			t.Errorf("%s = %v, want %v", st.src, v, st.want)
		}
		if st.want != nil && s.Traces() != st.traces {
			t.Errorf("after %s: %d traces, want %d", st.src, s.Traces(), st.traces)
		}
	}
}

// A func literal written in the Run call is a new closure at every step:
// each step retraces (correctly), and Run warns once.
func TestRetraceWarning(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(1), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	x := data.NewTensor([]int{2}, []float64{1, 2})
	for k := range 8 {
		got := s.Reduce(strategy.Sum, s.Run(func(x *graph.Node) *graph.Node { return graph.Scale(graph.Sum(x), float64(k)) }, x)).Scalar()
		if got != float64(3*k) {
			t.Fatalf("step %d: %v, want %v", k, got, 3*k)
		}
	}
	if n := strings.Count(warn.String(), "strategy: warning:"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warn.String())
	}
}

// A notebook that defines several step functions with the same signature,
// each run many times (one model per recipe, say), is not the retrace trap:
// each is traced once and then hits the cache, so Run must not warn.
func TestNoRetraceWarningForReusedSteps(t *testing.T) {
	var warn strings.Builder
	s := strategy.NewMirrored(strategy.WithReplicas(1), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
	defer closeStrategy(t, s)
	x := data.NewTensor([]int{2}, []float64{1, 2})
	for k := range 8 {
		step := func(x *graph.Node) *graph.Node { return graph.Scale(graph.Sum(x), float64(k)) }
		for range 3 {
			if got := s.Reduce(strategy.Sum, s.Run(step, x)).Scalar(); got != float64(3*k) {
				t.Fatalf("step function %d: %v, want %v", k, got, 3*k)
			}
		}
	}
	if s.Traces() < 8 {
		t.Fatalf("%d traces, want one per step function (8)", s.Traces())
	}
	if warn.Len() != 0 {
		t.Errorf("warned although every step function was reused:\n%s", warn.String())
	}
}
