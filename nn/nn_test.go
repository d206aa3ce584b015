package nn_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

func panics(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

func newStrategy(t *testing.T, opts ...strategy.Option) *strategy.Mirrored {
	t.Helper()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithReplicas(1), strategy.WithDType(graph.Float64)}, opts...)...)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// forward runs fn on x with a one-replica float64 strategy and returns the
// output.
func forward(t *testing.T, s *strategy.Mirrored, fn any, args ...any) data.Tensor {
	t.Helper()
	res, err := s.TryRun(fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	return res.Values()[0]
}

// allWeights returns the values of every variable of s, in creation order.
func allWeights(s *strategy.Mirrored) []float64 {
	var w []float64
	for _, v := range s.Variables() {
		w = append(w, v.Value()...)
	}
	return w
}

func TestDenseActivations(t *testing.T) {
	x := data.NewTensor([]int{2, 3}, []float64{0.5, -1, 2, -0.3, 0.8, 0.1})
	ref := map[nn.Activation]func(z []float64) []float64{
		nn.Linear: func(z []float64) []float64 { return z },
		nn.ReLU:   func(z []float64) []float64 { return apply(z, func(v float64) float64 { return max(v, 0) }) },
		nn.Tanh:   func(z []float64) []float64 { return apply(z, math.Tanh) },
		nn.Sigmoid: func(z []float64) []float64 {
			return apply(z, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })
		},
		nn.GELU: func(z []float64) []float64 {
			return apply(z, func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) })
		},
		nn.GELUTanh: func(z []float64) []float64 {
			return apply(z, func(v float64) float64 {
				return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			})
		},
		nn.SiLU: func(z []float64) []float64 {
			return apply(z, func(v float64) float64 { return v / (1 + math.Exp(-v)) })
		},
		nn.Softmax: func(z []float64) []float64 {
			out := make([]float64, len(z))
			for r := 0; r < len(z); r += 2 {
				a, b := math.Exp(z[r]), math.Exp(z[r+1])
				out[r], out[r+1] = a/(a+b), b/(a+b)
			}
			return out
		},
	}
	for act, want := range ref {
		t.Run(act.String(), func(t *testing.T) {
			s := newStrategy(t)
			var d *nn.DenseLayer
			s.Scope(func() { d = nn.Dense(2, act); d.Build([]int{2, 3}) })
			d.Bias().Assign([]float64{0.25, -0.5})
			got := forward(t, s, func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d.Call(ctx, x, false) }, x)
			// z = x·W + b by hand.
			w := d.Kernel().Value()
			z := make([]float64, 4)
			for r := range 2 {
				for j := range 2 {
					z[2*r+j] = []float64{0.25, -0.5}[j]
					for i := range 3 {
						z[2*r+j] += x.Data[3*r+i] * w[2*i+j]
					}
				}
			}
			for i, v := range want(z) {
				if math.Abs(got.Data[i]-v) > 1e-12 {
					t.Fatalf("output %v, want %v", got.Data, want(z))
				}
			}
		})
	}
}

func apply(z []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = f(v)
	}
	return out
}

func TestDenseMisuse(t *testing.T) {
	s := newStrategy(t)
	var d *nn.DenseLayer
	s.Scope(func() { d = nn.Dense(3) })
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d.Call(ctx, x, false) }
	forward(t, s, step, data.Zeros(4, 10))
	tests := []struct {
		name string
		x    data.Tensor
		want string
	}{
		{"width", data.Zeros(4, 12), "strategy: replica 0: nn: dense: want input width 10, got 12"},
		{"rank", data.Zeros(4), "strategy: replica 0: nn: dense: want input shape [batch, ..., width], got [4]"},
		{"rank 3 width", data.Zeros(4, 2, 5), "strategy: replica 0: nn: dense: want input width 10, got 5"},
	}
	for _, tt := range tests {
		_, err := s.TryRun(step, tt.x)
		if err == nil || err.Error() != tt.want || !errors.Is(err, nn.ErrShape) {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.want)
		}
	}
	for name, fn := range map[string]func(){
		"units": func() { nn.Dense(0) },
		"acts":  func() { nn.Dense(2, nn.ReLU, nn.Tanh) },
		"act":   func() { nn.Dense(2, nn.Activation(99)) },
		"sgd":   func() { nn.NewSGD(0.1, nn.WithNesterov()) },
		"adam":  func() { nn.NewAdam(0.1, nn.WithBetas(1, 0.9)) },
	} {
		if err, ok := panics(fn).(error); !ok || !errors.Is(err, nn.ErrUsage) {
			t.Errorf("%s: panicked with %v, want an error wrapping ErrUsage", name, err)
		}
	}
}

