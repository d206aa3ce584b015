package nn_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// refOpt is a plain-loop reference optimizer written from PyTorch's
// documented algorithms (torch.optim.SGD, Adam, AdamW, RMSprop), with the
// rate of update t given by lr(t) and tf.clip_by_global_norm applied first
// when clip > 0.
type refOpt struct {
	kind                     string
	lr                       func(t int) float64
	mu, b1, b2, eps, wd, rho float64
	nesterov                 bool
	clip                     float64
	buf, m, v                []float64
	t                        int
}

func (o *refOpt) step(w, g []float64) {
	o.t++
	t := o.t
	lr := o.lr(t)
	g = append([]float64(nil), g...)
	if o.clip > 0 {
		var ss float64
		for _, x := range g {
			ss += x * x
		}
		if n := math.Sqrt(ss); n > o.clip {
			for i := range g {
				g[i] *= o.clip / n
			}
		}
	}
	if o.buf == nil {
		o.buf, o.m, o.v = make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
	}
	for i := range w {
		switch o.kind {
		case "sgd":
			d := g[i]
			if o.mu != 0 {
				o.buf[i] = o.mu*o.buf[i] + g[i]
				d = o.buf[i]
				if o.nesterov {
					d = g[i] + o.mu*o.buf[i]
				}
			}
			w[i] -= lr * d
		case "adam", "adamw":
			if o.kind == "adamw" {
				w[i] *= 1 - lr*o.wd
			}
			o.m[i] = o.b1*o.m[i] + (1-o.b1)*g[i]
			o.v[i] = o.b2*o.v[i] + (1-o.b2)*g[i]*g[i]
			mhat := o.m[i] / (1 - math.Pow(o.b1, float64(t)))
			vhat := o.v[i] / (1 - math.Pow(o.b2, float64(t)))
			w[i] -= lr * mhat / (math.Sqrt(vhat) + o.eps)
		case "rmsprop":
			o.v[i] = o.rho*o.v[i] + (1-o.rho)*g[i]*g[i]
			d := g[i] / (math.Sqrt(o.v[i]) + o.eps)
			if o.mu != 0 {
				o.buf[i] = o.mu*o.buf[i] + d
				d = o.buf[i]
			}
			w[i] -= lr * d
		}
	}
}

func decayAll(*nn.Variable) bool { return true }

func constLR(lr float64) func(int) float64 { return func(int) float64 { return lr } }

