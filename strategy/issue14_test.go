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
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// TestIssue14Undistributed: a global batch passed to Run without
// distributing it is refused on several replicas, since every replica would
// train on all of it; Broadcast gives every replica the same value on
// purpose.
func TestIssue14Undistributed(t *testing.T) {
	x := data.NewTensor([]int{4, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	sum := func(x *nn.Tensor) *nn.Tensor { return graph.Sum(x) }
	tests := []struct {
		name     string
		replicas int
		arg      func(s *strategy.Mirrored) any
		want     []float64 // each replica's sum; nil: an error
		wantErr  string
	}{
		{"plain-batch", 2, func(*strategy.Mirrored) any { return x }, nil,
			"strategy: Run: argument 0: a data.Tensor of shape [4 2] is not distributed, so each of the 2 replicas would run on all 4 rows; " +
				"iterate s.DistributeDataset(ds) and pass it.Batch(), or pass s.Broadcast(t) to give every replica the same value on purpose"},
		{"broadcast", 2, func(s *strategy.Mirrored) any { return s.Broadcast(x) }, []float64{36, 36}, ""},
		{"distributed", 2, func(s *strategy.Mirrored) any {
			it := s.DistributeDataset(data.FromTensorSlices(x).Batch(4)).Iter()
			t.Cleanup(it.Close)
			it.Next()
			return it.Batch()
		}, []float64{10, 26}, ""},
		{"one-replica", 1, func(*strategy.Mirrored) any { return x }, []float64{36}, ""},
		{"scalar", 2, func(*strategy.Mirrored) any { return data.NewTensor(nil, []float64{3}) }, []float64{3, 3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy.NewMirrored(strategy.WithReplicas(tt.replicas), strategy.WithDType(graph.Float64))
			defer closeStrategy(t, s)
			out, err := s.TryRun(sum, tt.arg(s))
			if tt.want == nil {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("TryRun error:\n got %v\nwant %s", err, tt.wantErr)
				}
				if !errors.Is(err, strategy.ErrUsage) {
					t.Errorf("error %v does not wrap ErrUsage", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryRun: %v", err)
			}
			var got []float64
			for _, v := range out.Values() {
				got = append(got, v.Scalar())
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("replica sums %v, want %v", got, tt.want)
			}
		})
	}
}

func ExampleMirrored_Broadcast() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	table := data.NewTensor([]int{3}, []float64{1, 2, 3})
	out := s.Run(func(ctx *strategy.ReplicaContext, t *nn.Tensor) *nn.Tensor { return graph.Sum(t) }, s.Broadcast(table))
	for r, v := range out.Values() {
		fmt.Printf("replica %d: %.1f\n", r, v.Scalar())
	}
	// Output:
	// replica 0: 6.0
	// replica 1: 6.0
}

// TestIssue14NonFiniteScan: the scan behind WithCheckNumerics finds the
// first NaN or Inf wherever it is (either half of a word, an unaligned
// start, the tail) and nothing in finite extremes.
func TestIssue14NonFiniteScan(t *testing.T) {
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

// TestIssue14NonFiniteOutput: a step output (a loss) that is NaN or Inf
// fails the step in phase "check", naming the output and the replica.
func TestIssue14NonFiniteOutput(t *testing.T) {
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

// TestIssue14Reduce: Reduce reduces over the replicas only, whatever the
// shape (TF's axis=None); the reduction over examples is ReduceAxis.
func TestIssue14Reduce(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	// 3 examples of width 2 on 2 replicas of 2 rows: replica 1's second row
	// is padding.
	x := data.NewTensor([]int{3, 2}, []float64{1, 2, 3, 4, 5, 6})
	it := s.DistributeDataset(data.FromTensorSlices(x).Batch(3)).Iter()
	defer it.Close()
	it.Next()
	type out struct{ Rows, ColSums *graph.Node }
	res := s.Run(func(x *nn.Tensor) out { return out{Rows: graph.Scale(x, 1), ColSums: graph.SumAxis(x, 0)} }, it.Batch())
	tests := []struct {
		name  string
		got   data.Tensor
		shape []int
		want  []float64
	}{
		{"vector-as-long-as-the-batch", s.Reduce(strategy.Sum, res.Field("ColSums")), []int{2}, []float64{9, 12}},
		{"vector-mean-over-replicas", s.Reduce(strategy.Mean, res.Field("ColSums")), []int{2}, []float64{4.5, 6}},
		{"rows-elementwise", s.Reduce(strategy.Sum, res.Field("Rows")), []int{2, 2}, []float64{6, 8, 3, 4}},
		{"axis-0-drops-padding", s.ReduceAxis(strategy.Sum, res.Field("Rows"), 0), []int{2}, []float64{9, 12}},
		{"axis-0-mean-over-examples", s.ReduceAxis(strategy.Mean, res.Field("Rows"), 0), []int{2}, []float64{3, 4}},
		{"axis-1", s.ReduceAxis(strategy.Sum, res.Field("Rows"), 1), []int{2}, []float64{3 + 11, 7}},
		{"axis-minus-1-mean", s.ReduceAxis(strategy.Mean, res.Field("Rows"), -1), []int{2}, []float64{3.5, 1.75}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got.Shape, tt.shape) || !slices.Equal(tt.got.Data, tt.want) {
				t.Errorf("got shape %v values %v, want %v %v", tt.got.Shape, tt.got.Data, tt.shape, tt.want)
			}
		})
	}
	if v := panics(func() { s.ReduceAxis(strategy.Sum, res.Field("ColSums"), 1) }); v == nil || !errors.Is(v.(error), strategy.ErrUsage) {
		t.Errorf("ReduceAxis on a missing axis: panic %v, want an error wrapping ErrUsage", v)
	}
}

// TestIssue14Messages: errors name what happened: the example of the global
// batch whose label is out of range, and an earlier Scope that panicked
// before it assigned what the step uses.
func TestIssue14Messages(t *testing.T) {
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

// TestIssue14Retrace: a step function written inside an outer function is a
// new closure at every call, yet traces once; closures of one literal that
// compute different things (other constants, another model) still trace
// separately; a retrace for new shapes warns once, saying so.
func TestIssue14Retrace(t *testing.T) {
	x := func(rows int) data.Tensor { return data.NewTensor([]int{rows, 2}, slices.Repeat([]float64{1}, 2*rows)) }
	type run struct {
		fn   func(s *strategy.Mirrored, k int) float64 // the k-th call
		want func(k int) float64
	}
	tests := []struct {
		name   string
		run    run
		traces int
		warn   string // a fragment of the one warning, or "" for none
	}{
		{"nested-literal", run{func(s *strategy.Mirrored, k int) float64 {
			scale := 2.0 // captured: the closure is allocated at each call
			step := func(x *nn.Tensor) *nn.Tensor { return graph.Scale(graph.Sum(x), scale) }
			return s.Reduce(strategy.Sum, s.Run(step, s.Broadcast(x(4)))).Scalar()
		}, func(int) float64 { return 32 }}, 1, ""},
		{"other-constants", run{func(s *strategy.Mirrored, k int) float64 {
			scale := float64(k)
			step := func(x *nn.Tensor) *nn.Tensor { return graph.Scale(graph.Sum(x), scale) }
			return s.Reduce(strategy.Sum, s.Run(step, s.Broadcast(x(4)))).Scalar()
		}, func(k int) float64 { return 16 * float64(k) }}, 8, "new step functions with the same inputs traced into different graphs"},
		{"new-shapes", run{func(s *strategy.Mirrored, k int) float64 {
			return s.Reduce(strategy.Sum, s.Run(sumStep, s.Broadcast(x(2+k%3)))).Scalar()
		}, func(k int) float64 { return 2 * float64(2*(2+k%3)) }}, 3, "its input shapes changed from [2 2] to [3 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warn strings.Builder
			s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64), strategy.WithWarnings(&warn))
			defer closeStrategy(t, s)
			for k := range 8 {
				if got, want := tt.run.fn(s, k), tt.run.want(k); got != want {
					t.Fatalf("call %d: %v, want %v", k, got, want)
				}
			}
			if s.Traces() != tt.traces {
				t.Errorf("%d traces, want %d", s.Traces(), tt.traces)
			}
			n := strings.Count(warn.String(), "strategy: warning:")
			if tt.warn == "" && n != 0 || tt.warn != "" && (n != 1 || !strings.Contains(warn.String(), tt.warn)) {
				t.Errorf("warnings:\n%s\nwant %d containing %q", warn.String(), min(1, len(tt.warn)), tt.warn)
			}
		})
	}
}

