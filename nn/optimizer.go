package nn

import (
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/internal/loops"
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

// OptimizerOption configures an optimizer constructor (NewSGD, NewAdam,
// NewAdamW, NewRMSprop). An option that does not apply to the optimizer
// (WithBetas given to NewSGD) makes the constructor panic.
type OptimizerOption func(*optConfig)

// SGDOption configures NewSGD; it is an OptimizerOption.
type SGDOption = OptimizerOption

// AdamOption configures NewAdam and NewAdamW; it is an OptimizerOption.
type AdamOption = OptimizerOption

// optConfig collects what the options set; given records which options were
// used, so a constructor can reject the ones that do not apply to it.
type optConfig struct {
	given       []string
	momentum    float64
	nesterov    bool
	beta1       float64
	beta2       float64
	eps         float64
	rho         float64
	weightDecay float64
	clip        float64
	schedule    Schedule
	noDecay     []*regexp.Regexp       // WithoutDecay
	decayIf     func(v *Variable) bool // WithDecayIf; nil: rank ≥ 2
}

func (c *optConfig) mark(name string) { c.given = append(c.given, name) }

func (c *optConfig) has(name string) bool { return slices.Contains(c.given, name) }

// WithMomentum sets the momentum of SGD or RMSprop (default 0).
func WithMomentum(m float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithMomentum"); c.momentum = m }
}

// WithNesterov enables Nesterov momentum (SGD only).
func WithNesterov() OptimizerOption {
	return func(c *optConfig) { c.mark("WithNesterov"); c.nesterov = true }
}

// WithBetas sets Adam's β₁ and β₂ (default 0.9 and 0.999).
func WithBetas(beta1, beta2 float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithBetas"); c.beta1, c.beta2 = beta1, beta2 }
}

// WithEpsilon sets ε of Adam, AdamW and RMSprop (default 1e-7, Keras's;
// PyTorch uses 1e-8).
func WithEpsilon(eps float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithEpsilon"); c.eps = eps }
}

// WithRho sets RMSprop's discounting factor ρ for the mean square (default
// 0.9, Keras's; PyTorch calls it alpha and defaults to 0.99).
func WithRho(rho float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithRho"); c.rho = rho }
}

// WithWeightDecay sets AdamW's decoupled weight decay (default 0.01,
// PyTorch's).
func WithWeightDecay(wd float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithWeightDecay"); c.weightDecay = wd }
}

// WithoutDecay exempts from AdamW's weight decay the variables whose name
// matches one of the regular expressions patterns anywhere (regexp's
// MatchString, as Keras's exclude_from_weight_decay searches var_names):
// "bias", "layer_norm", `^embedding/`. It panics with an error wrapping
// ErrUsage if a pattern does not compile. It applies to NewAdamW only.
func WithoutDecay(patterns ...string) OptimizerOption {
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			panic(usageError("WithoutDecay: pattern %q: %v", p, err))
		}
		res[i] = re
	}
	return func(c *optConfig) { c.mark("WithoutDecay"); c.noDecay = append(c.noDecay, res...) }
}

// WithDecayIf makes AdamW decay exactly the variables for which decay
// returns true, instead of those of rank ≥ 2; WithoutDecay still exempts the
// names it matches. decay(v) is called once per variable, when the
// optimizer first meets it. WithDecayIf(func(*nn.Variable) bool { return
// true }) decays every variable, as torch.optim.AdamW given all of a model's
// parameters does. It applies to NewAdamW only.
func WithDecayIf(decay func(v *Variable) bool) OptimizerOption {
	return func(c *optConfig) { c.mark("WithDecayIf"); c.decayIf = decay }
}