func TestOptimizersMatchPyTorchLoops(t *testing.T) {
	cosine := nn.CosineDecay{Initial: 0.01, WarmupSteps: 2, WarmupTarget: 0.1, DecaySteps: 5, Alpha: 0.1}
	sched := func(t int) float64 { return cosine.Rate(t - 1) }
	tests := []struct {
		name string
		opt  func() nn.Optimizer
		ref  *refOpt
	}{
		{"sgd", func() nn.Optimizer { return nn.NewSGD(0.1) }, &refOpt{kind: "sgd", lr: constLR(0.1)}},
		{"sgd-momentum", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9)) }, &refOpt{kind: "sgd", lr: constLR(0.1), mu: 0.9}},
		{"sgd-nesterov", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9), nn.WithNesterov()) }, &refOpt{kind: "sgd", lr: constLR(0.1), mu: 0.9, nesterov: true}},
		{"adam", func() nn.Optimizer { return nn.NewAdam(0.05, nn.WithEpsilon(1e-8)) }, &refOpt{kind: "adam", lr: constLR(0.05), b1: 0.9, b2: 0.999, eps: 1e-8}},
		// PyTorch's AdamW decays every parameter given; gotrain's, matrices
		// only unless told (these variables are vectors).
		{"adamw", func() nn.Optimizer {
			return nn.NewAdamW(0.05, nn.WithWeightDecay(0.1), nn.WithBetas(0.8, 0.99), nn.WithDecayIf(decayAll))
		},
			&refOpt{kind: "adamw", lr: constLR(0.05), b1: 0.8, b2: 0.99, eps: 1e-7, wd: 0.1}},
		{"rmsprop", func() nn.Optimizer { return nn.NewRMSprop(0.01) }, &refOpt{kind: "rmsprop", lr: constLR(0.01), rho: 0.9, eps: 1e-7}},
		{"rmsprop-momentum", func() nn.Optimizer { return nn.NewRMSprop(0.01, nn.WithMomentum(0.5), nn.WithRho(0.8)) },
			&refOpt{kind: "rmsprop", lr: constLR(0.01), rho: 0.8, eps: 1e-7, mu: 0.5}},
		{"sgd-clip", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithClipGlobalNorm(0.5)) }, &refOpt{kind: "sgd", lr: constLR(0.1), clip: 0.5}},
		{"adam-cosine-warmup", func() nn.Optimizer { return nn.NewAdam(0, nn.WithSchedule(cosine)) },
			&refOpt{kind: "adam", lr: sched, b1: 0.9, b2: 0.999, eps: 1e-7}},
		{"adamw-schedule-clip", func() nn.Optimizer {
			return nn.NewAdamW(0, nn.WithSchedule(nn.StepDecay{Initial: 0.1, Factor: 0.5, Every: 2}), nn.WithClipGlobalNorm(1), nn.WithDecayIf(decayAll))
		}, &refOpt{kind: "adamw", lr: func(t int) float64 { return 0.1 * math.Pow(0.5, float64((t-1)/2)) }, b1: 0.9, b2: 0.999, eps: 1e-7, wd: 0.01, clip: 1}},
	}
	// loss = Σ a·w² + b·w + c·w³ over two variables: gradients 2aw + b + 3cw².
	a := data.NewTensor([]int{3}, []float64{1, 0.5, 2})
	b := data.NewTensor([]int{3}, []float64{-1, 0.3, 0.7})
	c := data.NewTensor([]int{3}, []float64{0.1, -0.2, 0.05})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStrategy(t)
			var w1, w2 *nn.Variable
			var opt nn.Optimizer
			s.Scope(func() {
				w1 = strategy.CreateVariable("w1", []int{3}, []float64{0.5, -1, 2})
				w2 = strategy.CreateVariable("w2", []int{3}, []float64{1.5, 0.2, -0.4})
				opt = tt.opt()
			})
			step := func(ctx *strategy.ReplicaContext, a, b, c *nn.Tensor) *nn.Tensor {
				g := ctx.Graph()
				var loss *nn.Tensor
				for _, w := range []*nn.Variable{w1, w2} {
					x := g.Var(w)
					l := graph.Sum(graph.Add(graph.Add(graph.Mul(a, graph.Square(x)), graph.Mul(b, x)), graph.Mul(c, graph.Mul(x, graph.Square(x)))))
					if loss == nil {
						loss = l
					} else {
						loss = graph.Add(loss, l)
					}
				}
				opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w1, w2}))
				return loss
			}
			ref := append(w1.Value(), w2.Value()...)
			for k := range 7 {
				grad := make([]float64, 6)
				for i, w := range ref {
					j := i % 3
					grad[i] = 2*a.Data[j]*w + b.Data[j] + 3*c.Data[j]*w*w
				}
				tt.ref.step(ref, grad)
				s.Run(step, s.Broadcast(a), s.Broadcast(b), s.Broadcast(c))
				got := append(w1.Value(), w2.Value()...)
				for i := range got {
					if math.Abs(got[i]-ref[i]) > 1e-12*math.Max(1, math.Abs(ref[i])) {
						t.Fatalf("step %d: w[%d] = %.15g, reference %.15g", k+1, i, got[i], ref[i])
					}
				}
			}
			if opt.Iterations() != 7 {
				t.Errorf("Iterations() = %d, want 7", opt.Iterations())
			}
		})
	}
}

func TestStepCounterIsAVariable(t *testing.T) {
	s := newStrategy(t, strategy.WithDType(graph.Float32))
	var opt *nn.Adam
	s.Scope(func() { opt = nn.NewAdam(0.1) })
	var counter *nn.Variable
	for _, v := range s.Variables() {
		if v.Name() == opt.Name()+"/iterations" {
			counter = v
		}
	}
	if counter == nil || counter.Trainable() {
		t.Fatalf("no non-trainable step counter among %v", s.Variables())
	}
	// 2²⁴+3 is not a float32; the counter keeps it exactly.
	const n = 1<<24 + 3
	counter.Assign([]float64{1, 3})
	if got := opt.Iterations(); got != n {
		t.Errorf("Iterations() = %d, want %d", got, n)
	}
}

