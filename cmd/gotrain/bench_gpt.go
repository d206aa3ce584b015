package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/models/gpt"
	"github.com/gotrain/gotrain/strategy"
)

// benchGPT is gotrain bench gpt: models/gpt trained on a text file with the
// schedule of shared/bench/torch_gpt.py, printing lines in that script's
// form so that the two compare side by side.
func benchGPT(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gotrain bench gpt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := gpt.DefaultSchedule(2000)
	dataPath := fs.String("data", "", "the text to train on (required)")
	iters := fs.Int("iters", def.Iters, "training iterations")
	batch := fs.Int("batch", def.Batch, "global batch, in windows")
	replicas := fs.Int("replicas", runtime.NumCPU(), "number of replicas")
	threads := fs.Int("threads", 0, "BLAS threads per replica; 0 divides the cores among replicas")
	dtype := fs.String("dtype", "f32", "f32 or f64")
	evalEvery := fs.Int("eval-every", def.EvalEvery, "iterations between loss estimates")
	evalIters := fs.Int("eval-iters", def.EvalIters, "batches per loss estimate")
	seed := fs.Uint64("seed", def.Seed, "seed of the windows and of the weights")
	small := gpt.Small(0)
	layers := fs.Int("layers", small.Layers, "transformer blocks")
	heads := fs.Int("heads", small.Heads, "attention heads")
	embd := fs.Int("embd", small.Width, "embedding width")
	block := fs.Int("block", small.Context, "context length, in characters")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataPath == "" {
		return errors.New("gotrain bench gpt: --data: want the path of a text file")
	}
	if *replicas < 1 || *threads < 0 {
		return fmt.Errorf("gotrain bench gpt: want --replicas ≥ 1 and --threads ≥ 0, got %d and %d", *replicas, *threads)
	}
	dt, err := parseDType("gpt", *dtype)
	if err != nil {
		return err
	}
	text, err := data.LoadText(*dataPath)
	if err != nil {
		return fmt.Errorf("gotrain bench gpt: %w", err)
	}
	vocab := data.NewCharVocab(text)
	ids, err := vocab.Encode(text)
	if err != nil {
		return fmt.Errorf("gotrain bench gpt: %w", err)
	}
	cfg := gpt.Config{Vocab: vocab.Size(), Context: *block, Layers: *layers, Heads: *heads, Width: *embd}
	sch := def
	sch.Iters, sch.Batch, sch.EvalEvery, sch.EvalIters, sch.Seed = *iters, *batch, *evalEvery, *evalIters, *seed

	opts := []strategy.Option{strategy.WithReplicas(*replicas), strategy.WithDType(dt), strategy.WithSeed(*seed)}
	perReplica := max(1, runtime.NumCPU() / *replicas)
	if *threads > 0 {
		opts = append(opts, strategy.WithBLASThreads(false))
		prev := blas.Threads()
		blas.SetThreads(*threads)
		defer blas.SetThreads(prev)
		perReplica = *threads
	}
	stop, err := startCPUProfile("gpt", *cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	st := strategy.NewMirrored(opts...)
	defer st.Close()
	start := time.Now()
	res, err := gpt.Train(st, cfg, ids, sch, func(e gpt.Eval) {
		fmt.Fprintf(stdout, "iter %d: train loss %.4f, val loss %.4f, train time %.1f s\n", e.Iter, e.TrainLoss, e.ValLoss, e.TrainTime.Seconds())
	})
	if err != nil {
		return fmt.Errorf("gotrain bench gpt: %w", err)
	}
	last := res.Last
	fmt.Fprintf(stdout, "gotrain gpt: %d params, replicas %d, threads %d: %.0f tokens/s, %.1f ms/iter, train loss %.4f, val loss %.4f, %.0f s\n",
		res.Params, *replicas, perReplica, res.TokensPerSec(sch.Batch, cfg.Context),
		1000*last.TrainTime.Seconds()/float64(last.Iter), last.TrainLoss, last.ValLoss, time.Since(start).Seconds())
	return nil
}
