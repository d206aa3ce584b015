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
)

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
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	r.step = func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, r.model.Call(ctx, x, true)), 8)
		r.opt.ApplyGradients(ctx, ctx.Gradients(loss, r.model.TrainableVariables()))
		return loss
	}
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

// allWeights returns the values of every variable of s, in creation order.
func allWeights(s *strategy.Mirrored) []float64 {
	var w []float64
	for _, v := range s.Variables() {
		w = append(w, v.Value()...)
	}
	return w
}

// TestIssue14NonFinite: a NaN loss on one replica, or a learning rate set to
// NaN or Inf between steps, stops the step with an error naming what went
// wrong, and nothing is applied; before, 630 of 632 weights became NaN.
func TestIssue14NonFinite(t *testing.T) {
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

// TestIssue14NonFiniteUnchecked: without the check, the step is applied, as
// before: the weights become NaN.
func TestIssue14NonFiniteUnchecked(t *testing.T) {
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

// TestIssue14RatesRejectedWhereSet: a learning rate that is not finite is
// refused by the constructor and by the schedules' Validate.
func TestIssue14RatesRejectedWhereSet(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"sgd-inf", func() { nn.NewSGD(math.Inf(1)) }, "nn: NewSGD: want a finite lr ≥ 0, got +Inf"},
		{"adam-nan", func() { nn.NewAdam(math.NaN()) }, "nn: NewAdam: want a finite lr ≥ 0, got NaN"},
		{"rmsprop-inf", func() { nn.NewRMSprop(math.Inf(1)) }, "nn: NewRMSprop: want a finite lr ≥ 0, got +Inf"},
		{"step-decay-inf", func() { nn.NewSGD(0, nn.WithSchedule(nn.StepDecay{Initial: math.Inf(1), Factor: 0.5, Every: 1})) },
			"nn: NewSGD: WithSchedule: nn: StepDecay: want finite Initial ≥ 0, Factor ≥ 0 and Every ≥ 1, got +Inf, 0.5, 1"},
		{"exponential-decay-inf", func() {
			nn.NewSGD(0, nn.WithSchedule(nn.ExponentialDecay{Initial: 1, DecaySteps: 1, DecayRate: math.Inf(1)}))
		}, "nn: NewSGD: WithSchedule: nn: ExponentialDecay: want finite Initial ≥ 0, DecayRate ≥ 0 and DecaySteps ≥ 1, got 1, +Inf, 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := panics(tt.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, nn.ErrUsage) || err.Error() != tt.want {
				t.Errorf("panic %v\nwant      %s (wrapping nn.ErrUsage)", v, tt.want)
			}
		})
	}
}

// TestIssue14BuiltAfterScope: a model created inside a Scope and built after
// it is refused when it is built, saying so, instead of at Run with "created
// outside strategy.Scope".
func TestIssue14BuiltAfterScope(t *testing.T) {
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

// TestIssue14Strings: metrics, optimizers, layers and models print as what
// they are in a cell.
func TestIssue14Strings(t *testing.T) {
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

// TestIssue14Predict: Predict and Evaluate run a model outside any step
// function, on any number of rows, traced once, with the results of
// strategy.Run and Gather over the same batches.
func TestIssue14Predict(t *testing.T) {
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

func ExampleSequential_Predict() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() { model = nn.NewSequential(nn.Dense(4, nn.ReLU), nn.Dense(2)) })
	probs := model.Predict(data.RandomNormal(1, 5, 3))
	fmt.Println(probs.Shape)
	// Output:
	// [5 2]
}

func ExampleSequential_Evaluate() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(2))
		model.Build([]int{1, 1})
	})
	// Class 1 when x > 0: logits -x and x.
	model.Layers()[0].(*nn.DenseLayer).Kernel().Assign([]float64{-1, 1})
	x := data.NewTensor([]int{5, 1}, []float64{-2, -1, 1, 2, 3})
	y := data.NewTensor([]int{5}, []float64{0, 0, 1, 1, 0})
	acc := &nn.SparseCategoricalAccuracy{}
	res := model.Evaluate(data.FromTensorSlices(x, y).Batch(3), acc)
	fmt.Printf("%.2f\n%v\n", res["accuracy"], acc)
	// Output:
	// 0.80
	// accuracy: 0.8000 (4 of 5 examples)
}

