package strategy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loopback/loopbacktest"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// The multi-worker tests run their workers as processes: the test binary
// starts itself once per worker with the environment below, and each
// worker joins a loopback cluster (internal/loopback) and writes what it
// computed to a file. Workers cannot be goroutines of one process: the
// scope stack and the trace context are process-wide.
const (
	envWorker = "GOTRAIN_TEST_WORKER" // a worker process of TestMultiWorker: its loopbacktest.Spec
)

// multiCase is one training run the workers and the reference both do.
type multiCase struct {
	Name     string
	Replicas int // per worker
	F64      bool
	Opt      string
	Hidden   int // units of the hidden layer
}

func (c multiCase) dtype() graph.DType {
	if c.F64 {
		return graph.Float64
	}
	return graph.Float32
}

func (c multiCase) optimizer() func() nn.Optimizer {
	switch {
	case c.Opt == "adam" && c.Hidden == wideHidden:
		// With Keras's ε, 1e-7, the gradients of some of the wide layer's
		// units are at float32's rounding noise and Adam moves them by
		// whole steps: 1 and 4 replicas of one process differ by 6e-5.
		// With 1e-4, by 2e-6.
		return func() nn.Optimizer { return nn.NewAdam(0.01, nn.WithEpsilon(1e-4)) }
	case c.Opt == "adam":
		return func() nn.Optimizer { return nn.NewAdam(0.01) }
	case c.Opt == "sgd-momentum":
		return func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9)) }
	}
	panic("unknown optimizer " + c.Opt)
}

// wideHidden makes the model's updates long enough for the replicas to
// share them (a Split): 10·5000 + 5000 + 5000·3 + 3 elements, over
// strategy.SplitMin.
const wideHidden = 5000

// multiCases returns the training runs of size workers: the wide model's on
// 2 workers only, to keep the test short.
func multiCases(size int) []multiCase {
	var cases []multiCase
	hiddens := []int{8}
	if size == 2 {
		hiddens = append(hiddens, wideHidden)
	}
	for _, hidden := range hiddens {
		for _, r := range []int{1, 2} {
			for _, f64 := range []bool{false, true} {
				for _, opt := range []string{"adam", "sgd-momentum"} {
					name := fmt.Sprintf("%dx/%v/%s", r, f64, opt)
					if hidden != 8 {
						name += fmt.Sprintf("/hidden=%d", hidden)
					}
					cases = append(cases, multiCase{Name: name, Replicas: r, F64: f64, Opt: opt, Hidden: hidden})
				}
			}
		}
	}
	return cases
}

// workerResult is what one worker computed, by case name.
type workerResult struct {
	Weights map[string]map[string][]float64
	Losses  map[string][]float64
	Gather  []float64 // the per-example outputs of one step, gathered
	PerRep  []int     // per-replica input: the count of each step
	Failed  []string  // the error of the step failed on purpose, and what it changed
	Split   []int     // the updates shared by the step failed on purpose: small model, wide model
	FailedW []string  // Failed with the wide model, whose updates are shared
	Stopped bool      // an interrupt raised on worker 1 only stopped this worker's Run
	Differ  string    // the error of a step whose model worker 1 built otherwise
	Ckpt    []string  // the checkpoint: restored, the file exists on this worker, a missing file's error
}