func TestOptimizerMisuse(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"betas-to-sgd", func() { nn.NewSGD(0.1, nn.WithBetas(0.9, 0.99)) }, "nn: NewSGD: option WithBetas does not apply to this optimizer"},
		{"nesterov-to-rmsprop", func() { nn.NewRMSprop(0.1, nn.WithNesterov()) }, "nn: NewRMSprop: option WithNesterov does not apply to this optimizer"},
		{"negative-lr", func() { nn.NewAdamW(-1) }, "nn: NewAdamW: want a finite lr ≥ 0, got -1"},
		{"lr-and-schedule", func() { nn.NewSGD(0.1, nn.WithSchedule(nn.StepDecay{Initial: 1, Factor: 0.5, Every: 1})) },
			"nn: NewSGD: got lr 0.1 and WithSchedule; the schedule gives the rate, so pass lr 0"},
		{"bad-schedule", func() { nn.NewSGD(0, nn.WithSchedule(nn.CosineDecay{Initial: 1})) },
			"nn: NewSGD: WithSchedule: nn: CosineDecay: want finite Initial ≥ 0, WarmupTarget ≥ 0, DecaySteps ≥ 1, WarmupSteps ≥ 0 and Alpha in [0, 1], got 1, 0, 0, 0, 0"},
		{"clip-zero", func() { nn.NewAdam(0.1, nn.WithClipGlobalNorm(0)) }, "nn: NewAdam: WithClipGlobalNorm: want a norm > 0, got 0"},
		{"rho", func() { nn.NewRMSprop(0.1, nn.WithRho(1)) }, "nn: NewRMSprop: want ε ≥ 0, momentum ≥ 0 and ρ in [0, 1), got ε 1e-07, momentum 0, ρ 1"},
		{"weight-decay", func() { nn.NewAdamW(0.1, nn.WithWeightDecay(-1)) }, "nn: NewAdamW: want weight decay ≥ 0, got -1"},
		// The name is sgd, sgd_2, ... in the order of creation in this
		// process, so only the rest of the message is compared (-count=N).
		{"build-outside-scope", func() { nn.NewSGD(0.1).Build(nil) }, ": Build: call it inside the strategy's Scope"},
		{"accumulate-k", func() { nn.Accumulate(nn.NewSGD(0.1), 0) }, "nn: Accumulate: want k ≥ 1 steps, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := panics(tt.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, nn.ErrUsage) {
				t.Fatalf("panic %v, want an error wrapping nn.ErrUsage", v)
			}
			if got := err.Error(); got != tt.want && !(strings.HasPrefix(tt.want, ": ") && strings.HasPrefix(got, "nn: sgd") && strings.HasSuffix(got, tt.want)) {
				t.Errorf("error %q\nwant     %q", err, tt.want)
			}
		})
	}
}

func TestClipByGlobalNorm(t *testing.T) {
	tests := []struct {
		name     string
		a, b     []float64
		clip     float64
		wantNorm float64
		wantA    []float64
	}{
		{"clipped", []float64{3, 0}, []float64{0, 4}, 1, 5, []float64{0.6, 0}},
		{"under", []float64{0.3, 0}, []float64{0, 0.4}, 1, 0.5, []float64{0.3, 0}},
		{"equal", []float64{3}, []float64{4}, 5, 5, []float64{3}},
		{"nan-left-alone", []float64{math.NaN()}, []float64{1}, 1, math.NaN(), []float64{math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := []strategy.Grad{{F64: append([]float64(nil), tt.a...)}, {F32: toF32(tt.b)}}
			norm := nn.ClipByGlobalNorm(gs, tt.clip)
			if !(math.Abs(norm-tt.wantNorm) < 1e-6) && !(math.IsNaN(norm) && math.IsNaN(tt.wantNorm)) {
				t.Errorf("norm %v, want %v", norm, tt.wantNorm)
			}
			for i, v := range gs[0].F64 {
				if !(math.Abs(v-tt.wantA[i]) < 1e-12) && !(math.IsNaN(v) && math.IsNaN(tt.wantA[i])) {
					t.Errorf("a[%d] = %v, want %v", i, v, tt.wantA[i])
				}
			}
			if after := nn.GlobalNorm(gs); !math.IsNaN(norm) && after > tt.clip*(1+1e-6) {
				t.Errorf("norm after clipping %v > %v", after, tt.clip)
			}
		})
	}
}

// numericsRun is a two-replica model whose replicas get inputs of their own,
// so that one replica alone can produce a NaN.
type numericsRun struct {
	s     *strategy.Mirrored
	model *nn.Sequential
	opt   nn.Optimizer
	step  func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
	width int
}

