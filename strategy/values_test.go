package strategy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// rowsDataset is 7 rows [i, 10i] with labels i, in global batches of 4: the
// second batch is partial (3 rows).
func rowsDataset() *data.Dataset {
	x := data.Zeros(7, 2)
	y := data.Zeros(7)
	for i := range 7 {
		x.Data[2*i], x.Data[2*i+1] = float64(i), float64(10*i)
		y.Data[i] = float64(i)
	}
	return data.FromTensorSlices(x, y).Batch(4)
}

func TestReduceAndGatherDropPadding(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(graph.Float64))
			defer closeStrategy(t, s)
			type out struct{ X, Total *graph.Node }
			step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) out {
				return out{X: graph.Scale(x, 1), Total: graph.Sum(graph.Mul(y, ctx.Mask()))}
			}
			var gathered []float64
			var sums, means [][]float64
			var totals []float64
			for it := s.DistributeDataset(rowsDataset()).Iter(); it.Next(); {
				res := s.Run(step, it.Batch())
				gathered = append(gathered, s.Gather(res.Field("X"), 0).Data...)
				sums = append(sums, s.ReduceAxis(strategy.Sum, res.Field("X"), 0).Data)
				means = append(means, s.ReduceAxis(strategy.Mean, res.Field("X"), 0).Data)
				totals = append(totals, s.Reduce(strategy.Sum, res.Field("Total")).Scalar())
				if got := len(s.LocalResults(res.Field("X"))); got != n {
					t.Errorf("LocalResults: %d values, want %d", got, n)
				}
			}
			want := []float64{0, 0, 1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60}
			if !slices.Equal(gathered, want) {
				t.Errorf("Gather: %v, want %v", gathered, want)
			}
			checks := []struct {
				name      string
				got, want any
			}{
				{"ReduceAxis(Sum, 0) of rows", sums, [][]float64{{6, 60}, {15, 150}}},
				{"ReduceAxis(Mean, 0) of rows", means, [][]float64{{1.5, 15}, {5, 50}}},
				{"Reduce(Sum) of masked scalars", totals, []float64{6, 15}},
			}
			for _, c := range checks {
				if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
					t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestUndistributed: a global batch passed to Run without
// distributing it is refused on several replicas, since every replica would
// train on all of it; Broadcast gives every replica the same value on
// purpose.
func TestUndistributed(t *testing.T) {
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

// TestReduce: Reduce reduces over the replicas only, whatever the
// shape (TF's axis=None); the reduction over examples is ReduceAxis.
func TestReduce(t *testing.T) {
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

func TestStepResultShapes(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer closeStrategy(t, s)
	x := s.Broadcast(data.NewTensor([]int{2, 2}, []float64{1, 2, 3, 4}))
	tests := []struct {
		name string
		step any
		pick func(strategy.PerReplica) strategy.PerReplica
		want float64 // Reduce(Mean) of the picked part, a scalar
	}{
		{"single", func(x *nn.Tensor) *nn.Tensor { return graph.Sum(x) },
			func(p strategy.PerReplica) strategy.PerReplica { return p }, 10},
		{"two-results", func(x *nn.Tensor) (*nn.Tensor, *nn.Tensor) { return graph.Sum(x), graph.Mean(x) },
			func(p strategy.PerReplica) strategy.PerReplica { return p.Index(1) }, 2.5},
		{"slice", func(x *nn.Tensor) []*nn.Tensor { return []*nn.Tensor{graph.Mean(x), graph.Sum(x)} },
			func(p strategy.PerReplica) strategy.PerReplica { return p.Index(1) }, 10},
		{"map", func(x *nn.Tensor) map[string]*nn.Tensor { return map[string]*nn.Tensor{"sum": graph.Sum(x)} },
			func(p strategy.PerReplica) strategy.PerReplica { return p.Field("sum") }, 10},
		{"per-replica-input", func(ctx *strategy.ReplicaContext, x, r *nn.Tensor) *nn.Tensor { return graph.Sum(r) },
			func(p strategy.PerReplica) strategy.PerReplica { return p }, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []any{x}
			if tt.name == "per-replica-input" {
				args = append(args, strategy.NewPerReplica(data.NewTensor([]int{1}, []float64{0}), data.NewTensor([]int{1}, []float64{1})))
			}
			got := s.Reduce(strategy.Mean, tt.pick(s.Run(tt.step, args...))).Scalar()
			if got != tt.want {
				t.Errorf("Reduce(Mean) = %v, want %v", got, tt.want)
			}
		})
	}
}

// AllReduce inside a step sums over replicas: every replica sees the total.
func TestAllReduceInStep(t *testing.T) {
	for _, n := range []int{1, 3} {
		s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(graph.Float32))
		step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) []*nn.Tensor {
			local := graph.Sum(graph.Mul(y, ctx.Mask()))
			total := ctx.AllReduce(strategy.Sum, local)
			mean := ctx.AllReduce(strategy.Mean, graph.Scale(total, 2))
			return []*nn.Tensor{total, mean}
		}
		for it := s.DistributeDataset(rowsDataset()).Iter(); it.Next(); {
			res := s.Run(step, it.Batch())
			want := float64(it.Batch().Count()) * (float64(it.Batch().Count()) - 1) / 2
			if it.Batch().Count() == 3 {
				want = 4 + 5 + 6
			}
			for r, v := range res.Index(0).Values() {
				if v.Scalar() != want {
					t.Errorf("%d replicas: replica %d: AllReduce(Sum) = %v, want %v", n, r, v.Scalar(), want)
				}
			}
			for r, v := range res.Index(1).Values() {
				if v.Scalar() != 2*want {
					t.Errorf("%d replicas: replica %d: AllReduce(Mean) = %v, want %v", n, r, v.Scalar(), 2*want)
				}
			}
		}
		closeStrategy(t, s)
	}
}