// TestTooLarge: a layer whose weights would not fit in memory, or a batch of
// 1<<20 rows through a wide Dense whose weights fit but whose activations
// (8 TiB) would not, fails its step with an error naming the layer or node
// and the shape, wrapping data.ErrMemory, and the session trains on. The
// checks come before the allocations, so nothing that large is allocated.
func TestTooLarge(t *testing.T) {
	if err := data.CheckAlloc("probe", []int{1 << 50}, 8); err == nil {
		t.Skip("this machine's memory cannot be read")
	}
	tests := []struct {
		name string
		x    data.Tensor
		want string
	}{
		{"weights", data.Zeros(1, 1<<20),
			"strategy: replica 0: nn: dense: data: not enough memory: dense/kernel: shape [1048576 1048576] needs 16 TiB, more than this machine's "},
		{"activations", data.Zeros(1<<20, 1),
			"strategy: replica 0: graph: compile: not enough memory: dense/dense_4 of shape [1048576 1048576] and 2 other buffers: needs 8.0 TiB, more than this machine's "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStrategy(t)
			var wide *nn.Sequential
			s.Scope(func() { wide = nn.NewSequential(nn.Dense(1 << 20)) })
			forward := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return wide.Call(ctx, x, false) }
			_, err := s.TryRun(forward, tt.x)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, data.ErrMemory) {
				t.Fatalf("TryRun error\n got %v\nwant %s... wrapping data.ErrMemory", err, tt.want)
			}
			r := newNumericsRun(t, 8, 4, func() nn.Optimizer { return nn.NewSGD(0.1) })
			if err := r.run(-1); err != nil {
				t.Errorf("a step after the failure: %v", err)
			}
		})
	}
}

func TestNamesAndInitAreDeterministic(t *testing.T) {
	build := func(seed uint64) (*nn.Sequential, []string) {
		s := newStrategy(t, strategy.WithSeed(seed))
		var m *nn.Sequential
		s.Scope(func() {
			m = nn.NewSequential(nn.Dense(4), nn.Dense(3), nn.Dense(2))
			m.Build([]int{1, 5})
		})
		var names []string
		for _, v := range s.Variables() {
			names = append(names, v.Name())
		}
		return m, names
	}
	a, names := build(1)
	b, _ := build(1)
	c, _ := build(2)
	want := "[dense/kernel dense/bias dense_1/kernel dense_1/bias dense_2/kernel dense_2/bias]"
	if fmt.Sprint(names) != want {
		t.Errorf("names %v, want %s", names, want)
	}
	for i, v := range a.Variables() {
		if fmt.Sprint(v.Value()) != fmt.Sprint(b.Variables()[i].Value()) {
			t.Errorf("%s differs between two strategies with seed 1", v.Name())
		}
	}
	if fmt.Sprint(a.Variables()[0].Value()) == fmt.Sprint(c.Variables()[0].Value()) {
		t.Error("seeds 1 and 2 gave the same kernel")
	}
	limit := math.Sqrt(6.0 / (5 + 4))
	for _, v := range a.Variables()[0].Value() {
		if math.Abs(v) > limit {
			t.Errorf("kernel value %v outside ±%v", v, limit)
		}
	}
}