// WithClipGlobalNorm makes every update first scale the step's gradients by
// clipNorm/max(globalNorm, clipNorm), where globalNorm is the L2 norm of all
// the gradients of one ApplyGradients call together
// (tf.clip_by_global_norm, Keras's global_clipnorm). The norm is computed on
// the gradients summed over replicas, inside the update, so every replica
// count clips the same way. It applies to every optimizer.
func WithClipGlobalNorm(clipNorm float64) OptimizerOption {
	return func(c *optConfig) { c.mark("WithClipGlobalNorm"); c.clip = clipNorm }
}

// WithSchedule makes the learning rate of update t (t = 1, 2, ...) be
// s.Rate(t-1), evaluated on the optimizer's step counter, instead of a
// constant (Keras's learning_rate=schedule). The constructor's lr must then
// be 0. It applies to every optimizer.
func WithSchedule(s Schedule) OptimizerOption {
	return func(c *optConfig) { c.mark("WithSchedule"); c.schedule = s }
}

// commonOptions apply to every optimizer.
var commonOptions = []string{"WithClipGlobalNorm", "WithSchedule"}

// configure applies opts over defaults and panics if an option does not
// apply to the constructor named ctor, or the shared options are invalid.
func configure(ctor string, lr float64, defaults optConfig, allowed []string, opts []OptimizerOption) optConfig {
	c := defaults
	for _, o := range opts {
		if o == nil {
			panic(usageError("%s: option is nil", ctor))
		}
		o(&c)
	}
	for _, name := range c.given {
		if !slices.Contains(allowed, name) && !slices.Contains(commonOptions, name) {
			panic(usageError("%s: option %s does not apply to this optimizer", ctor, name))
		}
	}
	if err := checkRate(lr); err != nil {
		panic(usageError("%s: %v", ctor, err))
	}
	if c.has("WithClipGlobalNorm") && !(c.clip > 0) {
		panic(usageError("%s: WithClipGlobalNorm: want a norm > 0, got %g", ctor, c.clip))
	}
	if c.has("WithSchedule") {
		if c.schedule == nil {
			panic(usageError("%s: WithSchedule: want a schedule, got nil", ctor))
		}
		if lr != 0 {
			panic(usageError("%s: got lr %g and WithSchedule; the schedule gives the rate, so pass lr 0", ctor, lr))
		}
		if v, ok := c.schedule.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				panic(usageError("%s: WithSchedule: %v", ctor, err))
			}
		}
	}
	return c
}

// checkRate reports a learning rate that is not a finite number ≥ 0: with
// NaN or Inf every weight the update touches becomes NaN.
func checkRate(lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("want a finite lr ≥ 0, got %g", lr)
	}
	return nil
}

// optimizer is what every optimizer shares: slots per variable, the step
// counter, clipping, the learning-rate schedule and registration with the
// strategy.
type optimizer struct {
	name     string
	nslot    int
	slots    map[*Variable][]*Variable
	iters    *Variable  // step counter (see readCounter); nil until created
	clip     float64    // 0: no clipping
	schedule Schedule   // nil: constant rate
	rule     updateRule // the concrete optimizer (*SGD, *Adam, ...)
	// device is the rule on a GPU's copies (device.go), nil without -tags
	// cuda.
	device deviceRule
	params map[*gpu.Device]*deviceParams // device's parameter buffers, by device; made at first use
}

// updateRule is the arithmetic of an optimizer of this package (SGD, Adam,
// AdamW, RMSprop), which the shared optimizer runs.
type updateRule interface {
	// rate returns the LR field, read at each step: it may have been
	// assigned since the step was traced.
	rate() float64
	// update applies the rule to elements [off, off+len) of g.Var, whose
	// gradient g holds, with learning rate lr (NaN: no schedule, use the
	// optimizer's own); step is the 1-based number of this update. The
	// rules are element by element, so updating a variable in parts gives
	// the same bits as updating it whole.
	update(step int, lr float64, g strategy.Grad, off int, slots []*Variable)
}

