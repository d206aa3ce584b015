package nn_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// residualMLP is a model of one's own: x + d2(d1(x)).
type residualMLP struct {
	d1, d2 *nn.DenseLayer
}

func newResidualMLP(width, hidden int) *residualMLP {
	return &residualMLP{
		d1: nn.Dense(hidden, nn.ReLU, nn.Named("block_0/up")),
		d2: nn.Dense(width, nn.Named("block_0/down")),
	}
}

func (m *residualMLP) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	return graph.Add(x, m.d2.Call(ctx, m.d1.Call(ctx, x, training), training))
}

func (m *residualMLP) Variables() []*nn.Variable { return nn.VariablesOf(m.d1, m.d2) }

func (m *residualMLP) SetTrainable(t bool) { m.d1.SetTrainable(t); m.d2.SetTrainable(t) }

// bareModel has only the two required methods.
type bareModel struct{ d *nn.DenseLayer }

func (m *bareModel) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	return m.d.Call(ctx, x, training)
}

func (m *bareModel) Variables() []*nn.Variable { return nn.VariablesOf(m.d) }

// trainResidual trains a residualMLP on 29 rows in global batches of 8 (the
// last has 5) for two epochs with n replicas and returns every variable of
// the strategy by name: weights and Adam's slots.
func trainResidual(t *testing.T, n int, dt graph.DType) map[string][]float64 {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(3))
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	x, y := data.RandomNormal(41, 29, 4), data.RandomNormal(42, 29, 4)
	var model *residualMLP
	var opt nn.Optimizer
	s.Scope(func() {
		model = newResidualMLP(4, 8)
		opt = nn.NewAdam(0.01)
	})
	step := strategytest.LossStep(model, nn.MeanSquaredError{Reduction: nn.ReductionNone}, opt, 0)
	return strategytest.Train(t, s, data.FromTensorSlices(x, y).Batch(8).Repeat(2), step, 8)
}

// TestModelReplicasMatchOneReplica: a model of one's own trains on 2 and 3
// replicas exactly as on one.
func TestModelReplicasMatchOneReplica(t *testing.T) {
	for _, c := range []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float64, 1e-12}, {graph.Float32, 1e-5}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			want := trainResidual(t, 1, c.dt)
			checkVariables(t, want, "block_0/up/kernel", "block_0/down/bias", "adam/iterations")
			if it := want["adam/iterations"]; it[1] != 8 {
				t.Fatalf("adam/iterations = %v, want [0 8]", it)
			}
			for _, n := range []int{2, 3} {
				strategytest.CheckSame(t, fmt.Sprintf("%d replicas", n), trainResidual(t, n, c.dt), want, c.tol)
			}
		})
	}
}

// sharedHead uses one dense layer twice and lists it twice.
type sharedHead struct{ d *nn.DenseLayer }

func (m *sharedHead) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	return m.d.Call(ctx, m.d.Call(ctx, x, training), training)
}

func (m *sharedHead) Variables() []*nn.Variable {
	return nn.VariablesOf(m.d, m.d, nn.VariableList(m.d.Variables()))
}