func TestLossReductions(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	// 3 examples on 2 replicas: replica 1 has one padded row.
	logits := data.NewTensor([]int{3, 2}, []float64{2, -1, 0.5, 0.5, -3, 1})
	labels := data.NewTensor([]int{3}, []float64{0, 1, 0})
	ce := make([]float64, 3)
	for r := range 3 {
		a, b := logits.Data[2*r], logits.Data[2*r+1]
		z := []float64{a, b}[int(labels.Data[r])]
		ce[r] = math.Log(math.Exp(a)+math.Exp(b)) - z
	}
	sum := ce[0] + ce[1] + ce[2]
	tests := []struct {
		name string
		loss func(y, p *nn.Tensor) *nn.Tensor
		want float64
		tol  float64 // relative
	}{
		{"sum", func(y, p *nn.Tensor) *nn.Tensor {
			return nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionSum}.Call(y, p)
		}, sum, 1e-12},
		{"average-global-batch", func(y, p *nn.Tensor) *nn.Tensor {
			return nn.ComputeAverageLoss(nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}.Call(y, p), 4)
		}, sum / 4, 1e-12},
		{"average-true-count", func(y, p *nn.Tensor) *nn.Tensor {
			return nn.ComputeAverageLoss(nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}.Call(y, p), 0)
		}, sum / 3, 1e-12},
		{"probabilities", func(y, p *nn.Tensor) *nn.Tensor {
			l := nn.SparseCategoricalCrossentropy{Reduction: nn.ReductionSum}
			return l.Call(y, nn.Softmax.Apply(p))
		}, sum, 1e-5}, // the 1e-7 that keeps log finite shifts it
	}
	dist := s.DistributeDataset(data.FromTensorSlices(logits, labels).Batch(3))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := dist.Iter()
			defer it.Close()
			it.Next()
			step := func(p, y *nn.Tensor) *nn.Tensor { return tt.loss(y, p) }
			got := s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar()
			if math.Abs(got-tt.want) > tt.tol*tt.want {
				t.Errorf("loss %.10f, want %.10f", got, tt.want)
			}
		})
	}
}

func TestOptimizerIterationsAndSlots(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	var m *nn.Sequential
	var adam, sgd nn.Optimizer
	s.Scope(func() {
		m = nn.NewSequential(nn.Dense(2))
		adam = nn.NewAdam(0.01)
		sgd = nn.NewSGD(0.01, nn.WithMomentum(0.5))
	})
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(graph.SumAxis(graph.Square(m.Call(ctx, x, true)), 1), 0)
		grads := ctx.Gradients(loss, m.TrainableVariables())
		adam.ApplyGradients(ctx, grads)
		sgd.ApplyGradients(ctx, grads[:1]) // a part of the slice works too
		return loss
	}
	for range 3 {
		s.Run(step, s.Broadcast(data.RandomNormal(3, 4, 3)))
	}
	k := m.TrainableVariables()[0]
	if adam.Iterations() != 3 || sgd.Iterations() != 3 {
		t.Errorf("iterations %d and %d, want 3", adam.Iterations(), sgd.Iterations())
	}
	if len(nn.Slots(adam, k)) != 2 || len(nn.Slots(sgd, k)) != 1 || nn.Slots(sgd, m.TrainableVariables()[1]) != nil {
		t.Errorf("slots: adam %v, sgd %v", nn.Slots(adam, k), nn.Slots(sgd, k))
	}
	// 2 weights, Adam's 4 slots, SGD's 1, and each optimizer's step counter.
	if len(m.TrainableVariables()) != 2 || len(s.Variables()) != 2+4+1+2 {
		t.Errorf("%d trainable, %d variables in all; want 2 and 9", len(m.TrainableVariables()), len(s.Variables()))
	}
}

// Slots of an accumulating optimizer are the wrapped optimizer's.
func TestAccumulatorSlots(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	var m *nn.Sequential
	var acc *nn.Accumulator
	s.Scope(func() {
		m = nn.NewSequential(nn.Dense(2))
		acc = nn.Accumulate(nn.NewAdam(0.01), 2)
	})
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(graph.SumAxis(graph.Square(m.Call(ctx, x, true)), 1), 0)
		acc.ApplyGradients(ctx, ctx.Gradients(loss, m.TrainableVariables()))
		return loss
	}
	for range 4 {
		s.Run(step, s.Broadcast(data.RandomNormal(3, 4, 3)))
	}
	k := m.TrainableVariables()[0]
	if got := nn.Slots(acc, k); len(got) != 2 || got[0].Len() != k.Len() {
		t.Errorf("Slots(accumulator, kernel) = %v, want Adam's two moments of %d values", got, k.Len())
	}
	if acc.Iterations() != 2 {
		t.Errorf("4 steps accumulated by 2: %d updates, want 2", acc.Iterations())
	}
}