// tracker is implemented by a rule that wants to see each variable the
// optimizer meets, when its slots are made (while a step is traced, or by
// Build): AdamW decides there whether the variable decays, so that the
// update, which replicas run concurrently, only reads that decision.
type tracker interface {
	track(v *Variable)
}

// newOptimizer returns the shared part of the optimizer whose arithmetic is
// rule, and device on a GPU (nil: none).
func newOptimizer(base string, nslot int, c optConfig, rule updateRule, device deviceRule) optimizer {
	o := optimizer{name: strategy.UniqueName(base), nslot: nslot, slots: make(map[*Variable][]*Variable), clip: c.clip, schedule: c.schedule, rule: rule, device: device}
	if s := strategy.Current(); s != nil {
		o.counterFor(s)
	}
	return o
}

// base gives Accumulate, Slots and BuildOptimizer the shared part of every
// optimizer of this package.
func (o *optimizer) base() *optimizer { return o }

// Name returns the optimizer's name, unique within its strategy (adam,
// adam_1, ...); its variables are named "NAME/...".
func (o *optimizer) Name() string { return o.name }

// Iterations returns the number of updates applied so far, read from the
// optimizer's step counter variable (so a restored checkpoint sets it).
func (o *optimizer) Iterations() int {
	if o.iters == nil {
		return 0
	}
	return readCounter(o.iters)
}

// counterFor creates the step counter under s on first use.
func (o *optimizer) counterFor(s *strategy.Mirrored) {
	if o.iters == nil {
		o.iters = newCounter(s, o.name+"/iterations")
	}
}

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
	if t, ok := o.rule.(tracker); ok {
		t.track(v)
	}
	return sl
}

// Build creates the optimizer's step counter and the slots of vars now, under
// the current strategy, instead of on the first ApplyGradients (Keras's
// optimizer.build). Restoring a checkpoint into a fresh strategy needs it:
// the slots must exist to receive their saved values. It panics with an
// error wrapping ErrUsage outside a strategy's Scope.
func (o *optimizer) Build(vars []*Variable) {
	s := strategy.Current()
	if s == nil {
		panic(usageError("%s: Build: call it inside the strategy's Scope", o.name))
	}
	o.counterFor(s)
	for _, v := range vars {
		if v == nil {
			panic(usageError("%s: Build: variable is nil", o.name))
		}
		o.slotsFor(s, v)
	}
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
	if ctx == nil {
		panic(usageError("%s: ApplyGradientsTo: want the step's *strategy.ReplicaContext, got nil", o.name))
	}
	if len(grads) != len(vars) {
		panic(usageError("%s: ApplyGradientsTo: want one gradient per variable, got %d gradients and %d variables", o.name, len(grads), len(vars)))
	}
	o.register(ctx, vars, grads)
}

// prepare creates the counter and the slots of vars under the step's
// strategy and returns the slots, aligned with vars.
func (o *optimizer) prepare(s *strategy.Mirrored, vars []*Variable) [][]*Variable {
	o.counterFor(s)
	slots := make([][]*Variable, len(vars))
	for i, v := range vars {
		slots[i] = o.slotsFor(s, v)
	}
	return slots
}

func (o *optimizer) register(ctx *strategy.ReplicaContext, vars []*Variable, grads []*Tensor) {
	u := o.hostUpdate(ctx.Strategy(), vars)
	u.Grads = grads
	ctx.ApplyUpdate(u)
}

// hostUpdate is the update of vars under s, without the gradient nodes:
// register adds the step's, HostUpdate leaves them to an external step.
func (o *optimizer) hostUpdate(s *strategy.Mirrored, vars []*Variable) strategy.Registration {
	u := optimizerUpdate{o: o, vars: vars, slots: o.prepare(s, vars)}
	reg := strategy.Registration{Name: o.name, Vars: vars, Update: &u}
	if o.clip == 0 {
		// Without clipping, which needs the norm of every summed gradient
		// first, the update is element by element: the replicas can share
		// it.
		sp := optimizerSplit{optimizerUpdate: u}
		reg.Update = &sp
		if o.device != nil {
			reg.Update = &optimizerDeviceSplit{sp}
		}
	}
	return reg
}

