package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/loops"
	"github.com/gotrain/gotrain/strategy"
)

// Accumulator wraps an optimizer so that the gradients of K consecutive steps
// are summed and applied once, on the K-th step (gradient accumulation: a
// large batch in K pieces). Create it with Accumulate.
//
// With losses from ComputeAverageLoss(perExample, K·b) on batches of b
// examples, the K summed gradients are the gradient of the mean over all K·b
// examples, so K accumulated steps update the weights as one step on the
// K·b examples together would (to float rounding). The sums and the count of
// steps since the last update are non-trainable variables, so a checkpoint
// taken between updates resumes mid-cycle.
//
// Iterations counts the wrapped optimizer's updates; its schedule and
// clipping see the summed gradients, once per K steps.
type Accumulator struct {
	inner *optimizer
	opt   Optimizer
	k     int
	name  string
	count *Variable               // steps summed since the last update (a counter)
	sums  map[*Variable]*Variable // per variable: the running gradient sum
}

// Accumulate returns opt wrapped to apply the sum of the gradients of every k
// steps at once. It panics with an error wrapping ErrUsage if k < 1 or opt is
// not an optimizer of this package.
func Accumulate(opt Optimizer, k int) *Accumulator {
	b, ok := opt.(baseOptimizer)
	if !ok {
		panic(usageError("Accumulate: want an optimizer of package nn, got %T", opt))
	}
	if k < 1 {
		panic(usageError("Accumulate: want k ≥ 1 steps, got %d", k))
	}
	a := &Accumulator{inner: b.base(), opt: opt, k: k, name: strategy.UniqueName(b.base().name + "/accumulate"), sums: make(map[*Variable]*Variable)}
	if s := strategy.Current(); s != nil {
		a.counterFor(s)
	}
	return a
}

// base lets Slots reach the wrapped optimizer's slots.
func (a *Accumulator) base() *optimizer { return a.inner }

// Steps returns k, the number of steps summed per update.
func (a *Accumulator) Steps() int { return a.k }

// Pending returns how many steps have been summed since the last update
// (0 ≤ Pending < k).
func (a *Accumulator) Pending() int {
	if a.count == nil {
		return 0
	}
	return readCounter(a.count)
}

// Iterations returns the number of updates the wrapped optimizer applied.
func (a *Accumulator) Iterations() int { return a.inner.Iterations() }

func (a *Accumulator) counterFor(s *strategy.Mirrored) {
	if a.count == nil {
		a.count = newCounter(s, a.name+"/pending")
	}
}

func (a *Accumulator) sumFor(s *strategy.Mirrored, v *Variable) *Variable {
	if sv, ok := a.sums[v]; ok {
		return sv
	}
	sv := s.CreateVariable(fmt.Sprintf("%s/%s", a.name, v.Name()), v.Shape(), nil)
	sv.SetTrainable(false)
	a.sums[v] = sv
	return sv
}

// Build creates the wrapped optimizer's counter and slots and the sums of
// vars under the current strategy (see SGD.Build). It panics with an error
// wrapping ErrUsage outside a strategy's Scope.
func (a *Accumulator) Build(vars []*Variable) {
	s := strategy.Current()
	if s == nil {
		panic(usageError("%s: Build: call it inside the strategy's Scope", a.name))
	}
	a.inner.Build(vars)
	a.counterFor(s)
	for _, v := range vars {
		a.sumFor(s, v)
	}
}

// ApplyGradients registers the accumulation of grads (see
// Optimizer.ApplyGradients); every k-th step it also applies the wrapped
// optimizer's update to the sums.
func (a *Accumulator) ApplyGradients(ctx *strategy.ReplicaContext, grads []*Tensor) {
	if ctx == nil {
		panic(usageError("%s: ApplyGradients: want the step's *strategy.ReplicaContext, got nil", a.name))
	}
	vars, err := ctx.VariablesOf(grads)
	if err != nil {
		panic(err)
	}
	u := a.hostUpdate(ctx.Strategy(), vars)
	u.Grads = grads
	ctx.ApplyUpdate(u)
}

// hostUpdate is the accumulating update of vars under s (see
// optimizer.hostUpdate).
func (a *Accumulator) hostUpdate(s *strategy.Mirrored, vars []*Variable) strategy.Registration {
	u := &accumulation{a: a, vars: vars, slots: a.inner.prepare(s, vars), sums: make([]*Variable, len(vars)), summed: make([]strategy.Grad, len(vars))}
	a.counterFor(s)
	for i, v := range vars {
		u.sums[i] = a.sumFor(s, v)
	}
	return strategy.Registration{Name: a.name, Vars: vars, Update: u}
}

// accumulation is an Accumulator's update of vars: it adds the summed
// gradients to sums, and every k-th step applies the wrapped optimizer's
// update (optimizer.step) to the sums and clears them. It checks the
// wrapped optimizer's rate before each step.
type accumulation struct {
	a      *Accumulator
	vars   []*Variable
	slots  [][]*Variable   // the wrapped optimizer's, aligned with vars
	sums   []*Variable     // the accumulated gradients, aligned with vars
	summed []strategy.Grad // scratch: sums as gradients
}

func (u *accumulation) Check() error { return u.a.inner.checkRate() }

func (u *accumulation) Apply(gs []strategy.Grad) {
	a := u.a
	for i, g := range gs {
		if g.F32 != nil {
			loops.AddTo(u.sums[i].F32(), u.sums[i].F32(), g.F32)
		} else {
			loops.AddTo(u.sums[i].F64(), u.sums[i].F64(), g.F64)
		}
	}
	n := readCounter(a.count) + 1
	if n < a.k {
		writeCounter(a.count, n)
		return
	}
	for i, v := range u.vars {
		u.summed[i] = strategy.Grad{Var: v, F32: u.sums[i].F32(), F64: u.sums[i].F64()}
	}
	a.inner.step(u.summed, u.slots)
	for _, sv := range u.sums {
		clear(sv.F32())
		clear(sv.F64())
	}
	writeCounter(a.count, 0)
}
