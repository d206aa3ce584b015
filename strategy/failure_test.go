package strategy_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// panics runs fn and returns what it panicked with, or nil.
func panics(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// fixture is a small model, optimizer and step on a strategy.
type fixture struct {
	s       *strategy.Mirrored
	model   *nn.Sequential
	opt     nn.Optimizer
	step    func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
	x, y    data.Tensor
	batches *strategy.DistributedDataset
}

func newFixture(t *testing.T, replicas, rows, width int) *fixture {
	t.Helper()
	f := &fixture{s: strategy.NewMirrored(strategy.WithReplicas(replicas), strategy.WithDType(graph.Float64))}
	t.Cleanup(func() { closeStrategy(t, f.s) })
	f.x = data.RandomNormal(31, rows, width)
	f.y = data.RandomInts(32, 2, rows)
	f.batches = f.s.DistributeDataset(data.FromTensorSlices(f.x, f.y).Batch(rows))
	f.s.Scope(func() {
		f.model = nn.NewSequential(nn.Dense(4, nn.ReLU), nn.Dense(2))
		f.opt = nn.NewSGD(0.1)
	})
	f.step = strategytest.ClassifierStep(f.model, f.opt, 0)
	return f
}

// batch returns the first (only) global batch.
func (f *fixture) batch(t *testing.T) *strategy.PerReplicaBatch {
	t.Helper()
	it := f.batches.Iter()
	t.Cleanup(it.Close)
	if !it.Next() {
		t.Fatalf("no batch: %v", it.Err())
	}
	return it.Batch()
}

func (f *fixture) weights() [][]float64 {
	var w [][]float64
	for _, v := range f.s.Variables() {
		w = append(w, v.Value())
	}
	return w
}

func sameWeights(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(x, y) })
}

func TestReplicaFailureAppliesNothing(t *testing.T) {
	tests := []struct {
		name string
		// fail makes replica 1 fail in the step run by Run and returns the
		// step function to use and an undo.
		fail    func(f *fixture) (step any, undo func())
		wantErr string
	}{{
		name: "panic-while-tracing",
		fail: func(f *fixture) (any, func()) {
			step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
				if ctx.ReplicaID() == 1 {
					panic(errors.New("boom"))
				}
				return f.step(ctx, x, y)
			}
			return step, func() {}
		},
		wantErr: "strategy: replica 1: boom",
	}, {
		name: "error-while-running",
		fail: func(f *fixture) (any, func()) {
			return f.step, strategy.SetTestHookRun(func(r int) error {
				if r == 1 {
					return errors.New("device lost")
				}
				return nil
			})
		},
		wantErr: "strategy: replica 1: device lost",
	}, {
		name: "panic-while-running",
		fail: func(f *fixture) (any, func()) {
			return f.step, strategy.SetTestHookRun(func(r int) error {
				if r == 1 {
					panic("kernel fault")
				}
				return nil
			})
		},
		wantErr: "strategy: replica 1: panic: kernel fault",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 3, 9, 3)
			b := f.batch(t)
			f.s.Run(f.step, b) // trace and one good step
			before := f.weights()
			step, undo := tt.fail(f)
			_, err := f.s.TryRun(step, b)
			undo()
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("TryRun error %q, want %q", err, tt.wantErr)
			}
			var re *strategy.ReplicaError
			if !errors.As(err, &re) || re.Replica != 1 || !errors.Is(err, strategy.ErrReplica) {
				t.Errorf("error %#v: want a *ReplicaError for replica 1", err)
			}
			if !sameWeights(f.weights(), before) {
				t.Error("a failed step changed the weights")
			}
			if v := panics(func() { f.s.Run(step, b) }); v == nil && tt.name == "panic-while-tracing" {
				t.Error("Run did not panic with the failing step")
			}
			f.s.Run(f.step, b)
			if sameWeights(f.weights(), before) {
				t.Error("Run after the failure did not train")
			}
		})
	}
}