// optimizerUpdate is an optimizer's update of vars, whose slots are slots:
// clip, evaluate the schedule on the counter, update, count (step). It
// checks the learning rate before each step (checkRate).
type optimizerUpdate struct {
	o     *optimizer
	vars  []*Variable
	slots [][]*Variable // aligned with vars
}

func (u *optimizerUpdate) Apply(gs []strategy.Grad) { u.o.step(gs, u.slots) }

func (u *optimizerUpdate) Check() error { return u.o.checkRate() }

// optimizerSplit is an optimizerUpdate without clipping, applied in parts
// when the strategy shares it (strategy.Split): Begin and End bracket the
// parts with the step's number and rate.
type optimizerSplit struct {
	optimizerUpdate
	n  int     // the step's number, from Begin
	lr float64 // the step's scheduled rate, from Begin
}

func (u *optimizerSplit) Begin() { u.n, u.lr = u.o.begin() }

func (u *optimizerSplit) Part(i, off int, g strategy.Grad) {
	u.o.rule.update(u.n, u.lr, g, off, u.slots[i])
}

func (u *optimizerSplit) End() { writeCounter(u.o.iters, u.n) }

// optimizerDeviceSplit is an optimizerSplit of an optimizer with a device
// rule, which GPU replicas run on the devices (strategy.DeviceSplit,
// device.go).
type optimizerDeviceSplit struct{ optimizerSplit }

// Slots returns the variables' slots, which the device rule updates too.
func (u *optimizerDeviceSplit) Slots() [][]*Variable { return u.slots }

// What the strategy finds in the updates when it plans a step.
var (
	_ strategy.Checker     = (*optimizerUpdate)(nil)
	_ strategy.Split       = (*optimizerSplit)(nil)
	_ strategy.DeviceSplit = (*optimizerDeviceSplit)(nil)
	_ strategy.Checker     = (*accumulation)(nil)
)

// hostUpdater is implemented by the optimizers HostUpdate accepts.
type hostUpdater interface {
	hostUpdate(s *strategy.Mirrored, vars []*Variable) strategy.Registration
}

// HostUpdate returns opt's update of vars under s for a step whose gradients
// another engine computes (strategy.RunExternal, package gorgoniamodel's gorgonia
// models): its Apply runs opt's arithmetic (schedule, clipping, slots, step
// counter) on the gradients summed over replicas, exactly as for a traced
// step. It creates opt's counter and the slots of vars under s, and panics
// with an error wrapping ErrUsage if opt is not an optimizer of this package
// or Accumulate's, or a variable is nil.
func HostUpdate(s *strategy.Mirrored, opt Optimizer, vars []*Variable) strategy.Registration {
	h, ok := opt.(hostUpdater)
	if !ok {
		panic(usageError("HostUpdate: want an optimizer of package nn, got %T", opt))
	}
	if s == nil {
		panic(usageError("HostUpdate: want the strategy of the variables, got nil"))
	}
	for i, v := range vars {
		if v == nil {
			panic(usageError("HostUpdate: variable %d is nil", i))
		}
	}
	return h.hostUpdate(s, vars)
}

// checkRate returns an error unless the coming update's learning rate (the
// schedule's, or the LR field, which may have been assigned since the step
// was traced) is finite and ≥ 0. The strategy calls it before every step,
// so a bad rate stops the step with nothing applied.
func (o *optimizer) checkRate() error {
	if o.schedule != nil {
		_, lr := o.begin()
		if err := checkRate(lr); err != nil {
			return usageError("%s: the schedule's rate for update %d: %v", o.name, o.Iterations()+1, err)
		}
		return nil
	}
	if err := checkRate(o.rule.rate()); err != nil {
		return usageError("%s: LR: %v", o.name, err)
	}
	return nil
}

