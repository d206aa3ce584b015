package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/models/resnet"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// benchResNet is gotrain bench resnet: models/resnet's training step
// (forward, backward, Adam) on random 28x28 images, on --replicas replicas
// and on one replica with one thread, interleaved --rounds times with
// scripts/torch_resnet.py (the same model in PyTorch) in each of its
// fastest settings, then the ratios of the median samples/s, against the
// best of PyTorch's; then each convolution of the step, timed (benchConvs).
func benchResNet(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gotrain bench resnet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	replicas := fs.Int("replicas", runtime.NumCPU(), "number of replicas of the main run")
	batch := fs.Int("batch", 128, "global batch, in images")
	steps := fs.Int("steps", 30, "timed training steps")
	warmup := fs.Int("warmup", 3, "untimed steps first (the first traces and compiles)")
	stem := fs.Int("stem-stride", 1, "the stem convolution's stride")
	rounds := fs.Int("rounds", 2, "interleaved rounds of every run; the ratios take the medians")
	torch := fs.String("torch", "scripts/torch_resnet.py", "the PyTorch script to run beside; empty for none")
	torchThreads := fs.Int("torch-threads", 2, "the PyTorch script's threads, and its DDP processes of one thread each")
	convs := fs.Bool("convs", true, "time each convolution of the step on one thread, beside oneDNN's own figure and the FMA peak")
	syncBN := fs.Bool("sync-bn", true, "synchronize the batch statistics across replicas (false: each replica normalizes its shard)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the gotrain runs to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *replicas < 1 || *batch < 1 || *steps < 1 || *warmup < 1 || *stem < 1 || *rounds < 1 {
		return fmt.Errorf("gotrain bench resnet: want --replicas, --batch, --steps, --warmup, --stem-stride and --rounds ≥ 1, got %d, %d, %d, %d, %d and %d",
			*replicas, *batch, *steps, *warmup, *stem, *rounds)
	}
	stop, err := startCPUProfile("resnet", *cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	cfg := resnet.Small(10)
	cfg.StemStride, cfg.SyncBatchNorm = *stem, *syncBN
	fmt.Fprintf(stdout, "== ResNet 16/32/64 x 2 blocks, stem stride %d, batch %d, sync batch norm %v, Adam, float32: %d timed steps, %d rounds; load %s\n",
		*stem, *batch, *syncBN, *steps, *rounds, loadAvg())
	var many, one []float64
	torchRuns := torchResNetRuns(*torchThreads)
	ref := make([][]float64, len(torchRuns))
	for range *rounds {
		r, err := timeResNet(cfg, *replicas, 0, *batch, *warmup, *steps, stdout)
		if err != nil {
			return err
		}
		many = append(many, r)
		if r, err = timeResNet(cfg, 1, 1, *batch, *warmup, *steps, stdout); err != nil {
			return err
		}
		one = append(one, r)
		for i, run := range torchRuns {
			if *torch == "" {
				break
			}
			r, err := runTorchResNet(*torch, run.args, *batch, *warmup, *steps, *stem, stdout)
			if err != nil {
				return err
			}
			ref[i] = append(ref[i], r)
		}
	}
	fmt.Fprintf(stdout, "load after: %s\n", loadAvg())
	fmt.Fprintf(stdout, "ratio gotrain %d replicas / 1 replica on 1 thread: %.2fx (medians; target ≥ 1.7 for 2)\n", *replicas, median(many)/median(one))
	if *torch != "" {
		best := 0
		for i := range ref {
			if median(ref[i]) > median(ref[best]) {
				best = i
			}
		}
		fmt.Fprintf(stdout, "ratio gotrain %d replicas / torch's best, %s: %.2fx (medians; target ≥ 1.2)\n",
			*replicas, torchRuns[best].name, median(many)/median(ref[best]))
	}
	if *convs {
		return benchConvs(cfg, *batch, stdout)
	}
	return nil
}

// torchRun is one setting of the PyTorch twin.
type torchRun struct {
	name string
	args []string
}

// torchResNetRuns are the PyTorch settings the ResNet is compared with on
// threads cores: NCHW and channels_last (its fastest CPU layout) on one
// process, and DistributedDataParallel on one process per core.
func torchResNetRuns(threads int) []torchRun {
	t := strconv.Itoa(threads)
	return []torchRun{
		{fmt.Sprintf("%d threads", threads), []string{"--threads", t}},
		{fmt.Sprintf("%d threads, channels_last", threads), []string{"--threads", t, "--channels-last"}},
		{fmt.Sprintf("DDP %d x 1 thread, channels_last", threads), []string{"--threads", "1", "--ddp", t, "--channels-last"}},
	}
}

// timeResNet trains a fresh model on replicas replicas for warmup and then
// steps steps, prints its line and returns the timed steps' samples/s.
// threads > 0 sets the BLAS threads per replica; 0 divides the cores.
func timeResNet(cfg resnet.Config, replicas, threads, batch, warmup, steps int, stdout io.Writer) (float64, error) {
	opts := []strategy.Option{strategy.WithReplicas(replicas), strategy.WithSeed(1)}
	perReplica := max(1, runtime.NumCPU()/replicas)
	if threads > 0 {
		opts = append(opts, strategy.WithBLASThreads(false))
		prev := blas.Threads()
		blas.SetThreads(threads)
		defer blas.SetThreads(prev)
		perReplica = threads
	}
	s := strategy.NewMirrored(opts...)
	defer s.Close()
	x, y := data.RandomNormal(1, batch, 28, 28, 1), data.RandomInts(2, cfg.Classes, batch)
	var model *resnet.ResNet
	var opt nn.Optimizer
	var err error
	s.Scope(func() {
		model, err = resnet.New("resnet", cfg)
		opt = nn.NewAdam(1e-3)
	})
	if err != nil {
		return 0, err
	}
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), batch)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
	it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(batch).Repeat(warmup + steps)).Iter()
	var start time.Time
	for i := 0; it.Next(); i++ {
		if i == warmup {
			start = time.Now()
		}
		if _, err := s.TryRun(step, it.Batch()); err != nil {
			return 0, fmt.Errorf("gotrain bench resnet: %w", err)
		}
	}
	el := time.Since(start)
	rate := float64(steps*batch) / el.Seconds()
	params := 0
	for _, v := range nn.TrainableVariables(model) {
		params += v.Len()
	}
	fmt.Fprintf(stdout, "gotrain resnet: %d params, replicas %d, threads %d: %.0f samples/s, %.1f ms/step\n",
		params, replicas, perReplica, rate, 1000*el.Seconds()/float64(steps))
	return rate, nil
}

// torchResNetRate finds the samples/s of torch_resnet.py's line.
var torchResNetRate = regexp.MustCompile(`([0-9.]+) samples/s`)

// runTorchResNet runs the PyTorch script with Debian's python3, prints its
// line and returns its samples/s.
func runTorchResNet(script string, setting []string, batch, warmup, steps, stem int, stdout io.Writer) (float64, error) {
	rate, line, err := runTwin(torchResNetRate, "/usr/bin/python3", script, append(setting, "--batch", strconv.Itoa(batch),
		"--warmup", strconv.Itoa(warmup), "--steps", strconv.Itoa(steps), "--stem-stride", strconv.Itoa(stem))...)
	if err != nil {
		return 0, fmt.Errorf("gotrain bench resnet: %w (run with --torch '' to skip PyTorch)", err)
	}
	fmt.Fprintln(stdout, line)
	return rate, nil
}

// loadAvg is /proc/loadavg's three averages, or "unknown".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