func newNumericsRun(t *testing.T, width, hidden int, opt func() nn.Optimizer, opts ...strategy.Option) *numericsRun {
	t.Helper()
	r := &numericsRun{width: width}
	r.s = newStrategy(t, append([]strategy.Option{strategy.WithReplicas(2)}, opts...)...)
	r.s.Scope(func() {
		r.model = nn.NewSequential(nn.Dense(hidden, nn.ReLU), nn.Dense(2))
		r.opt = opt()
	})
	r.step = strategytest.ClassifierStep(r.model, r.opt, 8)
	return r
}

// run runs one step; bad, if ≥ 0, is the replica whose first input is NaN.
func (r *numericsRun) run(bad int) error {
	xs := []data.Tensor{data.RandomNormal(1, 4, r.width), data.RandomNormal(2, 4, r.width)}
	if bad >= 0 {
		xs[bad].Data[0] = math.NaN()
	}
	y := data.NewTensor([]int{4}, []float64{0, 1, 1, 0})
	_, err := r.s.TryRun(r.step, strategy.NewPerReplica(xs...), strategy.NewPerReplica(y, y))
	return err
}

func (r *numericsRun) weights() []float64 { return allWeights(r.s) }

// TestNonFinite: a NaN loss on one replica, or a learning rate set to NaN or
// Inf between steps, stops the step with an error naming what went wrong,
// and nothing is applied.
func TestNonFinite(t *testing.T) {
	sgd := func() nn.Optimizer { return nn.NewSGD(0.1) }
	tests := []struct {
		name      string
		width     int // input width: 256 gives over 64k weights, which the replicas update in parts
		opt       func() nn.Optimizer
		opts      []strategy.Option
		spoil     func(r *numericsRun) // before the second step
		bad       int                  // replica with a NaN input in the second step, or -1
		want      string               // prefix of the error
		nonFinite bool                 // the error wraps strategy.ErrNonFinite
	}{
		{name: "nan-on-replica-1", width: 8, opt: sgd, bad: 1,
			want: `strategy: replica 1: gradient of "dense/kernel" holds NaN at element `, nonFinite: true},
		{name: "nan-on-replica-1-shared-update", width: 256, opt: sgd, bad: 1,
			want: `strategy: replica 1: gradient of "dense/kernel" is not finite: its operand input_0[4 256] holds NaN at element 0`, nonFinite: true},
		{name: "nan-adam-clipped", width: 8, opt: func() nn.Optimizer { return nn.NewAdam(0.01, nn.WithClipGlobalNorm(1)) }, bad: 0,
			want: `strategy: replica 0: gradient of "dense/kernel" holds NaN at element `, nonFinite: true},
		{name: "lr-field-nan", width: 8, opt: sgd, bad: -1,
			spoil: func(r *numericsRun) { r.opt.(*nn.SGD).LR = math.NaN() },
			want:  "nn: sgd: LR: want a finite lr ≥ 0, got NaN"},
		{name: "lr-field-inf-shared-update", width: 256, opt: func() nn.Optimizer { return nn.NewAdam(0.01) }, bad: -1,
			spoil: func(r *numericsRun) { r.opt.(*nn.Adam).LR = math.Inf(1) },
			want:  "nn: adam: LR: want a finite lr ≥ 0, got +Inf"},
		{name: "schedule-gives-inf", width: 8, bad: -1,
			opt:  func() nn.Optimizer { return nn.NewSGD(0, nn.WithSchedule(growing{})) },
			want: "nn: sgd: the schedule's rate for update 2: want a finite lr ≥ 0, got +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newNumericsRun(t, tt.width, 300, tt.opt, tt.opts...)
			if err := r.run(-1); err != nil {
				t.Fatalf("first step: %v", err)
			}
			if tt.spoil != nil {
				tt.spoil(r)
			}
			before, iters := r.weights(), r.opt.Iterations()
			err := r.run(tt.bad)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("second step: error\n got %v\nwant %s...", err, tt.want)
			}
			if got := errors.Is(err, strategy.ErrNonFinite); got != tt.nonFinite {
				t.Errorf("errors.Is(%v, ErrNonFinite) = %v, want %v", err, got, tt.nonFinite)
			}
			if after := r.weights(); !slices.Equal(after, before) || r.opt.Iterations() != iters {
				t.Errorf("the failed step changed the variables (iterations %d, want %d)", r.opt.Iterations(), iters)
			}
		})
	}
}

// growing is a schedule whose second rate is +Inf.
type growing struct{}

func (growing) Rate(step int) float64 {
	if step == 0 {
		return 0.1
	}
	return math.Inf(1)
}