// runWorkers starts size workers of TestMultiWorker and returns their
// results in rank order.
func runWorkers(t *testing.T, size int) []workerResult {
	res, err := loopbacktest.Run[workerResult](size, "^TestMultiWorker$", envWorker)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// worker is the body of one worker process.
func worker(t *testing.T, spec loopbacktest.Spec) {
	c := spec.Join(t)
	res := workerResult{Weights: map[string]map[string][]float64{}, Losses: map[string][]float64{}}
	for _, mc := range multiCases(spec.Size) {
		w, l := trainRunWith(t, mc.dtype(), mc.optimizer(), 2, mc.Hidden, strategy.WithCluster(c), strategy.WithReplicas(mc.Replicas))
		res.Weights[mc.Name], res.Losses[mc.Name] = w, l
	}
	res.Gather = gatherOutputs(t, strategy.WithCluster(c), strategy.WithReplicas(2))
	res.PerRep = perReplicaCounts(t, strategy.WithCluster(c))
	var split int
	res.Failed, split = failOnWorker1(t, 2, strategy.WithCluster(c))
	res.Split = append(res.Split, split)
	res.FailedW, split = failOnWorker1(t, wideUnits, strategy.WithCluster(c))
	res.Split = append(res.Split, split)
	res.Stopped = interruptWorker1(t, strategy.WithCluster(c))
	res.Differ = otherModelOnWorker1(t, strategy.WithCluster(c))
	res.Ckpt = checkpointOnChief(t, spec.Out+".d", strategy.WithCluster(c))
	if err := spec.Write(res); err != nil {
		t.Fatal(err)
	}
}

// gatherOutputs returns the gathered per-example outputs (each example's
// features summed) of the first batch of 16 of 13 examples.
func gatherOutputs(t *testing.T, opts ...strategy.Option) []float64 {
	s := strategy.NewMirrored(opts...)
	defer closeStrategy(t, s)
	x := data.RandomNormal(5, 13, 3)
	it := s.DistributeDataset(data.FromTensorSlices(x).Batch(16)).Iter()
	defer it.Close()
	it.Next()
	out := s.Run(func(x *nn.Tensor) *nn.Tensor { return graph.SumAxis(x, 1) }, it.Batch())
	return s.Gather(out, 0).Data
}

// perReplicaCounts iterates per-replica batches of 2 from datasets sharded
// by input pipeline, 9 examples in all, one replica per worker, and returns
// each step's count of real examples (on 2 workers, worker 1's dataset ends
// a step before worker 0's).
func perReplicaCounts(t *testing.T, opts ...strategy.Option) []int {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1))...)
	defer closeStrategy(t, s)
	dist := s.DistributeDatasetsFromFunction(func(ctx data.InputContext) *data.Dataset {
		x := data.RandomNormal(6, 9, 2)
		return data.FromTensorSlices(x).Shard(ctx.NumInputPipelines, ctx.InputPipelineID).Batch(2)
	})
	var counts []int
	for it := dist.Iter(); it.Next(); {
		counts = append(counts, it.Batch().Count())
	}
	return counts
}

// denseStep builds Dense(units) under s and returns a training step of it
// with opt, its loss averaged over globalBatch examples.
func denseStep(s *strategy.Mirrored, units, globalBatch int, opt nn.Optimizer) func(*strategy.ReplicaContext, *nn.Tensor, *nn.Tensor) *nn.Tensor {
	var model *nn.Sequential
	s.Scope(func() { model = nn.NewSequential(nn.Dense(units)) })
	return strategytest.ClassifierStep(model, opt, globalBatch)
}

// wideUnits makes failOnWorker1's model, Dense(units) on 4 features, one
// whose update the replicas share: 4·16384 + 16384 elements, over
// strategy.SplitMin.
const wideUnits = 16384

// failOnWorker1 trains Dense(units), then makes one replica of worker 1
// fail a step: every worker must return an error, and no variable may
// change anywhere. It returns the error's text, whether anything changed
// and whether the error is ErrReplica, and the updates the replicas shared.
func failOnWorker1(t *testing.T, units int, opts ...strategy.Option) ([]string, int) {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1))...)
	defer closeStrategy(t, s)
	x := data.RandomNormal(11, 32, 4)
	y := data.RandomInts(12, 2, 32)
	step := denseStep(s, units, 16, nn.NewSGD(0.1))
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(16)).Iter()
	defer it.Close()
	it.Next()
	s.Run(step, it.Batch())
	before := fmt.Sprint(s.Variables()[0].Value())
	it.Next()
	restore := strategy.SetTestHookRun(func(int) error {
		if s.WorkerID() == 1 {
			return errors.New("replica failed on purpose")
		}
		return nil
	})
	_, err := s.TryRun(step, it.Batch())
	restore()
	changed := fmt.Sprint(s.Variables()[0].Value()) != before
	return []string{fmt.Sprint(err), strconv.FormatBool(changed), strconv.FormatBool(errors.Is(err, strategy.ErrReplica))}, strategy.SplitUpdates(s)
}