// A step function is traced once per input signature.
func TestTraceCache(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer closeStrategy(t, s)
	calls := 0
	step := func(x *nn.Tensor) *nn.Tensor { calls++; return graph.Sum(x) }
	other := func(x *nn.Tensor) *nn.Tensor { calls++; return graph.Mean(x) }
	for range 3 {
		s.Run(step, s.Broadcast(data.Zeros(4, 2)))
	}
	if calls != 2 || s.Traces() != 1 {
		t.Errorf("3 runs: step called %d times (want 2: once per replica), %d traces (want 1)", calls, s.Traces())
	}
	s.Run(step, s.Broadcast(data.Zeros(6, 2))) // new shape: retrace
	got := s.Reduce(strategy.Sum, s.Run(other, s.Broadcast(data.Zeros(4, 2)))).Scalar()
	if calls != 6 || s.Traces() != 3 || got != 0 {
		t.Errorf("after new shape and new step: %d calls, %d traces, want 6 and 3", calls, s.Traces())
	}
}

// TestRetrace: a step function written inside an outer function is a
// new closure at every call, yet traces once; closures of one literal that
// compute different things (other constants, another model) still trace
// separately; a retrace for new shapes warns once, saying so.
func TestRetrace(t *testing.T) {
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

// TestRetraceOtherModel: closures of one literal over two models of
// the same shape read other variables, so each trains its own model.
func TestRetraceOtherModel(t *testing.T) {
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

// DistributeDatasetsFromFunction with per-replica batches trains exactly like
// DistributeDataset with the matching global batch.
func TestDatasetsFromFunctionMatchesDistribute(t *testing.T) {
	const n, perReplica = 4, 4
	x := data.RandomNormal(41, 103, 6)
	y := data.RandomInts(42, 3, 103)
	train := func(fromFn bool) ([][]float64, []float64) {
		s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(graph.Float64))
		defer closeStrategy(t, s)
		var dist *strategy.DistributedDataset
		if fromFn {
			dist = s.DistributeDatasetsFromFunction(func(ic data.InputContext) *data.Dataset {
				b, err := ic.PerReplicaBatchSize(n * perReplica)
				if err != nil || ic.NumInputPipelines != 1 || ic.InputPipelineID != 0 {
					t.Errorf("input context %+v: %v", ic, err)
				}
				return data.FromTensorSlices(x, y).Batch(b)
			})
		} else {
			dist = s.DistributeDataset(data.FromTensorSlices(x, y).Batch(n * perReplica))
		}
		var model *nn.Sequential
		var opt nn.Optimizer
		s.Scope(func() {
			model = nn.NewSequential(nn.Dense(5, nn.Sigmoid), nn.Dense(3))
			opt = nn.NewAdam(0.01)
		})
		step := strategytest.ClassifierStep(model, opt, 0)
		var losses []float64
		for it := dist.Iter(); it.Next(); {
			losses = append(losses, s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar())
		}
		var w [][]float64
		for _, v := range s.Variables() {
			w = append(w, v.Value())
		}
		return w, losses
	}
	want, wantLoss := train(false)
	got, gotLoss := train(true)
	if len(gotLoss) != 7 || maxRelDiff(gotLoss, wantLoss) > 1e-12 {
		t.Errorf("losses %v, want %v", gotLoss, wantLoss)
	}
	for i := range want {
		if d := maxRelDiff(got[i], want[i]); d > 1e-12 {
			t.Errorf("variable %d differs by %.3g", i, d)
		}
	}
}

func TestDevices(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithDevices("cpu:0", "cpu:0", "CPU:0"))
	defer closeStrategy(t, s)
	if got := s.Devices(); s.NumReplicasInSync() != 3 || got[2] != "CPU:0" {
		t.Errorf("Devices() = %v", got)
	}
	one := strategy.NewOneDevice()
	defer closeStrategy(t, one)
	if one.NumReplicasInSync() != 1 || one.Devices()[0] != "cpu:0" {
		t.Errorf("NewOneDevice: %v", one)
	}
}

