package cells_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/cells/rt"
	"github.com/gotrain/gotrain/internal/stepdeps"
)

// TestIssue24Deps checks what the cells' functions register as the session
// variables they read (issue 24): each case's cells run in order, the last
// one's value is a function, and stepdeps.Watch must find these variables
// for it, as a strategy does when it traces that function. The functions
// and methods it calls are watched too, by their slots, so that a step
// retraces once one is redefined (issue 30).
func TestIssue24Deps(t *testing.T) {
	tests := []struct {
		name  string
		cells []string
		want  []string
	}{
		{"func", []string{"lr := 0.1\nfunc step() float64 { return lr }", "step"}, []string{"lr"}},
		{"literal", []string{"opt := 1\nstep := func() int { return opt }", "step"}, []string{"opt"}},
		{"literal assigned again", []string{"opt, other := 1, 2\nstep := func() int { return opt }", "step = func() int { return other }", "step"}, []string{"other"}},
		{"through an earlier cell's function", []string{"a := 1\nfunc helper() int { return a }", "func viaHelper() int { return helper() + 1 }", "viaHelper"}, []string{"a", "helper"}},
		{"through the cell's functions", []string{"a, b := 1, 2\nfunc h1() int { return a + h2() }\nfunc h2() int { return b + h1() }", "h1"}, []string{"a", "b", "h1", "h2"}},
		{"writes are not reads", []string{"total, seen := 0, 0\nfunc count() { total++; seen = 1 }", "count"}, nil},
		{"method", []string{"type trainer struct{}\nvar scale = 2.0\nfunc (t *trainer) step() float64 { return scale }", "(&trainer{}).step"}, []string{"scale"}},
		{"method of an earlier cell's type", []string{"type trainer struct{}\nvar scale = 2.0\nfunc (t trainer) step() float64 { return scale }", "func run() float64 { return trainer{}.step() }", "run"}, []string{"scale", "trainer.step"}},
		{"closure inside a function", []string{"opt := 1\nfunc outer() func() int { return func() int { return opt } }", "outer()"}, []string{"opt"}},
		{"func-valued variable", []string{"lr := 0.1\nlossFn := func() float64 { return lr }\nfunc useLoss() float64 { return lossFn() }", "useLoss"}, []string{"lossFn", "lr"}},
		{"literal among the statements", []string{"opt := 1\nfs := []func() int{func() int { return opt }}", "fs[0]"}, []string{"opt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			var v any
			for _, code := range tt.cells {
				if _, err := s.run(code); err != nil {
					t.Fatalf("cell %q: %v", code, err)
				}
				v, _ = rt.TakeResult()
			}
			fn := reflect.ValueOf(v)
			if fn.Kind() != reflect.Func {
				t.Fatalf("the last cell's value is %T, want a func", v)
			}
			_, deps := stepdeps.Watch(fn.Pointer())
			var got []string
			for _, d := range deps {
				got = append(got, d.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("watched %v, want %v", got, tt.want)
			}
		})
	}
}

// TestIssue24DepsSource checks the registration a cell compiles to.
func TestIssue24DepsSource(t *testing.T) {
	s := newSession(t)
	s.want("lr := 0.1", "")
	cell, err := s.c.Compile(context.Background(), "func step() float64 { return lr }\nstep2 := func() float64 { return lr * 2 }")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`_gtrt.Deps(step, "step", _gtrt.Var(&(*`, `.X_lr), "lr"))`, `_gtrt.Deps(step2, "step2", _gtrt.Var(&(*`} {
		if !strings.Contains(cell.Source(), want) {
			t.Errorf("the source has no %s:\n%s", want, cell.Source())
		}
	}
}
