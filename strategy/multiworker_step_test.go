package strategy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loopback/loopbacktest"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// envStepWorker marks a worker process of TestMultiWorkerStep: its
// loopbacktest.Spec.
const envStepWorker = "GOTRAIN_TEST_STEP_WORKER"

// stepCase is one synchronized batch norm training run.
type stepCase struct {
	Replicas int // per worker
	F64      bool
}

func (c stepCase) name() string { return fmt.Sprintf("%dx/%v", c.Replicas, c.F64) }

var stepCases = []stepCase{{1, false}, {1, true}, {2, false}, {2, true}}

// stepResult is what one worker of TestMultiWorkerStep computed.
type stepResult struct {
	Weights map[string]map[string][]float64 // by case, by variable
	Losses  map[string][]float64
	Labels  []float64 // the labels of a batch, gathered
	Batch   []float64 // the same labels, nn.GatherBatch's
	Eval    float64   // Evaluate's accuracy
	First   []int     // ExternalInput.First of this worker's replicas
	FirstFn []int     // the same, with per-replica datasets
	Failed  []string  // the label error's step: its error, whether a variable changed, the next step's error
}

// trainSyncBN trains Dense(6) → BatchNormalization(SyncBatchStats) → Dense(3)
// with Adam on 45 examples in global batches of 8 (the last one of 5, so
// some replicas hold only padding), for two epochs, and returns the weights
// and each step's loss. The first layer has no bias: batch norm removes it,
// so its gradient is rounding noise, which Adam scales up to whole steps
// and no two summation orders would agree on.
func trainSyncBN(t *testing.T, dt graph.DType, opts ...strategy.Option) (map[string][]float64, []float64) {
	t.Helper()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithDType(dt), strategy.WithSeed(5)}, opts...)...)
	defer closeStrategy(t, s)
	const globalBatch = 8
	x := data.RandomNormal(31, 45, 4)
	y := data.RandomInts(32, 3, 45)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(6, nn.WithoutBias()), nn.BatchNormalization(nn.SyncBatchStats(), nn.BatchNormMomentum(0.9)), nn.Dense(3))
		opt = nn.NewAdam(0.01)
	})
	step := strategytest.ClassifierStep(model, opt, globalBatch)
	var losses []float64
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(globalBatch).Repeat(2)).Iter()
	defer it.Close()
	for it.Next() {
		losses = append(losses, s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return strategytest.Variables(s), losses
}

// gatherLabels returns the labels of the first global batch of 16 of 13
// examples, gathered from every worker by s.Gather and by nn.GatherBatch.
func gatherLabels(t *testing.T, opts ...strategy.Option) (gathered, batch []float64) {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(2))...)
	defer closeStrategy(t, s)
	x := data.RandomNormal(5, 13, 3)
	y := data.RandomInts(6, 4, 13)
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(16)).Iter()
	defer it.Close()
	it.Next()
	return s.Gather(it.Batch().Component(1), 0).Data, nn.GatherBatch(it.Batch(), 1).Data
}

// evaluate returns Evaluate's accuracy of a seeded Dense(4) classifier over
// 23 examples in batches of 8 (the last one of 7, so that a replica holds
// padding).
func evaluate(t *testing.T, opts ...strategy.Option) float64 {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(2), strategy.WithSeed(3))...)
	defer closeStrategy(t, s)
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(4))
		model.Build([]int{1, 3})
	})
	x := data.RandomNormal(8, 23, 3)
	y := data.RandomInts(9, 4, 23)
	acc := &nn.SparseCategoricalAccuracy{}
	res := model.Evaluate(data.FromTensorSlices(x, y).Batch(8), acc)
	return res[acc.Name()]
}