// TestStrings: metrics, optimizers, layers and models print as what they
// are in a cell.
func TestStrings(t *testing.T) {
	s := newStrategy(t)
	acc := &nn.SparseCategoricalAccuracy{}
	acc.Update(data.NewTensor([]int{4}, []float64{0, 1, 1, 0}), data.NewTensor([]int{4, 2}, []float64{1, 0, 0, 1, 1, 0, 0, 1}))
	mean := nn.NewMean("loss")
	mean.Update(data.NewTensor([]int{2}, []float64{0.5, 1.5}))
	prec := nn.NewPrecision(0.5)
	prec.Update(data.NewTensor([]int{2}, []float64{1, 0}), data.NewTensor([]int{2}, []float64{0.9, 0.8}))
	var model *nn.Sequential
	var sgd *nn.SGD
	var adam *nn.Adam
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
		sgd = nn.NewSGD(0.1, nn.WithMomentum(0.9))
		adam = nn.NewAdam(0.001, nn.WithClipGlobalNorm(1))
	})
	unbuilt := fmt.Sprint(model)
	s.Scope(func() { model.Build([]int{1, 10}) })
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"accuracy", fmt.Sprint(acc), "accuracy: 0.5000 (2 of 4 examples)"},
		{"mean", fmt.Sprint(mean), "loss: 1.0000 (2 values)"},
		{"precision", fmt.Sprint(prec), "precision: 0.5000 (threshold 0.5, 2 examples)"},
		{"auc", fmt.Sprint(nn.NewAUC(200)), "auc: 0.0000 (200 thresholds, 0 examples)"},
		{"sgd", fmt.Sprint(sgd), "SGD(sgd: lr 0.1, momentum 0.9; 0 updates)"},
		{"adam", fmt.Sprint(adam), "Adam(adam: lr 0.001, β₁ 0.9, β₂ 0.999, ε 1e-07, clip norm 1; 0 updates)"},
		{"accumulate", fmt.Sprint(nn.Accumulate(sgd, 4)), "Accumulate(4 steps, SGD(sgd: lr 0.1, momentum 0.9; 0 updates))"},
		{"dense", fmt.Sprint(model.Layers()[0]), "Dense(dense: 16 units, relu, built for width 10)"},
		{"model-unbuilt", unbuilt, "Sequential(sequential: dense, dense_1; not built)"},
		{"model", fmt.Sprint(model), "Sequential(sequential: dense, dense_1; 210 params)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %s\nwant %s", tt.got, tt.want)
			}
		})
	}
}

func ExampleSequential_Summary() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
		model.Build([]int{64, 10})
	})
	fmt.Print(model.Summary())
	// Output:
	// Model: "sequential"
	// ────────────────────────────────────────────────────────────
	// Layer (type)                 Output Shape            Param #
	// ────────────────────────────────────────────────────────────
	// dense (Dense)                (None, 16)                  176
	// dense_1 (Dense)              (None, 2)                    34
	// ────────────────────────────────────────────────────────────
	// Total params: 210
	// Trainable params: 210
	// Non-trainable params: 0
}

func ExampleComputeAverageLoss() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	// 3 examples with losses 1, 2, 6 on 2 replicas: one row is padding.
	losses := data.NewTensor([]int{3}, []float64{1, 2, 6})
	for it := s.DistributeDataset(data.FromTensorSlices(losses).Batch(3)).Iter(); it.Next(); {
		avg := s.Run(func(l *nn.Tensor) *nn.Tensor { return nn.ComputeAverageLoss(l, 0) }, it.Batch())
		for r, v := range avg.Values() {
			fmt.Printf("replica %d: %.4f\n", r, v.Scalar())
		}
		fmt.Printf("sum: %.4f\n", s.Reduce(strategy.Sum, avg).Scalar())
	}
	// Output:
	// replica 0: 1.0000
	// replica 1: 2.0000
	// sum: 3.0000
}

func ExampleNewSGD() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.SGD
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{1}, []float64{1})
		opt = nn.NewSGD(0.1, nn.WithMomentum(0.9))
	})
	// Minimize w²: the gradient is 2w.
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Sum(graph.Square(ctx.Graph().Var(w)))
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	for range 3 {
		s.Run(step)
		fmt.Printf("w = %.4f\n", w.Value()[0])
	}
	// Output:
	// w = 0.8000
	// w = 0.4600
	// w = 0.0620
}

func ExampleNewAdam() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	var opt *nn.Adam
	s.Scope(func() {
		w = strategy.CreateVariable("w", []int{2}, []float64{1, -1})
		opt = nn.NewAdam(0.1)
	})
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		loss := graph.Sum(graph.Square(ctx.Graph().Var(w)))
		opt.ApplyGradients(ctx, ctx.Gradients(loss, []*nn.Variable{w}))
		return loss
	}
	for range 2 {
		s.Run(step)
	}
	fmt.Printf("w = [%.4f %.4f] after %d steps\n", w.Value()[0], w.Value()[1], opt.Iterations())
	// Output:
	// w = [0.8004 -0.8004] after 2 steps
}