// TestModelFunctions: TrainableVariables, SetTrainable, Summary, Predict,
// Evaluate and checkpoints take a model of one's own as they take a
// Sequential.
func TestModelFunctions(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	var m *residualMLP
	var shared *sharedHead
	s.Scope(func() {
		m = newResidualMLP(3, 5)
		shared = &sharedHead{d: nn.Dense(3, nn.Named("tied"))}
	})
	if got := nn.Summary(m); !strings.Contains(got, "no variables yet") {
		t.Errorf("summary before the first call:\n%s", got)
	}
	x := data.RandomNormal(1, 7, 3)
	err, _ := panics(func() { nn.Predict(m, x) }).(error)
	if !errors.Is(err, nn.ErrUsage) || !strings.Contains(err.Error(), "nn: residualMLP: Predict: the model has no variables yet") {
		t.Errorf("Predict of a model not built, outside any scope: %v", err)
	}
	// Not built yet: inside the scope, Predict builds it there; then its
	// variables tell the strategy.
	var out data.Tensor
	s.Scope(func() { out = nn.Predict(m, x) })
	if fmt.Sprint(out.Shape) != "[7 3]" {
		t.Fatalf("Predict shape %v, want [7 3]", out.Shape)
	}
	// The reference: x + relu(x·W1 + b1)·W2 + b2, row by row.
	w1, b1 := m.d1.Kernel().Value(), m.d1.Bias().Value()
	w2, b2 := m.d2.Kernel().Value(), m.d2.Bias().Value()
	for r := range 7 {
		h := make([]float64, 5)
		for j := range 5 {
			h[j] = b1[j]
			for i := range 3 {
				h[j] += x.Data[r*3+i] * w1[i*5+j]
			}
			h[j] = max(h[j], 0)
		}
		for k := range 3 {
			want := x.Data[r*3+k] + b2[k]
			for j := range 5 {
				want += h[j] * w2[j*3+k]
			}
			if got := out.Data[r*3+k]; math.Abs(got-want) > 1e-12 {
				t.Errorf("Predict[%d,%d] = %v, want %v", r, k, got, want)
			}
		}
	}
	if again := nn.Predict(m, x); !slices.Equal(again.Data, out.Data) {
		t.Error("a second Predict differs")
	}
	if got := s.Traces(); got != 1 {
		t.Errorf("%d traces after two Predicts, want 1 (the second reuses the first)", got)
	}
	shifted := out.Clone()
	for i := range shifted.Data {
		shifted.Data[i] += 0.5
	}
	res := nn.Evaluate(m, data.FromTensorSlices(x, shifted).Batch(4), squaredError{nn.NewMean("mse")})
	if math.Abs(res["mse"]-0.25) > 1e-12 {
		t.Errorf("Evaluate against its predictions + 0.5: mse %v, want 0.25", res["mse"])
	}

	names := func(vs []*nn.Variable) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Name())
		}
		return strings.Join(out, " ")
	}
	all := "block_0/up/kernel block_0/up/bias block_0/down/kernel block_0/down/bias"
	if got := names(nn.TrainableVariables(m)); got != all {
		t.Errorf("TrainableVariables = %s, want %s", got, all)
	}
	nn.SetTrainable(m, false)
	if got := nn.TrainableVariables(m); len(got) != 0 {
		t.Errorf("frozen: trainable %s", names(got))
	}
	sum := nn.Summary(m)
	for _, want := range []string{`Model: "residualMLP"`, "block_0/up/kernel (non-trainable)", "[3 5]", "Total params: 38", "Trainable params: 0"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	nn.SetTrainable(m, true)
	if got := names(nn.TrainableVariables(m)); got != all {
		t.Errorf("unfrozen: TrainableVariables = %s, want %s", got, all)
	}
	err, _ = panics(func() { nn.SetTrainable(&bareModel{}, false) }).(error)
	if !errors.Is(err, nn.ErrUsage) || !strings.Contains(err.Error(), "nn: SetTrainable: bareModel has no SetTrainable method") {
		t.Errorf("SetTrainable of a model without the method: %v", err)
	}

	// A shared weight is listed, saved and restored once (a VariableList
	// naming one variable twice is refused).
	s.Scope(func() { nn.Predict(shared, x) })
	if got := names(shared.Variables()); got != "tied/kernel tied/bias" {
		t.Errorf("shared variables %s, want tied/kernel tied/bias", got)
	}
	if !strings.Contains(nn.Summary(shared), "Total params: 12") {
		t.Errorf("summary counts the shared weight twice:\n%s", nn.Summary(shared))
	}
	for _, src := range []nn.VariableSource{m, shared} {
		path := filepath.Join(t.TempDir(), "ckpt")
		if err := nn.SaveCheckpoint(path, src); err != nil {
			t.Fatal(err)
		}
		vars := src.Variables()
		saved := vars[0].Value()
		vars[0].Assign(make([]float64, len(saved)))
		if err := nn.RestoreCheckpoint(path, src); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(vars[0].Value(), saved) {
			t.Errorf("%s: restored %v, want %v", vars[0].Name(), vars[0].Value(), saved)
		}
	}
}

// squaredError is a PredictionMetric: the mean of (pred - label)² over
// every element.
type squaredError struct{ *nn.Mean }

func (m squaredError) Update(yTrue, yPred data.Tensor) {
	d := make([]float64, len(yPred.Data))
	for i := range d {
		d[i] = (yPred.Data[i] - yTrue.Data[i]) * (yPred.Data[i] - yTrue.Data[i])
	}
	m.Mean.Update(data.NewTensor([]int{len(d)}, d))
}

// TestBuiltAfterScope: a model created inside a Scope and built after it is
// refused when it is built, saying so, instead of at Run with "created
// outside strategy.Scope".
func TestBuiltAfterScope(t *testing.T) {
	s := newStrategy(t)
	var inside *nn.Sequential
	s.Scope(func() { inside = nn.NewSequential(nn.Dense(4), nn.Dense(2)) })
	v := panics(func() { inside.Build([]int{8, 3}) })
	want := "nn: dense: built after the strategy.Scope it was created in had ended, so its variables would belong to no strategy; " +
		"build it inside the scope (s.Scope(func() { nn.Build(model, shape...) })) or let its first call inside s.Run build it"
	if err, ok := v.(error); !ok || err.Error() != want || !errors.Is(err, nn.ErrUsage) {
		t.Errorf("Build after Scope: panic\n got %v\nwant %s", v, want)
	}
	s.Scope(func() { inside.Build([]int{8, 3}) })
	if !inside.Built() {
		t.Error("Build inside the scope did not build")
	}
	outside := nn.NewSequential(nn.Dense(2))
	if v := panics(func() { outside.Build([]int{8, 3}) }); v != nil {
		t.Errorf("a model created and built outside any scope: panic %v", v)
	}
}