// firstRows runs an external step on a global batch of 11 rows (3 per
// replica on 4 replicas) and returns what each local replica got as First.
// With fromFn the batch comes from per-replica datasets instead: each worker
// shards 9 examples (worker 0 gets 5, worker 1 gets 4) into batches of 3 per
// replica, so worker 1's rows start after worker 0's 5, which it learns only
// from worker 0.
func firstRows(t *testing.T, fromFn bool, opts ...strategy.Option) []int {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(2))...)
	defer closeStrategy(t, s)
	firsts := make([]int, s.LocalReplicas())
	reps := make([]strategy.ExternalReplica, len(firsts))
	for r := range reps {
		reps[r] = firstReplica{&firsts[r]}
	}
	d := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(7, 11, 2)).Batch(11))
	if fromFn {
		d = s.DistributeDatasetsFromFunction(func(ctx data.InputContext) *data.Dataset {
			return data.FromTensorSlices(data.RandomNormal(7, 9, 2)).Shard(ctx.NumInputPipelines, ctx.InputPipelineID).Batch(3)
		})
	}
	it := d.Iter()
	defer it.Close()
	it.Next()
	if _, err := s.RunExternal(&strategy.ExternalStep{Replicas: reps}, it.Batch()); err != nil {
		t.Fatal(err)
	}
	return firsts
}

// firstReplica records the First it is run with.
type firstReplica struct{ first *int }

func (f firstReplica) RunStep(in strategy.ExternalInput) ([]data.Tensor, error) {
	*f.first = in.First
	return nil, nil
}

func (f firstReplica) Gradient(*graph.Variable) strategy.Grad { return strategy.Grad{} }

// labelErrorOnWorker1 trains synchronized batch norm, then runs a step whose
// labels are out of range on worker 1 only: its loss fails between the
// forward reductions and those of the backward pass, which the others then
// wait in. It returns the step's error, whether a variable changed, and the
// error of the next, valid step.
func labelErrorOnWorker1(t *testing.T, opts ...strategy.Option) []string {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(2))...)
	defer closeStrategy(t, s)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(4), nn.BatchNormalization(nn.SyncBatchStats()), nn.Dense(2))
		opt = nn.NewSGD(0.1)
	})
	step := strategytest.ClassifierStep(model, opt, 8)
	x := data.RandomNormal(41, 8, 3)
	good := data.RandomInts(42, 2, 8)
	bad := good.Clone()
	bad.Data[7] = 5 // worker 1's second replica's last row
	run := func(y data.Tensor) error {
		it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(8)).Iter()
		defer it.Close()
		it.Next()
		_, err := s.TryRun(step, it.Batch())
		return err
	}
	if err := run(good); err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(s.Variables()[0].Value())
	err := run(bad)
	changed := fmt.Sprint(s.Variables()[0].Value()) != before
	return []string{fmt.Sprint(err), fmt.Sprint(changed), fmt.Sprint(run(good))}
}

// stepWorker is the body of one worker process of TestMultiWorkerStep.
func stepWorker(t *testing.T, spec loopbacktest.Spec) {
	c := spec.Join(t)
	res := stepResult{Weights: map[string]map[string][]float64{}, Losses: map[string][]float64{}}
	for _, sc := range stepCases {
		dt := graph.Float32
		if sc.F64 {
			dt = graph.Float64
		}
		res.Weights[sc.name()], res.Losses[sc.name()] = trainSyncBN(t, dt, strategy.WithCluster(c), strategy.WithReplicas(sc.Replicas))
	}
	res.Labels, res.Batch = gatherLabels(t, strategy.WithCluster(c))
	res.Eval = evaluate(t, strategy.WithCluster(c))
	res.First = firstRows(t, false, strategy.WithCluster(c))
	res.FirstFn = firstRows(t, true, strategy.WithCluster(c))
	res.Failed = labelErrorOnWorker1(t, strategy.WithCluster(c))
	if err := spec.Write(res); err != nil {
		t.Fatal(err)
	}
}

