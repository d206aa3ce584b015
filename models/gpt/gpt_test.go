package gpt_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loopback/loopbacktest"
	"github.com/gotrain/gotrain/models/gpt"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// tiny is the test model: every part of the small GPT, at a size that
// trains in milliseconds.
var tiny = gpt.Config{Vocab: 13, Context: 8, Layers: 2, Heads: 2, Width: 16}

// envWorker makes this test binary one worker of a loopback cluster
// (loopbacktest.Spec).
const envWorker = "GOTRAIN_GPT_TEST_WORKER"

// equivCase is one optimizer and dtype the equivalence runs.
type equivCase struct {
	Name string
	F64  bool
	Adam bool
}

func (c equivCase) dtype() graph.DType {
	if c.F64 {
		return graph.Float64
	}
	return graph.Float32
}

// optimizer is AdamW clipped at global norm 1 (the benchmark's) or SGD
// with momentum.
func (c equivCase) optimizer() nn.Optimizer {
	if c.Adam {
		return nn.NewAdamW(3e-3, nn.WithBetas(0.9, 0.99), nn.WithWeightDecay(0.1), nn.WithClipGlobalNorm(1))
	}
	return nn.NewSGD(0.3, nn.WithMomentum(0.9))
}

// train trains tiny for 8 steps on global batches of 6 windows (4 steps an
// epoch, 2 epochs) and returns every variable of the strategy by name.
func train(t *testing.T, c equivCase, opts ...strategy.Option) map[string][]float64 {
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithDType(c.dtype()), strategy.WithSeed(11)}, opts...)...)
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	text := make([]int, 300)
	for i := range text {
		text[i] = r.IntN(tiny.Vocab)
	}
	ds, err := data.TextWindows(text, tiny.Context, 24, 5)
	if err != nil {
		t.Fatal(err)
	}
	var model *gpt.GPT
	var opt nn.Optimizer
	s.Scope(func() {
		model, err = gpt.New("gpt", tiny)
		opt = c.optimizer()
	})
	if err != nil {
		t.Fatal(err)
	}
	step := strategytest.ClassifierStep(model, opt, 0)
	return strategytest.Train(t, s, ds.Batch(6).Repeat(2), step, 8)
}

// cases are the optimizers and dtypes of the equivalence, each with its
// tolerance against one replica: the MLP's (strategy's equivalence tests).
// float32 AdamW measured 6e-8 here; Adam can move a gradient element near
// zero by about lr whichever way its rounding goes, which the global-norm
// clip and this model's gradients keep away from.
var cases = []struct {
	equivCase
	tol float64
}{
	{equivCase{Name: "f64-sgd", F64: true}, 1e-12},
	{equivCase{Name: "f64-adamw", F64: true, Adam: true}, 1e-12},
	{equivCase{Name: "f32-sgd"}, 1e-5},
	{equivCase{Name: "f32-adamw", Adam: true}, 1e-5},
}

// TestReplicasMatchOneReplica: the GPT trained on 2 and 3 replicas, and on
// 2 workers of one replica each (a loopback cluster of processes), ends
// with one replica's weights and optimizer state.
func TestReplicasMatchOneReplica(t *testing.T) {
	if spec, ok := loopbacktest.Worker(envWorker); ok {
		workerCases(t, spec)
		return
	}
	var workers map[string]map[string][]float64
	var werr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); workers, werr = runWorkers(2) }()
	defer wg.Wait()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := train(t, c.equivCase, strategy.WithReplicas(1))
			if _, ok := want["gpt/block_1/attn/query/kernel"]; !ok {
				t.Fatalf("no gpt/block_1/attn/query/kernel among the variables")
			}
			for _, n := range []int{2, 3} {
				strategytest.CheckSame(t, fmt.Sprintf("%d replicas", n), train(t, c.equivCase, strategy.WithReplicas(n)), want, c.tol)
			}
			wg.Wait()
			if werr != nil {
				t.Fatal(werr)
			}
			strategytest.CheckSame(t, "2 workers x 1 replica", workers[c.Name], want, c.tol)
		})
	}
}