// begin returns the number of the coming update and its scheduled learning
// rate (NaN without a schedule: each update uses its LR field).
func (o *optimizer) begin() (step int, lr float64) {
	n := readCounter(o.iters) + 1
	lr = math.NaN()
	if o.schedule != nil {
		lr = o.schedule.Rate(n - 1)
	}
	return n, lr
}

// step applies one update: clip, evaluate the schedule on the counter,
// update, count. gs are the gradients summed over replicas; step may scale
// them.
func (o *optimizer) step(gs []strategy.Grad, slots [][]*Variable) {
	n, lr := o.begin()
	if o.clip > 0 {
		clipGlobalNorm(gs, o.clip)
	}
	for i, g := range gs {
		o.rule.update(n, lr, g, 0, slots[i])
	}
	writeCounter(o.iters, n)
}

// gradLen is how many elements g holds, in whichever dtype.
func gradLen(g strategy.Grad) int { return len(g.F32) + len(g.F64) }

// window returns x[off:off+n], or nil for a nil x (a slot the optimizer's
// settings leave out).
func window[T float32 | float64](x []T, off, n int) []T {
	if x == nil {
		return nil
	}
	return x[off : off+n]
}

// pick returns the scheduled rate if a schedule is set, else the constant.
func (o *optimizer) pick(scheduled, constant float64) float64 {
	if o.schedule != nil {
		return scheduled
	}
	return constant
}

// The step counter is a non-trainable variable of shape [2] so that
// checkpoints keep it: count = hi·2²⁴ + lo. Two parts keep it exact in a
// float32 strategy (one float32 counts exactly only to 2²⁴ ≈ 16.7 million).
const counterBase = 1 << 24

func newCounter(s *strategy.Mirrored, name string) *Variable {
	v := s.CreateVariable(name, []int{2}, nil)
	v.SetTrainable(false)
	return v
}

func readCounter(v *Variable) int {
	if f := v.F32(); f != nil {
		return int(f[0])*counterBase + int(f[1])
	}
	f := v.F64()
	return int(f[0])*counterBase + int(f[1])
}

func writeCounter(v *Variable, n int) {
	hi, lo := n/counterBase, n%counterBase
	if f := v.F32(); f != nil {
		f[0], f[1] = float32(hi), float32(lo)
		return
	}
	f := v.F64()
	f[0], f[1] = float64(hi), float64(lo)
}

// SGD is stochastic gradient descent with optional (Nesterov) momentum, as
// torch.optim.SGD computes it (see loops.SGDUpdate).
type SGD struct {
	optimizer
	LR       float64 // used when no schedule is set
	Momentum float64
	Nesterov bool
}

// NewSGD returns an SGD optimizer with learning rate lr. Options:
// WithMomentum, WithNesterov, WithClipGlobalNorm, WithSchedule. It panics if
// lr or the momentum is negative, Nesterov is asked without momentum, or an
// option does not apply.
func NewSGD(lr float64, opts ...OptimizerOption) *SGD {
	c := configure("NewSGD", lr, optConfig{}, []string{"WithMomentum", "WithNesterov"}, opts)
	if c.momentum < 0 || math.IsNaN(c.momentum) {
		panic(usageError("NewSGD: want momentum ≥ 0, got %g", c.momentum))
	}
	if c.nesterov && c.momentum == 0 {
		panic(usageError("NewSGD: Nesterov needs a momentum > 0"))
	}
	o := &SGD{LR: lr, Momentum: c.momentum, Nesterov: c.nesterov}
	nslot := 0
	if o.Momentum != 0 {
		nslot = 1
	}
	o.optimizer = newOptimizer("sgd", nslot, c, o, sgdRule(o))
	return o
}