// TestMultiWorkerStep is issue 12: every cross-replica sum inside the step
// goes through the cluster. Synchronized batch norm trained on 2 workers of
// 1 and 2 replicas equals one process of 2 and 4 replicas within 1e-5
// (float32) and 1e-12 (float64), every worker ending with the same bits; a
// batch's labels gathered on 2 workers, by s.Gather and nn.GatherBatch, are
// one process's, and so is Evaluate's accuracy; ExternalInput.First counts
// the rows of the workers before, with global and per-replica datasets; and
// a label error on worker 1 in the middle of the step (between the forward
// and backward reductions) fails the step on both workers, naming the
// example's position in the global batch and applying nothing, instead of
// leaving worker 0 waiting in a reduction.
func TestMultiWorkerStep(t *testing.T) {
	if spec, ok := loopbacktest.Worker(envStepWorker); ok {
		stepWorker(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	const size = 2
	res, err := loopbacktest.Run[stepResult](size, "^TestMultiWorkerStep$", envStepWorker)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range stepCases {
		dt, tol := graph.Float32, 1e-5
		if sc.F64 {
			dt, tol = graph.Float64, 1e-12
		}
		wantW, wantL := trainSyncBN(t, dt, strategy.WithReplicas(size*sc.Replicas))
		worst := 0.0
		for rank, r := range res {
			got := r.Weights[sc.name()]
			if len(got) != len(wantW) {
				t.Fatalf("%s, worker %d: %d variables, want %d", sc.name(), rank, len(got), len(wantW))
			}
			for name, w := range wantW {
				d := maxRelDiff(got[name], w)
				worst = max(worst, d)
				if d > tol {
					t.Errorf("%s, worker %d: %s differs from %d replicas of one process by %.3g, want ≤ %g", sc.name(), rank, name, size*sc.Replicas, d, tol)
				}
				if !slices.Equal(got[name], res[0].Weights[sc.name()][name]) {
					t.Errorf("%s: worker %d's %s is not worker 0's bits", sc.name(), rank, name)
				}
			}
			if l := r.Losses[sc.name()]; len(l) != len(wantL) || maxRelDiff(l, wantL) > tol {
				t.Errorf("%s, worker %d: losses %v, one process %v", sc.name(), rank, l, wantL)
			}
		}
		t.Logf("%s: weights within %.3g of one process's", sc.name(), worst)
	}
	wantLabels, _ := gatherLabels(t)
	wantEval := evaluate(t, strategy.WithReplicas(2*size))
	wantFirst := [][]int{{0, 3}, {6, 9}}
	wantFirstFn := [][]int{{0, 3}, {5, 8}}
	for rank, r := range res {
		if !slices.Equal(r.Labels, wantLabels) {
			t.Errorf("worker %d gathered labels %v, one process %v", rank, r.Labels, wantLabels)
		}
		if !slices.Equal(r.Batch, wantLabels) {
			t.Errorf("worker %d: nn.GatherBatch's labels %v, one process %v", rank, r.Batch, wantLabels)
		}
		if r.Eval != wantEval {
			t.Errorf("worker %d: Evaluate's accuracy %v, one process of %d replicas %v", rank, r.Eval, 2*size, wantEval)
		}
		if !slices.Equal(r.First, wantFirst[rank]) {
			t.Errorf("worker %d: ExternalInput.First %v, want %v", rank, r.First, wantFirst[rank])
		}
		if !slices.Equal(r.FirstFn, wantFirstFn[rank]) {
			t.Errorf("worker %d: ExternalInput.First with per-replica datasets %v, want %v", rank, r.FirstFn, wantFirstFn[rank])
		}
		wantErr := "worker 1 failed this step"
		if rank == 1 {
			// Row 1 of worker 1's second replica: the last of 8.
			wantErr = "example 7 of the global batch (row 1 of the replica's shard)"
		}
		if !strings.Contains(r.Failed[0], wantErr) || r.Failed[1] != "false" || r.Failed[2] != "<nil>" {
			t.Errorf("worker %d: the step with a bad label on worker 1 (error, changed, next step's error) %q, want an error saying %q, nothing changed, and the next step running", rank, r.Failed, wantErr)
		}
	}
}

// echoCluster is a Cluster of two workers that compute alike, played by one
// process: sums double and gathers repeat. fail, when set, makes the
// in-step all-reductions fail (the ones whose buffers carry the workers'
// failure flags, len > 2).
type echoCluster struct{ fail bool }

func (c *echoCluster) Rank() int { return 0 }
func (c *echoCluster) Size() int { return 2 }

func (c *echoCluster) AllReduceF32(buf []float32) error {
	if c.fail && len(buf) > 2 {
		return errors.New("connection reset")
	}
	for i := range buf {
		buf[i] *= 2
	}
	return nil
}

func (c *echoCluster) AllReduceF64(buf []float64) error {
	for i := range buf {
		buf[i] *= 2
	}
	return nil
}

func (c *echoCluster) AllGather(local []float64) ([][]float64, error) {
	return [][]float64{local, local}, nil
}

func (c *echoCluster) Broadcast(buf []byte, root int) ([]byte, error) { return buf, nil }

// TestAllReduceClusterError: a cluster failing in an all-reduction inside
// the step fails the step with an error wrapping ErrCluster, on the replica
// that reduced across workers, while the other local replica waits in the
// reduction: no hang, no panic.
func TestAllReduceClusterError(t *testing.T) {
	c := &echoCluster{}
	s := strategy.NewMirrored(strategy.WithCluster(c), strategy.WithReplicas(2), strategy.WithDType(graph.Float32))
	defer closeStrategy(t, s)
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return ctx.AllReduce(strategy.Sum, graph.SumAxis(x, 0))
	}
	x := data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	b := strategy.NewPerReplica(x, x)
	out, err := s.TryRun(step, b)
	if err != nil {
		t.Fatal(err)
	}
	// Two local replicas, and an identical second worker: 4 × (5, 7, 9).
	if got, want := out.Values()[1].Data, []float64{20, 28, 36}; !slices.Equal(got, want) {
		t.Errorf("the all-reduction across 2 workers of 2 replicas gave %v, want %v", got, want)
	}
	c.fail = true
	_, err = s.TryRun(step, b)
	if !errors.Is(err, strategy.ErrCluster) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a cluster failing inside the step: got %v, want an error wrapping ErrCluster with the cluster's", err)
	}
}