// TestNonFiniteScan: the scan behind WithCheckNumerics finds the
// first NaN or Inf wherever it is (either half of a word, an unaligned
// start, the tail) and nothing in finite extremes.
func TestNonFiniteScan(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		vals []float64
		at   int // where the bad value goes, or -1
		bad  float64
	}{
		{"empty", nil, -1, 0},
		{"finite-extremes", []float64{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0, math.Copysign(0, -1), 1}, -1, 0},
		{"nan-first", make([]float64, 17), 0, nan},
		{"nan-odd-lane", make([]float64, 17), 5, nan},
		{"inf-in-unrolled-part", make([]float64, 40), 22, inf},
		{"minus-inf-in-tail", make([]float64, 19), 18, -inf},
		{"one-value", make([]float64, 1), 0, inf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := slices.Clone(tt.vals)
			if tt.at >= 0 {
				vals[tt.at] = tt.bad
			}
			f64 := slices.Clone(vals)
			if got := strategy.NonFinite64(f64); got != tt.at {
				t.Errorf("float64 %v: got %d, want %d", f64, got, tt.at)
			}
			// From an aligned and from an unaligned start (one float32 in).
			buf := make([]float32, len(vals)+1)
			for off := range 2 {
				x := buf[off : off+len(vals)]
				for i, v := range vals {
					x[i] = float32(v)
				}
				if got := strategy.NonFinite32(x); got != tt.at {
					t.Errorf("float32 from element %d %v: got %d, want %d", off, x, got, tt.at)
				}
			}
		})
	}
}

// TestNonFiniteOutput: a step output (a loss) that is NaN or Inf
// fails the step in phase "check", naming the output and the replica.
func TestNonFiniteOutput(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	logOf := func(x *nn.Tensor) map[string]*nn.Tensor {
		return map[string]*nn.Tensor{"loss": graph.Log(graph.Sum(x))}
	}
	pos, neg := data.NewTensor([]int{2}, []float64{1, 2}), data.NewTensor([]int{2}, []float64{-1, -2})
	_, err := s.TryRun(logOf, strategy.NewPerReplica(pos, neg))
	want := `strategy: replica 1: step output "loss" holds NaN at element 0`
	var re *strategy.ReplicaError
	if err == nil || err.Error() != want || !errors.As(err, &re) || re.Phase != "check" || !errors.Is(err, strategy.ErrNonFinite) {
		t.Fatalf("TryRun error %v (%#v), want %s in phase check, wrapping ErrNonFinite", err, re, want)
	}
	if _, err := s.TryRun(logOf, strategy.NewPerReplica(pos, pos)); err != nil {
		t.Errorf("finite step: %v", err)
	}
}

// A label out of range on one replica's shard fails that replica's program,
// and the error names the replica and the graph scope.
func TestRunErrorNamesReplicaAndScope(t *testing.T) {
	f := newFixture(t, 2, 4, 3)
	y := data.NewTensor([]int{4}, []float64{0, 1, 1, 7})
	dist := f.s.DistributeDataset(data.FromTensorSlices(f.x, y).Batch(4))
	it := dist.Iter()
	defer it.Close()
	it.Next()
	f.s.Run(f.step, f.batch(t)) // build the model
	before := f.weights()
	_, err := f.s.TryRun(f.step, it.Batch())
	if err == nil || !strings.HasPrefix(err.Error(), "strategy: replica 1: ") || !strings.Contains(err.Error(), "sparse_categorical_crossentropy") {
		t.Fatalf("TryRun error %q: want replica 1 and the loss's scope", err)
	}
	if !sameWeights(f.weights(), before) {
		t.Error("a failed step changed the weights")
	}
}

// TestErrorMessages: errors name what happened: the example of the global
// batch whose label is out of range, and an earlier Scope that panicked
// before it assigned what the step uses.
func TestErrorMessages(t *testing.T) {
	t.Run("label-names-global-example", func(t *testing.T) {
		f := newFixture(t, 2, 64, 3)
		f.y.Data[40] = 5 // row 8 of replica 1's 32 rows
		_, err := f.s.TryRun(f.step, f.batch(t))
		want := "example 40 of the global batch (row 8 of the replica's shard): want a label in [0,2), got 5"
		var le *graph.LabelError
		if err == nil || !strings.HasPrefix(err.Error(), "strategy: replica 1: sparse_categorical_crossentropy: node ") ||
			!strings.HasSuffix(err.Error(), want) || !errors.As(err, &le) {
			t.Errorf("TryRun error\n got %v\nwant strategy: replica 1: sparse_categorical_crossentropy: node ...: %s, wrapping a graph.LabelError", err, want)
		}
	})
	t.Run("nil-after-scope-panic", func(t *testing.T) {
		s := strategy.NewMirrored(strategy.WithReplicas(2))
		defer closeStrategy(t, s)
		var model *nn.Sequential
		var opt nn.Optimizer
		panics(func() {
			s.Scope(func() {
				model = nn.NewSequential(nn.Dense(2))
				panic("typo in the cell")
				// opt = nn.NewSGD(0.1) never runs
			})
		})
		step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
			loss := graph.Sum(model.Call(ctx, x, true))
			opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
			return loss
		}
		x := s.Broadcast(data.Zeros(4, 3))
		hint := "an earlier s.Scope(func() { ... }) panicked before it finished, so a model, layer or optimizer it was to assign may still be nil: run that cell again"
		_, err := s.TryRun(step, x)
		if err == nil || !strings.HasSuffix(err.Error(), hint) {
			t.Errorf("TryRun error\n got %v\nwant ...nil pointer dereference; %s", err, hint)
		}
		s.Scope(func() { opt = nn.NewSGD(0.1) })
		if _, err := s.TryRun(step, x); err != nil {
			t.Errorf("after the scope ran again: %v", err)
		}
	})
}