// update is SGD's rule (updateRule): loops.SGDUpdate on the range.
func (o *SGD) update(_ int, lr float64, g strategy.Grad, off int, slots []*Variable) {
	lr = o.pick(lr, o.LR)
	var vel32 []float32
	var vel64 []float64
	if o.nslot == 1 {
		vel32, vel64 = slots[0].F32(), slots[0].F64()
	}
	n := gradLen(g)
	if g.F32 != nil {
		loops.SGDUpdate(window(g.Var.F32(), off, n), g.F32, window(vel32, off, n), lr, o.Momentum, o.Nesterov)
	} else {
		loops.SGDUpdate(window(g.Var.F64(), off, n), g.F64, window(vel64, off, n), lr, o.Momentum, o.Nesterov)
	}
}

// rate returns LR (updateRule).
func (o *SGD) rate() float64 { return o.LR }

// Adam is the Adam optimizer, as torch.optim.Adam computes it (see
// loops.AdamUpdate).
type Adam struct {
	optimizer
	LR, Beta1, Beta2, Epsilon float64 // LR is used when no schedule is set
}

func checkAdam(ctor string, c optConfig) {
	if c.eps < 0 || c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1 || math.IsNaN(c.eps+c.beta1+c.beta2) {
		panic(usageError("%s: want ε ≥ 0 and β in [0, 1), got ε %g, β₁ %g, β₂ %g", ctor, c.eps, c.beta1, c.beta2))
	}
}

// NewAdam returns an Adam optimizer with learning rate lr. Options:
// WithBetas, WithEpsilon, WithClipGlobalNorm, WithSchedule. It panics if lr
// or ε is negative, a β is outside [0, 1), or an option does not apply.
func NewAdam(lr float64, opts ...OptimizerOption) *Adam {
	c := configure("NewAdam", lr, optConfig{beta1: 0.9, beta2: 0.999, eps: 1e-7}, []string{"WithBetas", "WithEpsilon"}, opts)
	checkAdam("NewAdam", c)
	o := &Adam{LR: lr, Beta1: c.beta1, Beta2: c.beta2, Epsilon: c.eps}
	o.optimizer = newOptimizer("adam", 2, c, o, adamRule(o))
	return o
}

// update is Adam's rule (updateRule): loops.AdamUpdate on the range.
func (o *Adam) update(step int, lr float64, g strategy.Grad, off int, slots []*Variable) {
	lr = o.pick(lr, o.LR)
	m, v := slots[0], slots[1]
	n := gradLen(g)
	if g.F32 != nil {
		loops.AdamUpdate(window(g.Var.F32(), off, n), g.F32, window(m.F32(), off, n), window(v.F32(), off, n), lr, o.Beta1, o.Beta2, o.Epsilon, step)
	} else {
		loops.AdamUpdate(window(g.Var.F64(), off, n), g.F64, window(m.F64(), off, n), window(v.F64(), off, n), lr, o.Beta1, o.Beta2, o.Epsilon, step)
	}
}

// rate returns LR (updateRule).
func (o *Adam) rate() float64 { return o.LR }

// AdamW is Adam with decoupled weight decay, as torch.optim.AdamW computes it
// (see loops.AdamWUpdate): each update first multiplies a decayed weight
// by 1 - lr·WeightDecay, with lr the update's (possibly scheduled) rate.
//
// By default only variables of rank ≥ 2 decay: dense and convolution
// kernels, embedding tables. Biases, normalization scales and offsets
// (batch norm's γ and β, layer norm's) are vectors and do not. Decay pulls a
// weight towards zero; that regularizes a matrix, which has many ways to fit
// the data, but a bias or a scale is one number per unit whose size the
// data fixes, and a norm's γ pulled to zero shrinks its whole layer. This is
// what nanoGPT and the Hugging Face trainers configure by hand, with
// PyTorch's two parameter groups; torch.optim.AdamW and Keras's AdamW decay
// whatever they are given. WithDecayIf replaces the rule, WithoutDecay
// exempts variables by name (Keras's exclude_from_weight_decay). A variable
// that does not decay moves exactly as under Adam.
type AdamW struct {
	optimizer
	LR, Beta1, Beta2, Epsilon, WeightDecay float64 // LR is used when no schedule is set

	noDecay []*regexp.Regexp
	decayIf func(v *Variable) bool
	// decays records Decays(v) for each variable met, when its slots were
	// made; the update only reads it, from every replica at once.
	decays map[*Variable]bool
}

