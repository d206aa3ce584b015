package nn_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// cnn is the model of the equivalence test.
func cnn(dropout float64) *nn.Sequential {
	return nn.NewSequential(
		nn.Conv2D(4, 3, nn.WithPadding(nn.Same)),
		nn.BatchNormalization(nn.SyncBatchStats()),
		nn.Activate(nn.ReLU),
		nn.MaxPool2D(2),
		nn.Flatten(),
		nn.Dropout(dropout),
		nn.Dense(3),
	)
}

// trainCNN trains cnn on 29 images 6x6x2 in global batches of 8 (the last
// has 5: it divides neither by the batch nor by 2, 3 or 4 replicas) for two
// epochs with n replicas, and returns every variable of the strategy by
// name: weights, moving statistics, optimizer state.
func trainCNN(t *testing.T, n int, dt graph.DType) map[string][]float64 {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(5))
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	x := data.RandomNormal(31, 29, 6, 6, 2)
	y := data.RandomInts(32, 3, 29)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = cnn(0)
		opt = nn.NewSGD(0.1, nn.WithMomentum(0.9))
	})
	step := strategytest.ClassifierStep(model, opt, 0)
	return strategytest.Train(t, s, data.FromTensorSlices(x, y).Batch(8).Repeat(2), step, 8)
}

// checkVariables fails unless want holds every variable named.
func checkVariables(t *testing.T, want map[string][]float64, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, ok := want[name]; !ok {
			t.Fatalf("no variable %q among %v", name, slices.Sorted(maps.Keys(want)))
		}
	}
}

// TestCNNReplicasMatchOneReplica is the equivalence of data parallelism for
// a CNN with synchronized batch norm: N = 1..4 replicas give the weights and
// moving statistics of one replica.
func TestCNNReplicasMatchOneReplica(t *testing.T) {
	for _, c := range []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float64, 1e-12}, {graph.Float32, 1e-5}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			want := trainCNN(t, 1, c.dt)
			checkVariables(t, want, "batch_normalization/moving_mean", "batch_normalization/moving_variance", "conv2d/kernel")
			if mm := want["batch_normalization/moving_mean"]; mm[0] == 0 {
				t.Fatalf("moving mean %v never updated", mm)
			}
			for n := 2; n <= 4; n++ {
				strategytest.CheckSame(t, fmt.Sprintf("%d replicas", n), trainCNN(t, n, c.dt), want, c.tol)
			}
		})
	}
}

// TestBatchNormForward checks training-mode batch norm against a naive
// computation over the real rows, and the moving averages after one step.
func TestBatchNormForward(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			s := newStrategy(t)
			var bn *nn.BatchNormalizationLayer
			s.Scope(func() {
				opts := []nn.LayerOption{nn.BatchNormMomentum(0.9), nn.BatchNormEpsilon(0.01)}
				if sync {
					opts = append(opts, nn.SyncBatchStats())
				}
				bn = nn.BatchNormalization(opts...)
			})
			step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return bn.Call(ctx, x, true) }
			x := data.RandomNormal(4, 5, 2, 3) // 5 rows, 2 positions, 3 channels
			got := forward(t, s, step, x)
			for c := 0; c < 3; c++ {
				var vals []float64
				for i := c; i < len(x.Data); i += 3 {
					vals = append(vals, x.Data[i])
				}
				mean, vr := 0.0, 0.0
				for _, v := range vals {
					mean += v / float64(len(vals))
				}
				for _, v := range vals {
					vr += (v - mean) * (v - mean) / float64(len(vals))
				}
				for k, i := 0, c; i < len(x.Data); k, i = k+1, i+3 {
					if want := (vals[k] - mean) / math.Sqrt(vr+0.01); math.Abs(got.Data[i]-want) > 1e-12 {
						t.Errorf("y[%d] = %v, want %v", i, got.Data[i], want)
					}
				}
				if m, want := bn.MovingMean().Value()[c], 0.1*mean; math.Abs(m-want) > 1e-12 {
					t.Errorf("moving mean[%d] = %v, want %v", c, m, want)
				}
				if v, want := bn.MovingVariance().Value()[c], 0.9+0.1*vr; math.Abs(v-want) > 1e-12 {
					t.Errorf("moving variance[%d] = %v, want %v", c, v, want)
				}
			}
			// Inference uses the moving averages.
			infer := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return bn.Call(ctx, x, false) }
			got = forward(t, s, infer, x)
			mm, mv := bn.MovingMean().Value(), bn.MovingVariance().Value()
			for i, v := range x.Data {
				c := i % 3
				if want := (v - mm[c]) / math.Sqrt(mv[c]+0.01); math.Abs(got.Data[i]-want) > 1e-12 {
					t.Errorf("inference y[%d] = %v, want %v", i, got.Data[i], want)
				}
			}
		})
	}
}