// interruptWorker1 raises an interrupt on worker 1 alone, with interrupts
// waiting for agreement as in a worker of several: every worker's next Run
// must return ErrInterrupted, and the one after must run.
func interruptWorker1(t *testing.T, opts ...strategy.Option) bool {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1))...)
	defer closeStrategy(t, s)
	x := data.RandomNormal(5, 8, 3)
	it := s.DistributeDataset(data.FromTensorSlices(x).Batch(8)).Iter()
	defer it.Close()
	it.Next()
	step := func(x *nn.Tensor) *nn.Tensor { return graph.Sum(x) }
	safepoint.SetAgreed(true)
	defer safepoint.SetAgreed(false)
	if s.WorkerID() == 1 {
		safepoint.Raise()
	}
	if safepoint.Pending() {
		t.Error("an interrupt waiting for agreement fired at once")
	}
	_, err := s.TryRun(step, it.Batch())
	safepoint.Clear()
	if _, err := s.TryRun(step, it.Batch()); err != nil {
		t.Errorf("the Run after the interrupt: %v", err)
	}
	return errors.Is(err, safepoint.ErrInterrupted)
}

// otherModelOnWorker1 builds a hidden layer of 5 units on worker 1 and of 4
// on the others, and returns the first step's error.
func otherModelOnWorker1(t *testing.T, opts ...strategy.Option) string {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1))...)
	defer closeStrategy(t, s)
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		units := 4
		if s.WorkerID() == 1 {
			units = 5
		}
		model = nn.NewSequential(nn.Dense(units, nn.ReLU), nn.Dense(2))
		opt = nn.NewSGD(0.1)
	})
	step := strategytest.ClassifierStep(model, opt, 8)
	it := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(1, 8, 3), data.RandomInts(2, 2, 8)).Batch(8)).Iter()
	defer it.Close()
	it.Next()
	_, err := s.TryRun(step, it.Batch())
	return fmt.Sprint(err)
}

// checkpointOnChief saves a checkpoint to a folder of this worker's own
// (so the workers' paths differ), zeroes the variables and restores it:
// worker 0 alone writes, and every worker restores worker 0's file. It
// returns whether the values came back, whether this worker's file exists,
// and a missing file's error; then the same three for safetensors
// (issue 33).
func checkpointOnChief(t *testing.T, dir string, opts ...strategy.Option) []string {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1))...)
	defer closeStrategy(t, s)
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "ckpt")
	v := s.CreateVariable("v", []int{3}, []float64{1, 2, 3})
	if err := nn.SaveCheckpoint(path, s); err != nil {
		t.Fatal(err)
	}
	v.Assign([]float64{0, 0, 0})
	err := nn.RestoreCheckpoint(path, s)
	restored := err == nil && slices.Equal(v.Value(), []float64{1, 2, 3})
	_, statErr := os.Stat(path)
	missing := nn.RestoreCheckpoint(filepath.Join(dir, "none"), s)
	out := []string{strconv.FormatBool(restored), strconv.FormatBool(statErr == nil), fmt.Sprint(missing)}

	st := filepath.Join(dir, "weights.safetensors")
	if err := nn.SaveSafetensors(st, s); err != nil {
		t.Fatal(err)
	}
	v.Assign([]float64{0, 0, 0})
	err = nn.LoadSafetensors(st, s)
	restored = err == nil && slices.Equal(v.Value(), []float64{1, 2, 3})
	_, statErr = os.Stat(st)
	missing = nn.LoadSafetensors(filepath.Join(dir, "none.safetensors"), s)
	return append(out, strconv.FormatBool(restored), strconv.FormatBool(statErr == nil), fmt.Sprint(missing))
}