// TestIssue14TooLarge: a layer whose weights would not fit in memory, or a
// batch of 1<<20 rows through a wide Dense whose weights fit but whose
// activations (8 TiB) would not, fails its step with an error naming the
// layer or node and the shape, wrapping data.ErrMemory, and the session
// trains on. The checks come before the allocations, so nothing that large
// is allocated.
func TestIssue14TooLarge(t *testing.T) {
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

// resumeRun trains a model on a shuffled, batched dataset for a number of
// epochs, one dataset pass per epoch, as a notebook loop does.
type resumeRun struct {
	s     *strategy.Mirrored
	model *nn.Sequential
	opt   nn.Optimizer
	dist  *strategy.DistributedDataset
	step  func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
}

func newResumeRun(t *testing.T) *resumeRun {
	t.Helper()
	r := &resumeRun{s: newStrategy(t, strategy.WithReplicas(2), strategy.WithDType(graph.Float32))}
	x := data.RandomNormal(11, 200, 6)
	y := data.RandomInts(12, 3, 200)
	// Shuffle, then batch, then shuffle the batches: two Shuffles, both
	// reshuffled at every epoch; the last batch of each epoch is partial.
	ds := data.FromTensorSlices(x, y).Shuffle(64, 5).Batch(16).Shuffle(4, 6).Prefetch(2)
	r.dist = r.s.DistributeDataset(ds)
	r.s.Scope(func() {
		r.model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(3))
		r.opt = nn.NewAdam(0.01)
		r.model.Build([]int{1, 6})
		nn.BuildOptimizer(r.opt, r.model.TrainableVariables())
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	r.step = func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, r.model.Call(ctx, x, true)), 16)
		r.opt.ApplyGradients(ctx, ctx.Gradients(loss, r.model.TrainableVariables()))
		return loss
	}
	return r
}

// train runs steps until the run has taken stop steps in all (or the
// epochs end) and returns the iterator it stopped in, still open, or nil.
func (r *resumeRun) train(epochs, stop, done int, it *strategy.DistributedIterator, epoch int) *strategy.DistributedIterator {
	for ; epoch < epochs; epoch++ {
		if it == nil {
			it = r.dist.Iter()
		}
		for it.Next() {
			r.s.Run(r.step, it.Batch())
			if done++; done == stop {
				return it
			}
		}
		it = nil
	}
	return nil
}

func (r *resumeRun) weights() []float64 { return allWeights(r.s) }

// TestIssue14ResumeInput: a shuffled run checkpointed with its input
// position at step 10 (or later, in another epoch) and restored into a new
// strategy, model and dataset continues bit for bit as the uninterrupted
// run; before, a restored run started its input over (relative difference
// 0.81).
func TestIssue14ResumeInput(t *testing.T) {
	const epochs = 3 // 13 batches each
	ref := newResumeRun(t)
	ref.train(epochs, -1, 0, nil, 0)
	want := ref.weights()
	for _, stop := range []int{10, 13, 20, 38} {
		t.Run(fmt.Sprintf("step-%d", stop), func(t *testing.T) {
			path := t.TempDir() + "/run.ckpt"
			first := newResumeRun(t)
			it := first.train(epochs, stop, 0, nil, 0)
			pos := nn.NewInputPosition("input")
			pos.Record(it)
			it.Close()
			if err := nn.SaveCheckpoint(path, nn.Join(first.s, pos)); err != nil {
				t.Fatal(err)
			}
			second := newResumeRun(t)
			restored := nn.NewInputPosition("input")
			if err := nn.RestoreCheckpoint(path, nn.Join(second.s, restored)); err != nil {
				t.Fatal(err)
			}
			resumed, err := restored.Resume(second.dist)
			if err != nil {
				t.Fatal(err)
			}
			second.train(epochs, -1, stop, resumed, restored.Epoch())
			if got := second.weights(); !slices.Equal(got, want) {
				t.Errorf("resumed at step %d (%v): weights differ from the uninterrupted run's (first %v, want %v)", stop, restored, got[:3], want[:3])
			}
		})
	}
}

func ExampleInputPosition() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	x := data.NewTensor([]int{8, 1}, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	dist := s.DistributeDataset(data.FromTensorSlices(x).Shuffle(8, 3).Batch(2))
	it := dist.Iter()
	it.Next()
	it.Next()
	pos := nn.NewInputPosition("input")
	pos.Record(it) // then nn.SaveCheckpoint(path, nn.Join(s, pos))
	fmt.Println(pos)
	resumed, _ := pos.Resume(dist) // after nn.RestoreCheckpoint(path, nn.Join(s, pos))
	for resumed.Next() && it.Next() {
		fmt.Println(nn.GatherBatch(resumed.Batch(), 0).Data, nn.GatherBatch(it.Batch(), 0).Data)
	}
	it.Close()
	// Output:
	// input: epoch 0, element 2
	// [5 7] [5 7]
	// [3 1] [3 1]
}