// TestIssue36BatchNormCallAct: CallAct's fused residual add and ReLU give
// what Call followed by nn.Add and a ReLU give, training (synced or not,
// with the moving averages) and not, and with gradients that match.
func TestIssue36BatchNormCallAct(t *testing.T) {
	for _, sync := range []bool{false, true} {
		for _, training := range []bool{true, false} {
			t.Run(fmt.Sprintf("sync=%v/training=%v", sync, training), func(t *testing.T) {
				s := newStrategy(t, strategy.WithReplicas(2))
				var fused, plain *nn.BatchNormalizationLayer
				s.Scope(func() {
					opts := []nn.LayerOption{nn.BatchNormMomentum(0.9)}
					if sync {
						opts = append(opts, nn.SyncBatchStats())
					}
					fused, plain = nn.BatchNormalization(opts...), nn.BatchNormalization(opts...)
				})
				step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
					res := graph.Scale(x, -0.7)
					a := fused.CallAct(ctx, x, res, nn.ReLU, training)
					b := graph.Activate(nn.Add(plain.Call(ctx, x, training), res), graph.ReLU)
					w := graph.Mul(x, x) // weights the outputs unevenly, for the gradients
					vars := append(fused.Variables()[:2], plain.Variables()[:2]...)
					grads := ctx.Gradients(graph.Add(graph.Sum(graph.Mul(a, w)), graph.Sum(graph.Mul(b, w))), vars)
					return graph.Concat(0, graph.Reshape(graph.Sub(a, b), -1),
						graph.Sub(grads[0], grads[2]), graph.Sub(grads[1], grads[3]))
				}
				x := data.RandomNormal(36, 16, 2, 2, 3) // batches of 6, 6 and 4 (padded)
				it := s.DistributeDataset(data.FromTensorSlices(x).Batch(6)).Iter()
				for r := 0; it.Next(); r++ {
					for _, v := range s.Run(step, it.Batch()).Values() {
						for i, d := range v.Data {
							if math.Abs(d) > 1e-12 {
								t.Fatalf("step %d: fused minus composed [%d] = %v, want 0", r, i, d)
							}
						}
					}
				}
				for i, v := range fused.Variables() {
					if got, want := v.Value(), plain.Variables()[i].Value(); !slices.Equal(got, want) {
						t.Errorf("%s = %v, want %v", v.Name(), got, want)
					}
				}
			})
		}
	}
}

// dropoutOutputs runs step on ones [12, 500], the same tensor on every
// replica, and returns each replica's output.
func dropoutOutputs(t *testing.T, s *strategy.Mirrored, step any) [][]float64 {
	t.Helper()
	res, err := s.TryRun(step, s.Broadcast(data.NewTensor([]int{12, 500}, slices.Repeat([]float64{1}, 6000))))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float64
	for _, v := range res.Values() {
		out = append(out, v.Data)
	}
	return out
}