// NewAdamW returns an AdamW optimizer with learning rate lr. Options:
// WithWeightDecay (default 0.01), WithoutDecay, WithDecayIf, WithBetas,
// WithEpsilon, WithClipGlobalNorm, WithSchedule. It panics as NewAdam does,
// if the weight decay is negative, and if WithDecayIf is given nil.
func NewAdamW(lr float64, opts ...OptimizerOption) *AdamW {
	c := configure("NewAdamW", lr, optConfig{beta1: 0.9, beta2: 0.999, eps: 1e-7, weightDecay: 0.01},
		[]string{"WithBetas", "WithEpsilon", "WithWeightDecay", "WithoutDecay", "WithDecayIf"}, opts)
	checkAdam("NewAdamW", c)
	if c.weightDecay < 0 || math.IsNaN(c.weightDecay) {
		panic(usageError("NewAdamW: want weight decay ≥ 0, got %g", c.weightDecay))
	}
	if c.has("WithDecayIf") && c.decayIf == nil {
		panic(usageError("NewAdamW: WithDecayIf: want a function, got nil"))
	}
	o := &AdamW{LR: lr, Beta1: c.beta1, Beta2: c.beta2, Epsilon: c.eps, WeightDecay: c.weightDecay,
		noDecay: c.noDecay, decayIf: c.decayIf, decays: make(map[*Variable]bool)}
	o.optimizer = newOptimizer("adamw", 2, c, o, adamWRule(o))
	return o
}

// track records whether v decays (tracker).
func (o *AdamW) track(v *Variable) { o.decays[v] = o.Decays(v) }

// update is AdamW's rule (updateRule): loops.AdamWUpdate, with the variable's decay on the range.
func (o *AdamW) update(step int, lr float64, g strategy.Grad, off int, slots []*Variable) {
	lr = o.pick(lr, o.LR)
	m, v := slots[0], slots[1]
	n := gradLen(g)
	wd := o.decayOf(g.Var)
	if g.F32 != nil {
		loops.AdamWUpdate(window(g.Var.F32(), off, n), g.F32, window(m.F32(), off, n), window(v.F32(), off, n), lr, o.Beta1, o.Beta2, o.Epsilon, wd, step)
	} else {
		loops.AdamWUpdate(window(g.Var.F64(), off, n), g.F64, window(m.F64(), off, n), window(v.F64(), off, n), lr, o.Beta1, o.Beta2, o.Epsilon, wd, step)
	}
}

// rate returns LR (updateRule).
func (o *AdamW) rate() float64 { return o.LR }

// Decays reports whether the optimizer's weight decay applies to v: by
// default when v has rank ≥ 2, or as WithDecayIf decides, and never when
// v's name matches a WithoutDecay pattern.
func (o *AdamW) Decays(v *Variable) bool {
	for _, re := range o.noDecay {
		if re.MatchString(v.Name()) {
			return false
		}
	}
	if o.decayIf != nil {
		return o.decayIf(v)
	}
	return len(v.Shape()) >= 2
}

// decayOf is the weight decay of v's update: WeightDecay, or 0 for a
// variable that does not decay, whose update is then Adam's to the bit
// (the kernels multiply by 1 - lr·0 = 1 exactly).
func (o *AdamW) decayOf(v *Variable) float64 {
	if o.decays[v] {
		return o.WeightDecay
	}
	return 0
}