// TestPredict: Predict and Evaluate run a model outside any step function,
// on any number of rows, traced once, with the results of strategy.Run and
// Gather over the same batches.
func TestPredict(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		s := newStrategy(t, strategy.WithReplicas(replicas), strategy.WithWarnings(nil)) // the reference retraces
		var model *nn.Sequential
		s.Scope(func() { model = nn.NewSequential(nn.Dense(8, nn.ReLU), nn.Dense(3)) })
		forward := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return model.Call(ctx, x, false) }
		for _, rows := range []int{1, 255, 256, 700} {
			t.Run(fmt.Sprintf("replicas=%d/rows=%d", replicas, rows), func(t *testing.T) {
				x := data.RandomNormal(uint64(rows), rows, 5)
				got := model.Predict(x)
				var want []float64
				batch := (nn.PredictBatch + replicas - 1) / replicas * replicas
				for it := s.DistributeDataset(data.FromTensorSlices(x).Batch(batch)).Iter(); it.Next(); {
					want = append(want, s.Gather(s.Run(forward, it.Batch()), 0).Data...)
				}
				if !slices.Equal(got.Shape, []int{rows, 3}) || !slices.Equal(got.Data, want) {
					t.Errorf("Predict: shape %v, values equal to Run+Gather: %v; want shape [%d 3] and equal", got.Shape, slices.Equal(got.Data, want), rows)
				}
			})
		}
		traces := s.Traces()
		model.Predict(data.RandomNormal(9, 17, 5))
		if s.Traces() != traces {
			t.Errorf("replicas=%d: Predict on 17 rows traced again (%d traces, had %d)", replicas, s.Traces(), traces)
		}
		t.Run(fmt.Sprintf("replicas=%d/evaluate", replicas), func(t *testing.T) {
			x := data.RandomNormal(3, 70, 5)
			y := data.RandomInts(4, 3, 70)
			pred := model.Predict(x)
			want := &nn.SparseCategoricalAccuracy{}
			want.Update(y, pred)
			acc := &nn.SparseCategoricalAccuracy{}
			acc.Update(y, pred) // Evaluate resets it first
			res := model.Evaluate(data.FromTensorSlices(x, y).Batch(32), acc)
			if res["accuracy"] != want.Result() || acc.Result() != want.Result() {
				t.Errorf("Evaluate: %v (metric %v), want accuracy %v", res, acc.Result(), want.Result())
			}
		})
	}
	outside := nn.NewSequential(nn.Dense(2))
	want := "nn: sequential: Predict: the model was created outside any strategy.Scope, so it has no strategy to run on; create it inside s.Scope(func() { ... })"
	if v := panics(func() { outside.Predict(data.Zeros(2, 3)) }); v == nil || !strings.HasSuffix(fmt.Sprint(v), want[len("nn: sequential"):]) {
		t.Errorf("Predict without a strategy: panic %v, want %s", v, want)
	}
}

// replicaAware is a model whose Call reads its context, as a model that
// seeds something per replica does.
type replicaAware struct {
	d                 *nn.DenseLayer
	replica, replicas int  // what Call read
	sameGraph         bool // ctx.Graph() is x's graph
}

func (m *replicaAware) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	m.replica, m.replicas = ctx.ReplicaID(), ctx.NumReplicasInSync()
	m.sameGraph = ctx.Graph() == x.Graph()
	return m.d.Call(ctx, x, training)
}

func (m *replicaAware) Variables() []*nn.Variable { return nn.VariablesOf(m.d) }

// TestBuildGivesAContext: nn.Build calls the model with replica 0's context,
// not nil, so a Call that reads ctx.ReplicaID() builds, in either dtype.
func TestBuildGivesAContext(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			s := newStrategy(t, strategy.WithReplicas(2), strategy.WithDType(dt))
			m := &replicaAware{replica: -1}
			s.Scope(func() {
				m.d = nn.Dense(3)
				nn.Build(m, 1, 4)
			})
			if m.replica != 0 || m.replicas != 2 || !m.sameGraph {
				t.Errorf("Build's context: ReplicaID %d, NumReplicasInSync %d, graph is the input's %v; want 0, 2, true", m.replica, m.replicas, m.sameGraph)
			}
			if got := m.d.Variables()[0].Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 {
				t.Errorf("the dense kernel after Build has shape %v, want [4 3]", got)
			}
		})
	}
	s := newStrategy(t) // Float64
	err, _ := panics(func() { s.BuildContext(graph.New(graph.Float32)) }).(error)
	if !errors.Is(err, strategy.ErrUsage) {
		t.Errorf("BuildContext with a graph of another dtype: %v, want an error wrapping ErrUsage", err)
	}
}