func TestDropout(t *testing.T) {
	const rate = 0.3
	s := newStrategy(t, strategy.WithReplicas(2))
	var d *nn.DropoutLayer
	s.Scope(func() { d = nn.Dropout(rate) })
	train := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d.Call(ctx, x, true) }
	infer := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d.Call(ctx, x, false) }

	step0 := dropoutOutputs(t, s, train)
	step1 := dropoutOutputs(t, s, train)
	if got := graph.CounterValue(d.Counter()); got != 2 {
		t.Errorf("counter after 2 training steps = %d, want 2", got)
	}
	for _, out := range dropoutOutputs(t, s, infer) {
		for i, v := range out {
			if v != 1 {
				t.Fatalf("inference output[%d] = %v, want the input 1", i, v)
			}
		}
	}
	if got := graph.CounterValue(d.Counter()); got != 2 {
		t.Errorf("counter after an inference step = %d, want 2 (unchanged)", got)
	}
	for r, out := range step0 {
		zeros := 0
		for i, v := range out {
			switch {
			case v == 0:
				zeros++
			case math.Abs(v-1/(1-rate)) > 1e-12:
				t.Fatalf("replica %d: output[%d] = %v, want 0 or %v", r, i, v, 1/(1-rate))
			}
		}
		n := float64(len(out))
		if sd := math.Sqrt(n * rate * (1 - rate)); math.Abs(float64(zeros)-n*rate) > 5*sd {
			t.Errorf("replica %d dropped %d of %.0f, want about %.0f", r, zeros, n, n*rate)
		}
	}
	if slices.Equal(step0[0], step0[1]) {
		t.Error("replicas 0 and 1 drew the same mask")
	}
	if slices.Equal(step0[0], step1[0]) {
		t.Error("steps 0 and 1 drew the same mask")
	}
	// Restoring the counter (as a checkpoint does) replays the stream.
	d.Counter().Assign([]float64{0, 0})
	again := dropoutOutputs(t, s, train)
	for r := range again {
		if !slices.Equal(again[r], step0[r]) {
			t.Errorf("replica %d: step 0 replayed gives another mask", r)
		}
	}
	// Another strategy with the same seed draws the same masks.
	s2 := newStrategy(t, strategy.WithReplicas(2))
	var d2 *nn.DropoutLayer
	s2.Scope(func() { d2 = nn.Dropout(rate) })
	train2 := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d2.Call(ctx, x, true) }
	if other := dropoutOutputs(t, s2, train2); !slices.Equal(other[1], step0[1]) {
		t.Error("same seed, layer name and step: replica 1's masks differ across strategies")
	}
}

// TestFreezeUnfreeze: a frozen layer's weights get no update and leave
// TrainableVariables; the step traced before freezing retraces; unfreezing
// resumes training.
func TestFreezeUnfreeze(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = cnn(0)
		opt = nn.NewAdam(0.01)
	})
	step := strategytest.ClassifierStep(model, opt, 0)
	x, y := data.RandomNormal(1, 8, 6, 6, 2), data.RandomInts(2, 3, 8)
	batch := func() *strategy.PerReplicaBatch {
		it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(8)).Iter()
		defer it.Close()
		it.Next()
		return it.Batch()
	}
	s.Run(step, batch())
	layers := model.Layers()
	conv, bn, dense := layers[0].(*nn.Conv2DLayer), layers[1].(*nn.BatchNormalizationLayer), layers[6].(*nn.DenseLayer)
	trainableAll := len(model.TrainableVariables())

	conv.SetTrainable(false)
	bn.SetTrainable(false)
	if conv.Trainable() || bn.Trainable() || !dense.Trainable() {
		t.Fatal("Trainable does not follow SetTrainable")
	}
	if got := len(model.TrainableVariables()); got != trainableAll-4 {
		t.Errorf("frozen: %d trainable variables, want %d", got, trainableAll-4)
	}
	kernel, gamma, mm, dk := conv.Kernel().Value(), bn.Gamma().Value(), bn.MovingMean().Value(), dense.Kernel().Value()
	s.Run(step, batch())
	if !slices.Equal(conv.Kernel().Value(), kernel) || !slices.Equal(bn.Gamma().Value(), gamma) {
		t.Error("frozen conv kernel or batch-norm gamma changed")
	}
	if !slices.Equal(bn.MovingMean().Value(), mm) {
		t.Error("frozen batch norm updated its moving mean; it should run in inference mode")
	}
	if slices.Equal(dense.Kernel().Value(), dk) {
		t.Error("the dense layer, still trainable, did not train")
	}

	model.SetTrainable(true)
	if got := len(model.TrainableVariables()); got != trainableAll {
		t.Errorf("unfrozen: %d trainable variables, want %d", got, trainableAll)
	}
	s.Run(step, batch())
	if slices.Equal(conv.Kernel().Value(), kernel) || slices.Equal(bn.MovingMean().Value(), mm) {
		t.Error("after unfreezing, the conv kernel or the moving mean did not change")
	}
	if got := s.Traces(); got != 1 {
		t.Errorf("%d traces cached, want 1", got)
	}
}

