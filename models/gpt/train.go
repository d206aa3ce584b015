package gpt

import (
	"fmt"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// Schedule is a training run of the benchmark: nanoGPT's recipe as
// shared/bench/torch_gpt.py runs it. AdamW (β = 0.9, 0.99, ε = 1e-8, weight
// decay on the matrices only), the gradients clipped at global norm 1, the
// rate rising linearly for Warmup iterations, LR·(it+1)/(Warmup+1), then
// falling along half a cosine to MinLR at Iters.
type Schedule struct {
	Iters       int     // optimizer steps
	Batch       int     // global batch, in windows of Context characters
	LR, MinLR   float64 // the peak rate and the last
	Warmup      int     // iterations of linear warm-up
	WeightDecay float64 // AdamW's, on the matrices
	EvalEvery   int     // iterations between two estimates of the losses
	EvalIters   int     // batches each estimate averages
	Seed        uint64  // of the windows; the model's weights follow the strategy's seed
}

// DefaultSchedule returns the schedule of a small character-level GPT for
// iters iterations, the one gotrain bench gpt trains with (and its PyTorch
// twin): global batch 12, rate 1e-3 to 1e-4 after 100 iterations of
// warm-up, weight decay 0.1, the losses estimated on 20 batches every 250
// iterations, seed 1337.
func DefaultSchedule(iters int) Schedule {
	return Schedule{Iters: iters, Batch: 12, LR: 1e-3, MinLR: 1e-4, Warmup: 100, WeightDecay: 0.1,
		EvalEvery: 250, EvalIters: 20, Seed: 1337}
}

// Validate reports what is wrong with s, naming the fields.
func (s Schedule) Validate() error {
	switch {
	case s.Iters < 1 || s.Batch < 1 || s.EvalEvery < 1 || s.EvalIters < 1:
		return fmt.Errorf("gpt: want Iters, Batch, EvalEvery and EvalIters ≥ 1, got %d, %d, %d and %d", s.Iters, s.Batch, s.EvalEvery, s.EvalIters)
	case s.Warmup < 0:
		return fmt.Errorf("gpt: want Warmup ≥ 0, got %d", s.Warmup)
	case !(s.LR > 0 && s.MinLR >= 0 && s.MinLR <= s.LR):
		return fmt.Errorf("gpt: want 0 ≤ MinLR ≤ LR and LR > 0, got MinLR %g and LR %g", s.MinLR, s.LR)
	case !(s.WeightDecay >= 0):
		return fmt.Errorf("gpt: want WeightDecay ≥ 0, got %g", s.WeightDecay)
	}
	return nil
}

// rate is the schedule as an nn.Schedule. Keras's warm-up runs from Initial
// at step 0 to WarmupTarget at step Warmup, so starting from LR/(Warmup+1)
// gives LR·(step+1)/(Warmup+1), and Alpha = MinLR/LR ends the cosine at
// MinLR. A run no longer than its warm-up only warms up, as torch_gpt.py's.
func (s Schedule) rate() nn.CosineDecay {
	return nn.CosineDecay{Initial: s.LR / float64(s.Warmup+1), WarmupSteps: s.Warmup, WarmupTarget: s.LR,
		DecaySteps: max(1, s.Iters-s.Warmup), Alpha: s.MinLR / s.LR}
}

// Eval is one estimate of the losses: the mean over EvalIters random
// batches of training and of validation windows, after Iter iterations
// that trained for TrainTime (estimates excluded).
type Eval struct {
	Iter               int
	TrainLoss, ValLoss float64
	TrainTime          time.Duration
}

// Result is what Train measured.
type Result struct {
	Params int  // the model's weights
	Last   Eval // after the last iteration
}

// TokensPerSec returns the characters trained on per second of training
// steps, given the global batch and context.
func (r Result) TokensPerSec(batch, context int) float64 {
	return float64(r.Last.Iter*batch*context) / r.Last.TrainTime.Seconds()
}

// Train trains a GPT of configuration c on ids (a text's character ids,
// each < c.Vocab) under st, as torch_gpt.py does: the first 90% of ids
// train, the last 10% validate, every batch is random windows of c.Context
// ids (data.TextWindows, seeded with sch.Seed; the estimates draw theirs
// with sch.Seed+1 and +2). report, if not nil, gets the estimate made before
// the first iteration, every EvalEvery iterations, and after the last.
// Only the training steps are timed; the first one, which traces and
// compiles the step, is timed too, as torch's first step is.
//
// It returns an error if c or sch is invalid, if a split is no longer than
// a window, or if a step fails.
func Train(st *strategy.Mirrored, c Config, ids []int, sch Schedule, report func(Eval)) (res Result, err error) {
	if err := c.Validate(); err != nil {
		return res, err
	}
	if err := sch.Validate(); err != nil {
		return res, err
	}
	train, val := data.TrainValSplit(ids, 0.9)
	batches := func(text []int, seed uint64) (*strategy.DistributedIterator, error) {
		ds, err := data.TextWindows(text, c.Context, -1, seed)
		if err != nil {
			return nil, fmt.Errorf("gpt: Train: %w", err)
		}
		return st.DistributeDataset(ds.Batch(sch.Batch)).Iter(), nil
	}
	trainIt, err := batches(train, sch.Seed)
	if err != nil {
		return res, err
	}
	defer trainIt.Close()
	// The estimates read windows of their own, so that estimating does not
	// change the training batches.
	evalTrain, err := batches(train, sch.Seed+1)
	if err != nil {
		return res, err
	}
	defer evalTrain.Close()
	evalVal, err := batches(val, sch.Seed+2)
	if err != nil {
		return res, err
	}
	defer evalVal.Close()

	var model *GPT
	var opt *nn.AdamW
	st.Scope(func() {
		model, err = New("gpt", c)
		opt = nn.NewAdamW(0, nn.WithBetas(0.9, 0.99), nn.WithEpsilon(1e-8), nn.WithWeightDecay(sch.WeightDecay),
			nn.WithClipGlobalNorm(1), nn.WithSchedule(sch.rate()))
	})
	if err != nil {
		return res, err
	}
	xent := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	lossOf := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor, training bool) *nn.Tensor {
		return nn.ComputeAverageLoss(xent.Call(y, model.Call(ctx, x, training)), sch.Batch)
	}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := lossOf(ctx, x, y, true)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
	evalStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor { return lossOf(ctx, x, y, false) }
	estimate := func(it *strategy.DistributedIterator) (float64, error) {
		var sum float64
		for range sch.EvalIters {
			if !it.Next() {
				return 0, fmt.Errorf("gpt: Train: no batch to estimate the loss: %v", it.Err())
			}
			out, err := st.TryRun(evalStep, it.Batch())
			if err != nil {
				return 0, err
			}
			sum += st.Reduce(strategy.Sum, out).Scalar()
		}
		return sum / float64(sch.EvalIters), nil
	}

	var spent time.Duration
	for it := 0; ; it++ {
		if it%sch.EvalEvery == 0 || it == sch.Iters {
			e := Eval{Iter: it, TrainTime: spent}
			if e.TrainLoss, err = estimate(evalTrain); err != nil {
				return res, err
			}
			if e.ValLoss, err = estimate(evalVal); err != nil {
				return res, err
			}
			res.Last = e
			if report != nil {
				report(e)
			}
		}
		if it == sch.Iters {
			break
		}
		start := time.Now()
		if !trainIt.Next() {
			return res, fmt.Errorf("gpt: Train: no training batch: %v", trainIt.Err())
		}
		if _, err := st.TryRun(step, trainIt.Batch()); err != nil {
			return res, fmt.Errorf("gpt: Train: iteration %d: %w", it, err)
		}
		spent += time.Since(start)
	}
	for _, v := range model.Variables() {
		res.Params += v.Len()
	}
	return res, nil
}