// TestSplitAcrossClusterError: on several workers the replicas share a
// wide model's update (a Split), its gradients summed across workers
// by the last replica to arrive between the local sums and the parts; a
// cluster failing in that sum fails the step with an error wrapping
// ErrCluster on every replica's behalf, with no part applied and no
// replica left waiting.
func TestSplitAcrossClusterError(t *testing.T) {
	c := &echoCluster{}
	s := strategy.NewMirrored(strategy.WithCluster(c), strategy.WithReplicas(2), strategy.WithDType(graph.Float32))
	defer closeStrategy(t, s)
	step := denseStep(s, wideUnits, 4, nn.NewAdam(0.01))
	// Global batches of 4 rows, one per replica of the 2 workers: this one
	// holds the first two (the other, played by echoCluster, the same).
	it := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(3, 4, 4), data.RandomInts(4, 2, 4)).Batch(4).Repeat(2)).Iter()
	defer it.Close()
	it.Next()
	if _, err := s.TryRun(step, it.Batch()); err != nil {
		t.Fatal(err)
	}
	if n := strategy.SplitUpdates(s); n != 1 {
		t.Fatalf("the replicas of a worker of 2 shared %d updates of Dense(%d), want 1", n, wideUnits)
	}
	before := slices.Clone(s.Variables()[0].Value())
	c.fail = true
	it.Next()
	_, err := s.TryRun(step, it.Batch())
	if !errors.Is(err, strategy.ErrCluster) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a cluster failing in the split gradients' sum: got %v, want an error wrapping ErrCluster with the cluster's", err)
	}
	if !slices.Equal(s.Variables()[0].Value(), before) {
		t.Errorf("the step whose sum across workers failed changed %s", s.Variables()[0].Name())
	}
}
