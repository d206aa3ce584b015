package stepdeps_test

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/stepdeps"
)

// Package variables stand for a session's: the functions below read them.
var (
	rate    float64
	model   *int
	lossFn  func() float64
	big     [stepdeps.MaxSize + 1]byte
	counter int
)

func readsRate() float64  { return rate }
func readsModel() float64 { return float64(*model) }
func readsLossFn() float64 {
	return lossFn()
}

// outer returns a closure the registry never saw: it is found through
// outer's name, which the closure's starts with when outer is not inlined.
//
//go:noinline
func outer() func() float64 { return func() float64 { return rate + float64(counter) } }

// inlined is small enough to be inlined into its callers; its closure is
// then named after the caller, with "inlined" in the middle.
func inlined() func() float64 { return func() float64 { return float64(counter) } }

func pc(fn any) uintptr { return reflect.ValueOf(fn).Pointer() }

// stepper's step method and the plain function step share a short name.
type stepper struct{}

//go:noinline
func (*stepper) step() float64 { return rate }

//go:noinline
func step() float64 { return float64(counter) }

// TestWatchMethodValue: a method value is found by its method's name, not
// by the short name it shares with another function.
func TestWatchMethodValue(t *testing.T) {
	stepdeps.Register((*stepper).step, "stepper.step", stepdeps.Var(&rate, "rate"))
	stepdeps.Register(step, "step", stepdeps.Var(&counter, "counter"))
	var s stepper
	name, deps := stepdeps.Watch(pc(s.step))
	if got := names(deps); name != "stepper.step" || !slices.Equal(got, []string{"rate"}) {
		t.Errorf("Watch(s.step) = %q, %v; want stepper.step, [rate]", name, got)
	}
}

func names(deps []stepdeps.Dep) []string {
	var out []string
	for _, d := range deps {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}

func TestWatch(t *testing.T) {
	stepdeps.Register(readsRate, "readsRate", stepdeps.Var(&rate, "rate"))
	stepdeps.Register(readsModel, "readsModel", stepdeps.Var(&model, "model"))
	stepdeps.Register(readsLossFn, "readsLossFn", stepdeps.Var(&lossFn, "lossFn"))
	stepdeps.Register(outer, "outer", stepdeps.Var(&rate, "rate"), stepdeps.Var(&counter, "counter"))
	stepdeps.Register(inlined, "inlined", stepdeps.Var(&counter, "counter"))
	lossFn = readsModel
	tests := []struct {
		name     string
		fn       any
		wantName string
		want     []string
	}{
		{"registered", readsRate, "readsRate", []string{"rate"}},
		{"func-valued variable", readsLossFn, "readsLossFn", []string{"lossFn", "model"}},
		{"closure inside a registered function", outer(), "outer", []string{"counter", "rate"}},
		{"unknown", func() {}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, deps := stepdeps.Watch(pc(tt.fn))
			if name != tt.wantName || !slices.Equal(names(deps), tt.want) {
				t.Errorf("Watch: %q %v, want %q %v", name, names(deps), tt.wantName, tt.want)
			}
		})
	}
	t.Run("inlined", func(t *testing.T) {
		f := inlined()
		full := runtime.FuncForPC(pc(f)).Name()
		if !strings.Contains(full, ".TestWatch.") || !strings.Contains(full, ".inlined.") {
			t.Skipf("inlined was not inlined here: its closure is %s", full)
		}
		if name, deps := stepdeps.Watch(pc(f)); name != "inlined" || !slices.Equal(names(deps), []string{"counter"}) {
			t.Errorf("Watch(%s): %q %v, want \"inlined\" [counter]", full, name, names(deps))
		}
	})
}

func TestWatchFollowsTheFunctionHeldNow(t *testing.T) {
	stepdeps.Register(readsLossFn, "readsLossFn", stepdeps.Var(&lossFn, "lossFn"))
	stepdeps.Register(readsRate, "readsRate", stepdeps.Var(&rate, "rate"))
	stepdeps.Register(readsModel, "readsModel", stepdeps.Var(&model, "model"))
	for _, tt := range []struct {
		held func() float64
		want []string
	}{{readsRate, []string{"lossFn", "rate"}}, {readsModel, []string{"lossFn", "model"}}, {nil, []string{"lossFn"}}} {
		lossFn = tt.held
		if _, deps := stepdeps.Watch(pc(readsLossFn)); !slices.Equal(names(deps), tt.want) {
			t.Errorf("lossFn = %v: %v, want %v", runtime.FuncForPC(pc(tt.held)), names(deps), tt.want)
		}
	}
	// A cycle through function-valued variables ends.
	lossFn = readsLossFn
	if _, deps := stepdeps.Watch(pc(readsLossFn)); !slices.Equal(names(deps), []string{"lossFn"}) {
		t.Errorf("a cycle: %v, want [lossFn]", names(deps))
	}
}

func TestRegisterReplacesAndBounds(t *testing.T) {
	f := func() float64 { return rate + float64(big[0]) }
	stepdeps.Register(f, "f", stepdeps.Var(&rate, "rate"))
	stepdeps.Register(f, "f", stepdeps.Var(&counter, "counter"), stepdeps.Var(&big, "big"))
	name, deps := stepdeps.Watch(pc(f))
	if name != "f" || !slices.Equal(names(deps), []string{"counter"}) {
		t.Errorf("Watch: %q %v, want \"f\" [counter] (registered again; big is over MaxSize)", name, names(deps))
	}
	d := deps[0]
	if d.Addr == nil || d.Size != 8 || d.Func {
		t.Errorf("Var(&counter): %+v", d)
	}
	if !stepdeps.Var(&lossFn, "lossFn").Func {
		t.Error("Var(&lossFn).Func is false")
	}
}

func TestRegisterPanicsOnNonFunc(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "want a non-nil func") {
			t.Errorf("Register(3): recovered %v", v)
		}
	}()
	stepdeps.Register(3, "three")
}