// TestMultiWorker trains the same model on 2 and 3 workers of 1 and 2
// replicas each (a loopback cluster of processes) and on one replica in
// this process, with Adam and SGD with momentum, in float32 and float64,
// on 103 examples in global batches of 16 (in the last batch some workers
// hold only padding), with a small hidden layer and with one wide enough
// that the replicas share the updates (a Split, summed across workers
// between the replicas' local sums and their parts). Losses and weights
// agree within 1e-5 (float32) and 1e-12 (float64), and every worker ends
// with the same bits. It also checks Gather across workers, per-replica
// datasets whose workers run out at different steps, and that a step
// failing on one worker fails on all with nothing applied, shared updates
// or not.
func TestMultiWorker(t *testing.T) {
	if spec, ok := loopbacktest.Worker(envWorker); ok {
		worker(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	type ref struct {
		weights map[string][]float64
		losses  []float64
	}
	refs := map[string]ref{}
	for _, mc := range multiCases(2) {
		w, l := trainRunWith(t, mc.dtype(), mc.optimizer(), 2, mc.Hidden, strategy.WithReplicas(1))
		refs[mc.Name] = ref{w, l}
	}
	wantGather := gatherOutputs(t, strategy.WithReplicas(1))
	for _, size := range []int{2, 3} {
		res := runWorkers(t, size)
		for _, mc := range multiCases(size) {
			want := refs[mc.Name]
			tol := 1e-5
			if mc.F64 {
				tol = 1e-12
			}
			worst := 0.0
			for rank, r := range res {
				got := r.Weights[mc.Name]
				if len(got) != len(want.weights) {
					t.Fatalf("%d workers, %s, worker %d: %d variables, want %d", size, mc.Name, rank, len(got), len(want.weights))
				}
				for name, w := range want.weights {
					d := maxRelDiff(got[name], w)
					worst = max(worst, d)
					if d > tol {
						t.Errorf("%d workers, %s, worker %d: %s differs from one replica's by %.3g", size, mc.Name, rank, name, d)
					}
					if !slices.Equal(got[name], res[0].Weights[mc.Name][name]) {
						t.Errorf("%d workers, %s: worker %d's %s is not worker 0's bits", size, mc.Name, rank, name)
					}
				}
				if len(r.Losses[mc.Name]) != 14 || maxRelDiff(r.Losses[mc.Name], want.losses) > tol {
					t.Errorf("%d workers, %s, worker %d: losses %v, one replica %v", size, mc.Name, rank, r.Losses[mc.Name], want.losses)
				}
			}
			t.Logf("%d workers, %s: weights within %.3g of one replica's", size, mc.Name, worst)
		}
		for rank, r := range res {
			if maxRelDiff(r.Gather, wantGather) > 1e-6 || len(r.Gather) != 13 {
				t.Errorf("%d workers: worker %d gathered %v, one process %v", size, rank, r.Gather, wantGather)
			}
			// 9 examples sharded over the workers (5 and 4; 3, 3 and 3),
			// batches of 2: the counts of every step, all workers together.
			wantCounts := map[int][]int{2: {4, 4, 1}, 3: {6, 3}}[size]
			if !slices.Equal(r.PerRep, wantCounts) {
				t.Errorf("%d workers: worker %d's per-replica steps counted %v, want %v", size, rank, r.PerRep, wantCounts)
			}
			if !strings.Contains(r.Differ, "worker 1 traced another step than worker 0") {
				t.Errorf("%d workers: worker %d: a model built otherwise on worker 1 gave %q", size, rank, r.Differ)
			}
			for i := 0; i < len(r.Ckpt); i += 3 {
				if r.Ckpt[i] != "true" || r.Ckpt[i+1] != strconv.FormatBool(rank == 0) || !strings.Contains(r.Ckpt[i+2], "no such file") {
					t.Errorf("%d workers: worker %d's checkpoint, then safetensors (restored, file here, missing file's error): %v", size, rank, r.Ckpt)
				}
			}
			if len(r.Ckpt) != 6 {
				t.Errorf("%d workers: worker %d's checkpoint results %v, want 6", size, rank, r.Ckpt)
			}
			if !r.Stopped {
				t.Errorf("%d workers: worker %d went on after worker 1 was interrupted", size, rank)
			}
			if !slices.Equal(r.Split, []int{0, 1}) {
				t.Errorf("%d workers: worker %d's replicas shared %v updates of the small and the wide model, want [0 1]", size, rank, r.Split)
			}
			for _, f := range [][]string{r.Failed, r.FailedW} {
				if f[1] != "false" || f[2] != "true" {
					t.Errorf("%d workers: worker %d: the failed step: %v (changed, is ErrReplica)", size, rank, f)
				}
				wantErr := "worker 1 failed this step"
				if rank == 1 {
					wantErr = "replica failed on purpose"
				}
				if !strings.Contains(f[0], wantErr) {
					t.Errorf("%d workers: worker %d's error %q, want one saying %q", size, rank, f[0], wantErr)
				}
			}
		}
	}
}