func TestVariableOutsideScope(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer closeStrategy(t, s)
	other := strategy.NewMirrored(strategy.WithReplicas(1))
	defer closeStrategy(t, other)
	x := s.Broadcast(data.RandomNormal(1, 4, 3))
	tests := []struct {
		name  string
		build func() *nn.Sequential
		want  string
	}{{
		name: "unscoped",
		build: func() *nn.Sequential {
			m := nn.NewSequential(nn.Dense(2, nn.Named("outside")))
			m.Build([]int{4, 3})
			return m
		},
		want: `strategy: variable "outside/kernel" was created outside strategy.Scope; create the model inside s.Scope(func() { ... })`,
	}, {
		name: "other-strategy",
		build: func() (m *nn.Sequential) {
			other.Scope(func() {
				m = nn.NewSequential(nn.Dense(2, nn.Named("theirs")))
				m.Build([]int{4, 3})
			})
			return m
		},
		want: `strategy: variable "theirs/kernel" belongs to another strategy (MirroredStrategy(1 replica: cpu:0; float32)); build the model inside this strategy's Scope`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.build()
			forward := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return m.Call(ctx, x, false) }
			_, err := s.TryRun(forward, x)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("TryRun error:\n got %v\nwant %s", err, tt.want)
			}
			if !errors.Is(err, strategy.ErrScope) {
				t.Errorf("error does not wrap ErrScope")
			}
			grads := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
				loss := graph.Sum(x)
				ctx.Gradients(loss, m.TrainableVariables())
				return loss
			}
			if _, err := s.TryRun(grads, x); err == nil || err.Error() != tt.want {
				t.Errorf("Gradients error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestShapeMismatchNamesLayer(t *testing.T) {
	f := newFixture(t, 2, 8, 10)
	f.s.Run(f.step, f.batch(t))
	wide := data.RandomNormal(5, 8, 12)
	_, err := f.s.TryRun(f.step, f.s.Broadcast(wide), f.s.Broadcast(f.y))
	want := "strategy: replica 0: nn: dense: want input width 10, got 12"
	if err == nil || err.Error() != want {
		t.Fatalf("TryRun error %q, want %q", err, want)
	}
	if !errors.Is(err, nn.ErrShape) {
		t.Error("error does not wrap nn.ErrShape")
	}
}

// A global batch smaller than the replica count is padded: the step runs and
// trains exactly like one replica.
func TestGlobalBatchSmallerThanReplicas(t *testing.T) {
	run := func(n int) ([][]float64, float64) {
		f := newFixture(t, n, 3, 5)
		loss := f.s.Reduce(strategy.Sum, f.s.Run(f.step, f.batch(t))).Scalar()
		return f.weights(), loss
	}
	want, wantLoss := run(1)
	got, gotLoss := run(4)
	if d := maxRelDiff([]float64{gotLoss}, []float64{wantLoss}); d > 1e-12 {
		t.Errorf("4 replicas: loss %.15g, 1 replica %.15g", gotLoss, wantLoss)
	}
	for i := range want {
		if d := maxRelDiff(got[i], want[i]); d > 1e-12 {
			t.Errorf("variable %d differs by %.3g", i, d)
		}
	}
}

func TestInterruptStopsRunBeforeAnyReplica(t *testing.T) {
	f := newFixture(t, 2, 6, 3)
	b := f.batch(t)
	f.s.Run(f.step, b)
	before := f.weights()
	safepoint.Raise()
	v := panics(func() { f.s.Run(f.step, b) })
	safepoint.Clear()
	if v != safepoint.ErrInterrupted {
		t.Fatalf("Run panicked with %v, want safepoint.ErrInterrupted", v)
	}
	if !sameWeights(f.weights(), before) {
		t.Error("an interrupted step changed the weights")
	}
	f.s.Run(f.step, b)
	if sameWeights(f.weights(), before) {
		t.Error("Run after the interrupt did not train")
	}
}

func TestClosed(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	step := func(x *nn.Tensor) *nn.Tensor { return x }
	for name, fn := range map[string]func(){
		"Run":            func() { s.Run(step, data.Zeros(2)) },
		"Scope":          func() { s.Scope(func() {}) },
		"CreateVariable": func() { s.CreateVariable("v", []int{1}, nil) },
	} {
		if v := panics(fn); v != strategy.ErrClosed {
			t.Errorf("%s after Close panicked with %v, want ErrClosed", name, v)
		}
	}
	if v := panics(func() {
		if err := s.Close(); err != strategy.ErrClosed {
			t.Errorf("second Close: %v, want ErrClosed", err)
		}
	}); v != nil && v != strategy.ErrClosed {
		t.Errorf("second Close panicked with %v", v)
	}
}

func TestMisuse(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer closeStrategy(t, s)
	x := s.Broadcast(data.Zeros(4, 3))
	tests := []struct {
		name string
		fn   any
		args []any
		want string
	}{
		{"not-a-func", 42, []any{x}, "strategy: Run: want a step function, got int"},
		{"too-few-params", func(x *nn.Tensor) *nn.Tensor { return x }, []any{x, x},
			"strategy: Run: step function func(*graph.Node) *graph.Node takes 1 tensors, got 2 tensor arguments"},
		{"bad-arg", func(x *nn.Tensor) *nn.Tensor { return x }, []any{"x"},
			"strategy: Run: argument 0: want a batch from DistributedIterator.Batch, a PerReplica or a data.Tensor, got string"},
		{"undistributed", func(x *nn.Tensor) *nn.Tensor { return x }, []any{data.Zeros(64, 3)},
			"strategy: Run: argument 0: a data.Tensor of shape [64 3] is not distributed, so each of the 2 replicas would run on all 64 rows; " +
				"iterate s.DistributeDataset(ds) and pass it.Batch(), or pass s.Broadcast(t) to give every replica the same value on purpose"},
		{"bad-result", func(x *nn.Tensor) int { return 1 }, []any{x},
			"strategy: Run: step function func(*graph.Node) int returned int; want a *graph.Node (nn.Tensor), a slice, a struct or a map[string] of them"},
		{"nil-result", func(x *nn.Tensor) *nn.Tensor { return nil }, []any{x},
			"strategy: Run: step function returned a nil tensor (result)"},
		{"per-replica-count", func(x *nn.Tensor) *nn.Tensor { return x }, []any{strategy.NewPerReplica(data.Zeros(4, 3))},
			"strategy: Run: argument 0: want 2 replica values, got 1"},
		{"sum-over-batch", func(x, y *nn.Tensor) *nn.Tensor {
			return nn.SparseCategoricalCrossentropy{FromLogits: true}.Call(y, x)
		}, []any{x, s.Broadcast(data.Zeros(4))},
			"strategy: replica 0: nn: sparse_categorical_crossentropy: sum_over_batch_size reduction inside strategy.Run divides by the per-replica batch; use ReductionNone and ComputeAverageLoss"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.TryRun(tt.fn, tt.args...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("TryRun error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	for name, fn := range map[string]func(){
		"unbatched": func() { s.DistributeDataset(data.FromTensorSlices(data.Zeros(4))) },
		"gpu":       func() { strategy.WithDevices("gpu:99") },
		"device":    func() { strategy.WithDevices("tpu:0") },
		"replicas":  func() { strategy.WithReplicas(0) },
		"mix-scope": func() {
			other := strategy.NewOneDevice()
			defer other.Close()
			s.Scope(func() { other.Scope(func() {}) })
		},
	} {
		v := panics(fn)
		err, ok := v.(error)
		if !ok || !errors.Is(err, strategy.ErrUsage) {
			t.Errorf("%s: panicked with %v, want an error wrapping ErrUsage", name, v)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func ExampleMirrored_TryRun() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	x := data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	_, err := s.TryRun(func(x *nn.Tensor) *nn.Tensor { return nil }, s.Broadcast(x))
	fmt.Println(err)
	// Output:
	// strategy: Run: step function returned a nil tensor (result)
}

func TestRunInsideStepIsAnError(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(1))
	defer closeStrategy(t, s)
	var inner error
	step := func(x *nn.Tensor) *nn.Tensor {
		_, inner = s.TryRun(func(x *nn.Tensor) *nn.Tensor { return x }, data.Zeros(1))
		return x
	}
	s.Run(step, data.Zeros(2))
	want := "strategy: Run: called from a step function while it is traced; call Run from the training loop"
	if inner == nil || inner.Error() != want {
		t.Errorf("inner Run: %v, want %s", inner, want)
	}
}