// TestNonFiniteUnchecked: without the check, the step is applied: the
// weights become NaN.
func TestNonFiniteUnchecked(t *testing.T) {
	r := newNumericsRun(t, 8, 300, func() nn.Optimizer { return nn.NewSGD(0.1) }, strategy.WithCheckNumerics(false))
	if err := r.run(1); err != nil {
		t.Fatalf("step: %v", err)
	}
	nan := 0
	for _, v := range r.weights() {
		if math.IsNaN(v) {
			nan++
		}
	}
	if nan == 0 {
		t.Errorf("no weight is NaN after an unchecked NaN step")
	}
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func ExampleNewAdamW() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.AdamW
	s.Scope(func() {
		// A matrix: AdamW decays rank ≥ 2 variables by default.
		w = strategy.CreateVariable("w", []int{1, 1}, []float64{1})
		opt = nn.NewAdamW(0.1, nn.WithWeightDecay(0.5))
	})
	// A zero loss gradient: only the decoupled weight decay moves w.
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Scale(graph.Sum(ctx.Graph().Var(w)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	for range 2 {
		s.Run(step)
		fmt.Printf("w = %.4f\n", w.Value()[0])
	}
	// Output:
	// w = 0.9500
	// w = 0.9025
}

func ExampleNewRMSprop() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.RMSprop
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{1}, []float64{1})
		opt = nn.NewRMSprop(0.01)
	})
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Sum(graph.Square(ctx.Graph().Var(w)))
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	s.Run(step)
	// The first step divides g by √(0.1·g²): about lr·√10 whatever g is.
	fmt.Printf("w = %.4f\n", w.Value()[0])
	// Output: w = 0.9684
}

func ExampleWithClipGlobalNorm() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.SGD
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{2}, []float64{3, 4})
		opt = nn.NewSGD(1, nn.WithClipGlobalNorm(1))
	})
	// The gradient of ½‖w‖² is w, norm 5: clipped to norm 1 it is w/5.
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Scale(graph.Sum(graph.Square(ctx.Graph().Var(w))), 0.5)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	s.Run(step)
	fmt.Printf("w = [%.2f %.2f]\n", w.Value()[0], w.Value()[1])
	// Output: w = [2.40 3.20]
}

func ExampleClipByGlobalNorm() {
	gs := []strategy.Grad{{F64: []float64{3, 0}}, {F64: []float64{0, 4}}}
	norm := nn.ClipByGlobalNorm(gs, 1)
	fmt.Printf("norm %.1f, clipped %.1f %.1f, new norm %.1f\n", norm, gs[0].F64, gs[1].F64, nn.GlobalNorm(gs))
	// Output: norm 5.0, clipped [0.6 0.0] [0.0 0.8], new norm 1.0
}

func ExampleGlobalNorm() {
	gs := []strategy.Grad{{F32: []float32{1, 2}}, {F32: []float32{2}}}
	fmt.Printf("%.1f\n", nn.GlobalNorm(gs))
	// Output: 3.0
}

func ExampleWithSchedule() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.SGD
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{1}, []float64{0})
		// The rate halves every 2 updates: 1, 1, 0.5, 0.5, ...
		opt = nn.NewSGD(0, nn.WithSchedule(nn.StepDecay{Initial: 1, Factor: 0.5, Every: 2}))
	})
	// loss = -w: the gradient is -1, so each update adds the rate to w.
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Neg(graph.Sum(ctx.Graph().Var(w)))
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	for range 4 {
		s.Run(step)
		fmt.Printf("%d: w = %.2f\n", opt.Iterations(), w.Value()[0])
	}
	// Output:
	// 1: w = 1.00
	// 2: w = 2.00
	// 3: w = 2.50
	// 4: w = 3.00
}

func ExampleBuildOptimizer() {
	s := strategy.NewOneDevice()
	defer s.Close()
	s.Scope(func() {
		model := nn.NewSequential(nn.Dense(2))
		model.Build([]int{1, 3})
		opt := nn.NewAdam(0.001)
		nn.BuildOptimizer(opt, model.TrainableVariables())
	})
	for _, v := range s.Variables() {
		fmt.Println(v)
	}
	// Output:
	// dense/kernel[3 2] float32
	// dense/bias[2] float32
	// adam/iterations[2] float32
	// adam/dense/kernel/slot0[3 2] float32
	// adam/dense/kernel/slot1[3 2] float32
	// adam/dense/bias/slot0[2] float32
	// adam/dense/bias/slot1[2] float32
}