func sumStep(x *nn.Tensor) *nn.Tensor { return graph.Sum(x) }

// TestIssue14RetraceOtherModel: closures of one literal over two models of
// the same shape read other variables, so each trains its own model.
func TestIssue14RetraceOtherModel(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	var a, b *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		a, b = nn.NewSequential(nn.Dense(1)), nn.NewSequential(nn.Dense(1))
		a.Build([]int{2, 3})
		b.Build([]int{2, 3})
		opt = nn.NewSGD(0.1)
	})
	stepFor := func(m *nn.Sequential) func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
			loss := graph.Sum(m.Call(ctx, x, true))
			opt.ApplyGradients(ctx, ctx.Gradients(loss, m.TrainableVariables()))
			return loss
		}
	}
	in := s.Broadcast(data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}))
	s.Run(stepFor(a), in)
	before := slices.Clone(b.Variables()[0].Value())
	for range 3 {
		s.Run(stepFor(a), in)
	}
	if s.Traces() != 1 {
		t.Errorf("%d traces for one model's step, want 1", s.Traces())
	}
	s.Run(stepFor(b), in)
	if s.Traces() != 2 || slices.Equal(b.Variables()[0].Value(), before) {
		t.Errorf("the second model's step: %d traces (want 2), its weights changed: %v", s.Traces(), !slices.Equal(b.Variables()[0].Value(), before))
	}
}

func ExampleDistributedDataset_IterAt() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	x := data.NewTensor([]int{6, 1}, []float64{0, 1, 2, 3, 4, 5})
	dist := s.DistributeDataset(data.FromTensorSlices(x).Shuffle(6, 1).Batch(2))
	it := dist.Iter()
	it.Next()
	st := it.State() // what nn.InputPosition keeps in a checkpoint
	it.Close()
	resumed, err := dist.IterAt(st)
	fmt.Println(st.Pass, st.Input.Position, err)
	for resumed.Next() {
		fmt.Println(resumed.Batch().Replica(0)[0].Data, resumed.Batch().Replica(1)[0].Data)
	}
	// Output:
	// 0 1 <nil>
	// [0] [4]
	// [2] [1]
}