// TestEmbedding: rows are picked by id and only the rows used train.
func TestEmbedding(t *testing.T) {
	s := newStrategy(t)
	var e *nn.EmbeddingLayer
	var opt nn.Optimizer
	s.Scope(func() {
		e = nn.Embedding(6, 3)
		opt = nn.NewSGD(1)
	})
	step := func(ctx *strategy.ReplicaContext, ids *nn.Tensor) *nn.Tensor {
		out := e.Call(ctx, ids, true)
		loss := graph.Sum(out)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, e.TrainableVariables()))
		return out
	}
	ids := data.NewTensor([]int{2, 2}, []float64{1, 4, 1, 0})
	before := e.OutputShape([]int{2, 2})
	if fmt.Sprint(before) != "[2 2 3]" {
		t.Errorf("OutputShape = %v, want [2 2 3]", before)
	}
	res, err := s.TryRun(step, ids)
	if err != nil {
		t.Fatal(err)
	}
	table := e.Table().Value() // after one SGD step with lr 1
	out := res.Values()[0]
	if fmt.Sprint(out.Shape) != "[2 2 3]" {
		t.Fatalf("output shape %v, want [2 2 3]", out.Shape)
	}
	uses := map[int]float64{1: 2, 4: 1, 0: 1}
	for i, id := range ids.Data {
		for j := 0; j < 3; j++ {
			// out was read before the update: table + uses·lr.
			if want := table[int(id)*3+j] + uses[int(id)]; math.Abs(out.Data[i*3+j]-want) > 1e-12 {
				t.Errorf("out[%d,%d] = %v, want %v", i, j, out.Data[i*3+j], want)
			}
		}
	}
	bad := data.NewTensor([]int{2, 2}, []float64{1, 6, 0, 0})
	_, err = s.TryRun(step, bad)
	var ie *graph.IndexError
	if !errors.As(err, &ie) || ie.Value != 6 || !strings.Contains(err.Error(), "embedding") {
		t.Errorf("id 6 of 6: error %v, want a graph.IndexError naming the embedding", err)
	}
}

