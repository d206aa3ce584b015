package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/kernels"
	"github.com/gotrain/gotrain/strategy"
)

// Optimizer updates variables from their gradients once per step.
type Optimizer interface {
	// ApplyGradients registers, while the step is traced, the update of the
	// variables whose gradients ctx.Gradients returned (grads is that slice,
	// or a part of it). The update runs once per step, on the gradients
	// summed over replicas.
	ApplyGradients(ctx *strategy.ReplicaContext, grads []*Tensor)
	// Iterations returns the number of updates applied so far.
	Iterations() int
}

// optimizer is what SGD and Adam share: slots per variable, the step count,
// and registration with the strategy.
type optimizer struct {
	name  string
	nslot int
	slots map[*Variable][]*Variable
	iters int
	apply func(step int, grads []strategy.Grad, slots [][]*Variable)
	slotv [][]*Variable // scratch: slots of each grad, reused
}

func (o *optimizer) Iterations() int { return o.iters }

// slotsFor creates the variable's slots (zeros) under the strategy running
// the step, on first use.
func (o *optimizer) slotsFor(s *strategy.Mirrored, v *Variable) []*Variable {
	if sl, ok := o.slots[v]; ok {
		return sl
	}
	sl := make([]*Variable, o.nslot)
	for i := range sl {
		sl[i] = s.CreateVariable(fmt.Sprintf("%s/%s/slot%d", o.name, v.Name(), i), v.Shape(), nil)
		sl[i].SetTrainable(false)
	}
	o.slots[v] = sl
	return sl
}

func (o *optimizer) ApplyGradients(ctx *strategy.ReplicaContext, grads []*Tensor) {
	if ctx == nil {
		panic(usageError("%s: ApplyGradients: want the step's *strategy.ReplicaContext, got nil", o.name))
	}
	vars, err := ctx.VariablesOf(grads)
	if err != nil {
		panic(err)
	}
	o.register(ctx, vars, grads)
}

// ApplyGradientsTo is ApplyGradients with the variables given explicitly,
// aligned with grads.
func (o *optimizer) ApplyGradientsTo(ctx *strategy.ReplicaContext, grads []*Tensor, vars []*Variable) {
	if len(grads) != len(vars) {
		panic(usageError("%s: ApplyGradientsTo: want one gradient per variable, got %d gradients and %d variables", o.name, len(grads), len(vars)))
	}
	o.register(ctx, vars, grads)
}

func (o *optimizer) register(ctx *strategy.ReplicaContext, vars []*Variable, grads []*Tensor) {
	slots := make([][]*Variable, len(vars))
	for i, v := range vars {
		slots[i] = o.slotsFor(ctx.Strategy(), v)
	}
	ctx.ApplyUpdate(strategy.Update{
		Name:  o.name,
		Vars:  vars,
		Grads: grads,
		Apply: func(gs []strategy.Grad) {
			o.iters++
			o.apply(o.iters, gs, slots)
		},
	})
}

// SGD is stochastic gradient descent with optional (Nesterov) momentum, as
// torch.optim.SGD computes it (see kernels.SGDUpdate).
type SGD struct {
	optimizer
	LR       float64
	Momentum float64
	Nesterov bool
}

// SGDOption configures NewSGD.
type SGDOption func(*SGD)

// WithMomentum sets the momentum (default 0).
func WithMomentum(m float64) SGDOption { return func(o *SGD) { o.Momentum = m } }

// WithNesterov enables Nesterov momentum.
func WithNesterov() SGDOption { return func(o *SGD) { o.Nesterov = true } }

// NewSGD returns an SGD optimizer with learning rate lr. It panics if lr or
// the momentum is negative, or Nesterov is asked without momentum.
func NewSGD(lr float64, opts ...SGDOption) *SGD {
	o := &SGD{LR: lr}
	for _, opt := range opts {
		opt(o)
	}
	if lr < 0 || o.Momentum < 0 {
		panic(usageError("NewSGD: want lr ≥ 0 and momentum ≥ 0, got %g and %g", lr, o.Momentum))
	}
	if o.Nesterov && o.Momentum == 0 {
		panic(usageError("NewSGD: Nesterov needs a momentum > 0"))
	}
	o.optimizer = optimizer{name: strategy.UniqueName("sgd"), slots: make(map[*Variable][]*Variable)}
	if o.Momentum != 0 {
		o.nslot = 1
	}
	o.apply = func(_ int, gs []strategy.Grad, slots [][]*Variable) {
		for i, g := range gs {
			var vel32 []float32
			var vel64 []float64
			if o.nslot == 1 {
				vel32, vel64 = slots[i][0].F32(), slots[i][0].F64()
			}
			if g.F32 != nil {
				kernels.SGDUpdate(g.Var.F32(), g.F32, vel32, o.LR, o.Momentum, o.Nesterov)
			} else {
				kernels.SGDUpdate(g.Var.F64(), g.F64, vel64, o.LR, o.Momentum, o.Nesterov)
			}
		}
	}
	return o
}

// Adam is the Adam optimizer, as torch.optim.Adam computes it (see
// kernels.AdamUpdate).
type Adam struct {
	optimizer
	LR, Beta1, Beta2, Epsilon float64
}

// AdamOption configures NewAdam.
type AdamOption func(*Adam)

// WithBetas sets β₁ and β₂ (default 0.9 and 0.999).
func WithBetas(beta1, beta2 float64) AdamOption {
	return func(o *Adam) { o.Beta1, o.Beta2 = beta1, beta2 }
}

// WithEpsilon sets ε (default 1e-7, Keras's; PyTorch uses 1e-8).
func WithEpsilon(eps float64) AdamOption { return func(o *Adam) { o.Epsilon = eps } }

// NewAdam returns an Adam optimizer with learning rate lr. It panics if lr or
// ε is negative or a β is outside [0, 1).
func NewAdam(lr float64, opts ...AdamOption) *Adam {
	o := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}
	for _, opt := range opts {
		opt(o)
	}
	if lr < 0 || o.Epsilon < 0 || o.Beta1 < 0 || o.Beta1 >= 1 || o.Beta2 < 0 || o.Beta2 >= 1 {
		panic(usageError("NewAdam: want lr ≥ 0, ε ≥ 0 and β in [0, 1), got lr %g, ε %g, β₁ %g, β₂ %g", lr, o.Epsilon, o.Beta1, o.Beta2))
	}
	o.optimizer = optimizer{name: strategy.UniqueName("adam"), nslot: 2, slots: make(map[*Variable][]*Variable)}
	o.apply = func(step int, gs []strategy.Grad, slots [][]*Variable) {
		for i, g := range gs {
			m, v := slots[i][0], slots[i][1]
			if g.F32 != nil {
				kernels.AdamUpdate(g.Var.F32(), g.F32, m.F32(), v.F32(), o.LR, o.Beta1, o.Beta2, o.Epsilon, step)
			} else {
				kernels.AdamUpdate(g.Var.F64(), g.F64, m.F64(), v.F64(), o.LR, o.Beta1, o.Beta2, o.Epsilon, step)
			}
		}
	}
	return o
}

// Slots returns an optimizer's slot variables for v (Adam: m and v; SGD with
// momentum: the velocity), or nil before its first update.
func Slots(opt Optimizer, v *Variable) []*Variable {
	switch o := opt.(type) {
	case *Adam:
		return o.slots[v]
	case *SGD:
		return o.slots[v]
	}
	return nil
}