// RMSprop is RMSprop (centered=False) as torch.optim.RMSprop computes it,
// ε added outside the square root (see loops.RMSpropUpdate), with Keras's
// defaults ρ = 0.9 and ε = 1e-7.
type RMSprop struct {
	optimizer
	LR, Rho, Epsilon, Momentum float64 // LR is used when no schedule is set
}

// NewRMSprop returns an RMSprop optimizer with learning rate lr. Options:
// WithRho, WithEpsilon, WithMomentum, WithClipGlobalNorm, WithSchedule. It
// panics if lr, ε or the momentum is negative, ρ is outside [0, 1), or an
// option does not apply.
func NewRMSprop(lr float64, opts ...OptimizerOption) *RMSprop {
	c := configure("NewRMSprop", lr, optConfig{rho: 0.9, eps: 1e-7}, []string{"WithRho", "WithEpsilon", "WithMomentum"}, opts)
	if c.eps < 0 || c.momentum < 0 || c.rho < 0 || c.rho >= 1 || math.IsNaN(c.eps+c.momentum+c.rho) {
		panic(usageError("NewRMSprop: want ε ≥ 0, momentum ≥ 0 and ρ in [0, 1), got ε %g, momentum %g, ρ %g", c.eps, c.momentum, c.rho))
	}
	o := &RMSprop{LR: lr, Rho: c.rho, Epsilon: c.eps, Momentum: c.momentum}
	nslot := 1
	if o.Momentum != 0 {
		nslot = 2
	}
	o.optimizer = newOptimizer("rmsprop", nslot, c, o, rmspropRule(o))
	return o
}

// update is RMSprop's rule (updateRule): loops.RMSpropUpdate on the range.
func (o *RMSprop) update(_ int, lr float64, g strategy.Grad, off int, slots []*Variable) {
	lr = o.pick(lr, o.LR)
	ms := slots[0]
	var mom *Variable
	if o.nslot == 2 {
		mom = slots[1]
	}
	n := gradLen(g)
	if g.F32 != nil {
		var m32 []float32
		if mom != nil {
			m32 = window(mom.F32(), off, n)
		}
		loops.RMSpropUpdate(window(g.Var.F32(), off, n), g.F32, window(ms.F32(), off, n), m32, lr, o.Rho, o.Epsilon, o.Momentum)
	} else {
		var m64 []float64
		if mom != nil {
			m64 = window(mom.F64(), off, n)
		}
		loops.RMSpropUpdate(window(g.Var.F64(), off, n), g.F64, window(ms.F64(), off, n), m64, lr, o.Rho, o.Epsilon, o.Momentum)
	}
}

// rate returns LR (updateRule).
func (o *RMSprop) rate() float64 { return o.LR }

var (
	_ Optimizer = (*AdamW)(nil)
	_ Optimizer = (*RMSprop)(nil)
	_ Optimizer = (*Accumulator)(nil)
)

// baseOptimizer is implemented by every optimizer of this package.
type baseOptimizer interface {
	Optimizer
	base() *optimizer
}

// Slots returns an optimizer's slot variables for v (Adam and AdamW: m and v;
// SGD with momentum: the velocity; RMSprop: the mean square, then the
// momentum buffer), or nil before its first update or Build. For an
// Accumulate wrapper they are the wrapped optimizer's slots.
func Slots(opt Optimizer, v *Variable) []*Variable {
	if b, ok := opt.(baseOptimizer); ok {
		return b.base().slots[v]
	}
	return nil
}

// BuildOptimizer calls opt's Build(vars) (see SGD.Build): it creates the step
// counter and the slots of vars under the current strategy now, so that a
// checkpoint can be restored into them before the first step. It panics with
// an error wrapping ErrUsage if opt is not an optimizer of this package or
// there is no current strategy.
func BuildOptimizer(opt Optimizer, vars []*Variable) {
	b, ok := opt.(interface{ Build([]*Variable) })
	if !ok {
		panic(usageError("BuildOptimizer: %T has no Build method", opt))
	}
	b.Build(vars)
}