func TestLayerShapesAndSummary(t *testing.T) {
	s := newStrategy(t)
	var m *nn.Sequential
	s.Scope(func() {
		m = nn.NewSequential(
			nn.Conv2D(8, 3, nn.WithPadding(nn.Same), nn.WithActivation(nn.ReLU)),
			nn.MaxPool2D(2),
			nn.Conv2D(4, 3, nn.WithStrides(2, 2), nn.WithoutBias()),
			nn.BatchNormalization(),
			nn.Flatten(),
			nn.Dropout(0.5),
			nn.Dense(10, nn.Softmax),
		)
		m.Build([]int{1, 28, 28, 1})
	})
	if got := fmt.Sprint(m.OutputShape([]int{7, 28, 28, 1})); got != "[7 10]" {
		t.Errorf("OutputShape = %s, want [7 10]", got)
	}
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return m.Call(ctx, x, false) }
	out := forward(t, s, step, data.RandomNormal(1, 3, 28, 28, 1))
	if fmt.Sprint(out.Shape) != "[3 10]" {
		t.Errorf("output shape %v, want [3 10]", out.Shape)
	}
	sum := m.Summary()
	for _, want := range []string{
		"conv2d (Conv2D)              (None, 28, 28, 8)            80",
		"max_pooling2d (MaxPool2D)    (None, 14, 14, 8)             0",
		"conv2d_1 (Conv2D)            (None, 6, 6, 4)             288",
		"batch_normalization (BatchNormalization) (None, 6, 6, 4)              16",
		"flatten (Flatten)            (None, 144)                   0",
		"dropout (Dropout)            (None, 144)                   2",
		"Non-trainable params: 10",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// TestLayerOptionString checks that an option prints as it was written,
// as the message of a layer refusing it shows it.
func TestLayerOptionString(t *testing.T) {
	for _, c := range []struct {
		opt  nn.LayerOption
		want string
	}{
		{nn.Named("up"), `Named("up")`},
		{nn.WithStrides(2, 2), "WithStrides(2, 2)"},
		{nn.WithoutBias(), "WithoutBias()"},
		{nn.KernelInitializer(nn.RandomNormal{Stddev: 0.02}), "KernelInitializer(nn.RandomNormal{Mean:0, Stddev:0.02})"},
		{nn.GELU, "gelu"},
	} {
		if got := c.opt.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
}

func TestLayerMisuse(t *testing.T) {
	s := newStrategy(t)
	var conv *nn.Conv2DLayer
	var conv1d *nn.Conv1DLayer
	s.Scope(func() { conv, conv1d = nn.Conv2D(2, 3), nn.Conv1D(2, 3, nn.Named("seq")) })
	cases := []struct {
		name string
		fn   func()
		kind error
		want string
	}{
		{"conv filters", func() { nn.Conv2D(0, 3) }, nn.ErrUsage, "nn: Conv2D: want filters ≥ 1 and kernel ≥ 1, got 0 and 3"},
		{"pool option", func() { nn.MaxPool2D(2, nn.WithoutBias()) }, nn.ErrUsage, "nn: MaxPool2D: option WithoutBias does not apply; it takes [Named WithStrides WithPadding]"},
		{"dropout rate", func() { nn.Dropout(1) }, nn.ErrUsage, "nn: Dropout: want a rate in [0, 1), got 1"},
		{"strides", func() { nn.WithStrides(0, 1) }, nn.ErrUsage, "nn: WithStrides: want strides ≥ 1, got 0, 1"},
		{"embedding", func() { nn.Embedding(0, 2) }, nn.ErrUsage, "nn: Embedding: want vocab ≥ 1 and dim ≥ 1, got 0 and 2"},
		{"conv input", func() {
			g := graph.New(graph.Float64)
			s.Scope(func() { conv.Call(nil, g.Placeholder("x", 2, 5), true) })
		}, nn.ErrShape, "nn: conv2d: want input shape [batch, height, width, channels], got [2 5]"},
		{"bn sync without ctx", func() {
			g := graph.New(graph.Float64)
			s.Scope(func() { nn.BatchNormalization(nn.SyncBatchStats()).Call(nil, g.Placeholder("x", 2, 5), true) })
		}, nn.ErrUsage, "nn: batch_normalization: synchronized batch statistics need the step's *strategy.ReplicaContext, got nil"},
		{"bn residual shape", func() {
			g := graph.New(graph.Float64)
			s.Scope(func() {
				nn.BatchNormalization(nn.Named("bn")).CallAct(nil, g.Placeholder("x", 2, 5), g.Placeholder("r", 2, 4), nn.ReLU, true)
			})
		}, nn.ErrUsage, "nn: bn: want a residual of the input's shape [2 5], got [2 4]; project the shortcut to the branch's shape (a 1x1 Conv2D with its strides and filters)"},
		{"conv1d row stride", func() { nn.Conv1D(2, 3, nn.WithStrides(2, 2)) }, nn.ErrUsage,
			"nn: Conv1D: want WithStrides(1, s) and WithDilation(1, d) (a sequence is one row), got strides 2, 2 and dilation 1, 1"},
		{"dilation", func() { nn.WithDilation(1, 0) }, nn.ErrUsage, "nn: WithDilation: want dilation rates ≥ 1, got 1, 0"},
		{"average option", func() { nn.AveragePooling2D(2, nn.WithDilation(2, 2)) }, nn.ErrUsage,
			"nn: AveragePooling2D: option WithDilation does not apply; it takes [Named WithStrides WithPadding]"},
		{"conv1d rank", func() {
			g := graph.New(graph.Float64)
			s.Scope(func() { conv1d.Call(nil, g.Placeholder("x", 2, 5, 1, 1), true) })
		}, nn.ErrShape, "nn: seq: want input shape [batch, time, channels], got [2 5 1 1]"},
		{"conv1d short", func() {
			g := graph.New(graph.Float64)
			s.Scope(func() { conv1d.Call(nil, g.Placeholder("x", 2, 2, 4), true) })
		}, nn.ErrShape, "nn: seq: want a sequence of at least 3 steps for valid padding, got 2"},
		{"not an option", func() { nn.Dense(2, nn.Same) }, nn.ErrUsage, "nn: Dense: same (graph.Padding) is not a layer option"},
		{"dense activation", func() { nn.Dense(2, nn.Activation(99)) }, nn.ErrUsage,
			"nn: Dense: want an activation Linear..Softmax, got Activation(99)"},
		{"with activation", func() { nn.WithActivation(nn.Activation(-1)) }, nn.ErrUsage,
			"nn: WithActivation: want an activation Linear..Softmax, got Activation(-1)"},
		{"activate", func() { nn.Activate(nn.Activation(8)) }, nn.ErrUsage,
			"nn: Activate: want an activation Linear..Softmax, got Activation(8)"},
		{"global rank", func() {
			g := graph.New(graph.Float64)
			nn.GlobalAveragePooling2D(nn.Named("gap")).Call(nil, g.Placeholder("x", 2, 5), false)
		}, nn.ErrShape, "nn: gap: want input shape [batch, height, width, channels], got [2 5]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := panics(c.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Errorf("panic %v, want %q wrapping %v", v, c.want, c.kind)
			}
		})
	}
}