func ExampleMirrored_ReduceAxis() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	// 3 examples on 2 replicas: replica 1's second row is padding.
	x := data.NewTensor([]int{3, 1}, []float64{1, 2, 6})
	dist := s.DistributeDataset(data.FromTensorSlices(x).Batch(3))
	for it := dist.Iter(); it.Next(); {
		perExample := s.Run(func(x *nn.Tensor) *nn.Tensor { return graph.Square(x) }, it.Batch())
		fmt.Printf("sum %.1f, mean %.2f, gathered %v\n",
			s.ReduceAxis(strategy.Sum, perExample, 0).Scalar(),
			s.ReduceAxis(strategy.Mean, perExample, 0).Scalar(),
			s.Gather(perExample, 0).Data)
	}
	// Output:
	// sum 41.0, mean 13.67, gathered [1 4 36]
}

func ExampleMirrored_Reduce() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	// Each replica returns a loss and its column sums, a [2] vector that is
	// not per-example, though each replica's batch has 2 rows.
	x := data.NewTensor([]int{4, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	step := func(x *nn.Tensor) (*nn.Tensor, *nn.Tensor) { return graph.Mean(x), graph.SumAxis(x, 0) }
	it := s.DistributeDataset(data.FromTensorSlices(x).Batch(4)).Iter()
	defer it.Close()
	it.Next()
	out := s.Run(step, it.Batch())
	fmt.Printf("mean loss %.2f, sum of vectors %v\n", s.Reduce(strategy.Mean, out.Index(0)).Scalar(), s.Reduce(strategy.Sum, out.Index(1)).Data)
	// Output:
	// mean loss 4.50, sum of vectors [16 20]
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

func ExampleMirrored_DistributeDataset() {
	s := strategy.NewMirrored(strategy.WithReplicas(3))
	defer s.Close()
	x := data.NewTensor([]int{5, 1}, []float64{1, 2, 3, 4, 5})
	for it := s.DistributeDataset(data.FromTensorSlices(x).Batch(4)).Iter(); it.Next(); {
		b := it.Batch()
		for r := range b.NumReplicas() {
			fmt.Printf("replica %d: rows %v mask %v\n", r, b.Replica(r)[0].Data, b.Mask(r).Data)
		}
		fmt.Println("examples:", b.Count())
	}
	// Output:
	// replica 0: rows [1 2] mask [1 1]
	// replica 1: rows [3 4] mask [1 1]
	// replica 2: rows [0 0] mask [0 0]
	// examples: 4
	// replica 0: rows [5 0] mask [1 0]
	// replica 1: rows [0 0] mask [0 0]
	// replica 2: rows [0 0] mask [0 0]
	// examples: 1
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