// runWorkers runs every case on size worker processes of one loopback
// cluster and returns worker 0's variables per case, after checking that
// every worker holds the same.
func runWorkers(size int) (map[string]map[string][]float64, error) {
	res, err := loopbacktest.Run[map[string]map[string][]float64](size, "^TestReplicasMatchOneReplica$", envWorker)
	if err != nil {
		return nil, err
	}
	for r := 1; r < size; r++ {
		for name, vars := range res[0] {
			for v, vals := range vars {
				if fmt.Sprint(res[r][name][v]) != fmt.Sprint(vals) {
					return nil, fmt.Errorf("case %s: worker %d's %s differs from worker 0's", name, r, v)
				}
			}
		}
	}
	return res[0], nil
}

// workerCases is one worker process: every case on one replica of a
// multi-worker strategy.
func workerCases(t *testing.T, spec loopbacktest.Spec) {
	c := spec.Join(t)
	res := map[string]map[string][]float64{}
	for _, cs := range cases {
		res[cs.Name] = train(t, cs.equivCase, strategy.WithCluster(c), strategy.WithReplicas(1))
	}
	if err := spec.Write(res); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput: the errors a user of the model meets name what was wrong,
// and the model trains on after each.
func TestBadInput(t *testing.T) {
	if _, err := gpt.New("g", gpt.Config{Vocab: 10, Context: 8, Layers: 1, Heads: 3, Width: 16}); err == nil ||
		err.Error() != "gpt: want Heads dividing Width, got 3 heads for a width of 16" {
		t.Errorf("3 heads for 16: %v", err)
	}
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	var model *gpt.GPT
	s.Scope(func() { model, _ = gpt.New("g", tiny) })
	fwd := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return model.Call(ctx, x, false) }
	batch := func(steps int) any {
		it := s.DistributeDataset(data.FromTensorSlices(data.NewTensor([]int{2, steps}, make([]float64, 2*steps))).Batch(2)).Iter()
		it.Next()
		return it.Batch()
	}
	_, err := s.TryRun(fwd, batch(9))
	if !errors.Is(err, nn.ErrShape) || !strings.Contains(err.Error(), "sequence of 9 longer than the table's 8 positions") {
		t.Errorf("a sequence of 9 for a context of 8: %v", err)
	}
	res, err := s.TryRun(fwd, batch(8))
	if err != nil {
		t.Fatalf("the model after the error: %v", err)
	}
	if got := fmt.Sprint(res.Values()[0].Shape); got != "[1 8 13]" {
		t.Errorf("logits of a replica %s, want [1 8 13]", got)
	}
}

// ExampleGPT trains the tiny GPT on a repeating text for a few steps on 2
// replicas and then generates from it.
func ExampleGPT() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(1))
	defer s.Close()
	text := strings.Repeat("abcdefg ", 40)
	vocab := data.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	ds, _ := data.TextWindows(ids, 8, -1, 1)
	var model *gpt.GPT
	var opt nn.Optimizer
	s.Scope(func() {
		model, _ = gpt.New("gpt", gpt.Config{Vocab: vocab.Size(), Context: 8, Layers: 1, Heads: 2, Width: 16})
		opt = nn.NewAdamW(1e-2)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
	it := s.DistributeDataset(ds.Batch(8)).Iter()
	var first, last float64
	for i := range 150 {
		it.Next()
		loss := s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar()
		if i == 0 {
			first = loss
		}
		last = loss
	}
	fmt.Println("loss fell below a tenth:", last < first/10)
	prompt, _ := vocab.Encode("abc")
	out, _ := nn.NewGenerator(model, 8).Generate(prompt, 12, nn.Temperature(0))
	fmt.Printf("%q\n", vocab.Decode(out))
	// Output:
	// loss fell below a tenth: true
	// "defg abcdefg"
}
