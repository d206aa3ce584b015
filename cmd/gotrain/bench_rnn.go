package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// benchRNN is gotrain bench rnn: a character GRU (embedding, GRU returning
// every step, a dense layer per step) trained with Adam on random windows
// of ids, and scripts/torch_rnn.py training the same model with PyTorch,
// run in turns in one invocation; it prints each run's samples/s and the
// ratio of the medians.
func benchRNN(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gotrain bench rnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Int("batch", 64, "global batch, in windows")
	seq := fs.Int("seq", 32, "window length, in steps")
	vocab := fs.Int("vocab", 64, "vocabulary size")
	embd := fs.Int("embd", 32, "embedding width")
	units := fs.Int("units", 128, "GRU units")
	steps := fs.Int("steps", 100, "timed training steps")
	warmup := fs.Int("warmup", 5, "untimed steps first (the trace)")
	replicas := fs.Int("replicas", 2, "number of replicas")
	threads := fs.Int("threads", 0, "BLAS threads per replica; 0 divides the cores among replicas")
	rounds := fs.Int("rounds", 2, "runs of each, in turns")
	torchScript := fs.String("torch", "scripts/torch_rnn.py", `PyTorch's twin, run by --python; "" runs gotrain's alone`)
	python := fs.String("python", "/usr/bin/python3", "the Python with torch")
	torchThreads := fs.Int("torch-threads", 2, "PyTorch's intra-op threads")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of gotrain's runs to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *batch < 1 || *seq < 1 || *vocab < 2 || *embd < 1 || *units < 1 || *steps < 1 || *warmup < 0 || *replicas < 1 || *threads < 0 || *rounds < 1 {
		return errors.New("gotrain bench rnn: want positive sizes, steps, replicas and rounds (and vocab ≥ 2)")
	}
	if *torchScript != "" {
		if _, err := os.Stat(*torchScript); err != nil {
			return fmt.Errorf("gotrain bench rnn: --torch: %w (run from the repository root, or pass --torch \"\")", err)
		}
	}
	stop, err := startCPUProfile("rnn", *cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	perReplica := max(1, runtime.NumCPU() / *replicas)
	if *threads > 0 {
		prev := blas.Threads()
		blas.SetThreads(*threads)
		defer blas.SetThreads(prev)
		perReplica = *threads
	}
	cfg := rnnBench{batch: *batch, seq: *seq, vocab: *vocab, embd: *embd, units: *units, steps: *steps, warmup: *warmup,
		replicas: *replicas, fixedThreads: *threads > 0}
	fmt.Fprintf(stdout, "== GRU %d units over %d steps, embedding %d, vocabulary %d, global batch %d, Adam; gotrain %d replicas × %d threads, PyTorch %d threads\n",
		*units, *seq, *embd, *vocab, *batch, *replicas, perReplica, *torchThreads)
	var ours, theirs []float64
	for r := range *rounds {
		rate, loss, err := cfg.run()
		if err != nil {
			return fmt.Errorf("gotrain bench rnn: %w", err)
		}
		ours = append(ours, rate)
		fmt.Fprintf(stdout, "round %d: gotrain rnn: %.1f samples/s, %.2f ms/step, loss %.4f\n", r+1, rate, 1000*float64(*batch)/rate, loss)
		if *torchScript == "" {
			continue
		}
		rate, line, err := runTorchRNN(*python, *torchScript, *torchThreads, cfg)
		if err != nil {
			return fmt.Errorf("gotrain bench rnn: %w", err)
		}
		theirs = append(theirs, rate)
		fmt.Fprintf(stdout, "round %d: %s\n", r+1, line)
	}
	if theirs != nil {
		fmt.Fprintf(stdout, "gotrain rnn: %.1f samples/s, PyTorch %.1f samples/s (medians of %d): %.2f× PyTorch %d threads\n",
			median(ours), median(theirs), *rounds, median(ours)/median(theirs), *torchThreads)
	}
	return nil
}

// rnnBench is the benchmark's model and schedule.
type rnnBench struct {
	batch, seq, vocab, embd, units, steps, warmup, replicas int
	fixedThreads                                            bool // --threads set the BLAS threads
}

// run trains the model for warmup and then steps steps on a new strategy
// and returns the timed steps' samples/s and the last loss.
func (c rnnBench) run() (rate, loss float64, err error) {
	opts := []strategy.Option{strategy.WithReplicas(c.replicas), strategy.WithSeed(1)}
	if c.fixedThreads {
		opts = append(opts, strategy.WithBLASThreads(false))
	}
	s := strategy.NewMirrored(opts...)
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	text := make([]int, 20000)
	for i := range text {
		text[i] = r.IntN(c.vocab)
	}
	total := c.warmup + c.steps
	ds, err := data.TextWindows(text, c.seq, total*c.batch, 3)
	if err != nil {
		return 0, 0, err
	}
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Embedding(c.vocab, c.embd), nn.GRU(c.units, nn.ReturnSequences()), nn.Dense(c.vocab))
		opt = nn.NewAdam(1e-3)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	it := s.DistributeDataset(ds.Batch(c.batch)).Iter()
	var start time.Time
	for i := 0; it.Next(); i++ {
		if i == c.warmup {
			start = time.Now()
		}
		res, err := s.TryRun(step, it.Batch())
		if err != nil {
			return 0, 0, err
		}
		if i == total-1 {
			loss = s.Reduce(strategy.Sum, res).Scalar()
		}
	}
	if err := it.Err(); err != nil {
		return 0, 0, err
	}
	return float64(c.steps*c.batch) / time.Since(start).Seconds(), loss, nil
}

// torchRNNRate finds the samples/s of torch_rnn.py's line, which ends with it.
var torchRNNRate = regexp.MustCompile(`samples/s ([0-9.]+)\s*$`)

// runTorchRNN runs the PyTorch twin with c's model and schedule and
// returns its samples/s and its report line.
func runTorchRNN(python, script string, threads int, c rnnBench) (float64, string, error) {
	return runTwin(torchRNNRate, python, script, "--batch", strconv.Itoa(c.batch), "--seq", strconv.Itoa(c.seq),
		"--vocab", strconv.Itoa(c.vocab), "--embd", strconv.Itoa(c.embd), "--units", strconv.Itoa(c.units),
		"--steps", strconv.Itoa(c.steps), "--warmup", strconv.Itoa(c.warmup), "--threads", strconv.Itoa(threads))
}
