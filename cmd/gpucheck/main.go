//go:build cuda

// Command gpucheck measures gotrain on an NVIDIA GPU: the cuBLAS
// sgemm peak, then the samples/s of training MLPs with Adam on one GPU
// replica, and each one's fraction of that peak, one line per figure. It is
// built by scripts/gpu-build.sh and run by scripts/gpu-check.sh. With
// GOTRAIN_GPU_FAKE=1 it runs against the fake CUDA libraries (package
// gputest) at small sizes, to check the script's logic without a GPU.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/gpu/gputest"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

func main() {
	fake := os.Getenv("GOTRAIN_GPU_FAKE") == "1"
	budget := flag.Duration("time", 3*time.Second, "time to spend on each figure")
	flag.Parse()
	if fake {
		dir, err := gputest.Fakes()
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	}
	dev, err := gpu.Open(0)
	if err != nil {
		fail(err)
	}
	free, total, _ := dev.MemInfo()
	fmt.Printf("device: %s, %d MiB free of %d MiB\n", dev.Name(), free>>20, total>>20)
	size := 8192
	if fake {
		size, *budget = 128, 200*time.Millisecond
	}
	peak, err := sgemmPeak(dev, size, *budget)
	if err != nil {
		fail(err)
	}
	fmt.Printf("sgemm peak %dx%dx%d: %.1f GFLOP/s\n", size, size, size, peak/1e9)

	type model struct {
		in     int
		widths []int
	}
	models := []model{{784, []int{512, 512, 10}}, {4096, []int{4096, 4096, 10}}}
	batches := []int{256, 4096}
	if fake {
		models = []model{{64, []int{32, 32, 10}}}
		batches = []int{32}
	}
	for _, m := range models {
		for _, b := range batches {
			sps, flops, err := train(m.in, m.widths, b, *budget)
			if err != nil {
				fail(err)
			}
			fmt.Printf("mlp %d-%s batch %d adam float32 gpu:0: %.0f samples/s, %.1f GFLOP/s, %.1f%% of sgemm peak\n",
				m.in, join(m.widths), b, sps, sps*flops/1e9, 100*sps*flops/peak)
		}
	}
}

func join(ws []int) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += "-"
		}
		s += fmt.Sprint(w)
	}
	return s
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gpucheck:", err)
	os.Exit(1)
}

// sgemmPeak returns the float32 FLOP/s of n×n×n products on dev.
func sgemmPeak(dev *gpu.Device, n int, budget time.Duration) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := dev.Bind(); err != nil {
		return 0, err
	}
	s, err := dev.NewStream()
	if err != nil {
		return 0, err
	}
	defer s.Destroy()
	h, err := gpu.NewHandle(s)
	if err != nil {
		return 0, err
	}
	defer h.Destroy()
	var bufs [3]gpu.Ptr
	for i := range bufs {
		if bufs[i], err = dev.Alloc(n * n * 4); err != nil {
			return 0, err
		}
		defer dev.Free(bufs[i])
		if err := s.Memset32(bufs[i], 0x3c000000, n*n); err != nil { // 2⁻⁷
			return 0, err
		}
	}
	gemm := func() error {
		return h.Gemm32(false, false, n, n, n, 1, bufs[0], n, bufs[1], n, 0, bufs[2], n)
	}
	if err := gemm(); err != nil { // warm up
		return 0, err
	}
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	best := 0.0
	for start := time.Now(); time.Since(start) < budget; {
		const reps = 10
		t := time.Now()
		for range reps {
			if err := gemm(); err != nil {
				return 0, err
			}
		}
		if err := s.Synchronize(); err != nil {
			return 0, err
		}
		best = max(best, reps*2*float64(n)*float64(n)*float64(n)/time.Since(t).Seconds())
	}
	return best, nil
}

// train trains an MLP of the widths on in features with Adam on gpu:0 in
// global batches of batch, for about budget after two warm-up steps, and
// returns the samples/s and the FLOPs per sample of a training step (2 for
// the forward product, 4 for the backward ones, per weight).
func train(in int, widths []int, batch int, budget time.Duration) (float64, float64, error) {
	s := strategy.NewMirrored(strategy.WithDevices("gpu:0"), strategy.WithCheckNumerics(false))
	defer s.Close()
	x := data.RandomNormal(1, batch, in)
	y := data.RandomInts(2, widths[len(widths)-1], batch)
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(batch).Repeat(-1))
	var model *nn.Sequential
	var opt nn.Optimizer
	flops := 0.0
	s.Scope(func() {
		var layers []nn.Layer
		prev := in
		for i, w := range widths {
			act := nn.ReLU
			if i == len(widths)-1 {
				act = nn.Linear
			}
			layers = append(layers, nn.Dense(w, act))
			flops += 6 * float64(prev) * float64(w)
			prev = w
		}
		model = nn.NewSequential(layers...)
		opt = nn.NewAdam(0.001)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), batch)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	it := dist.Iter()
	defer it.Close()
	steps := 0
	var start time.Time
	for it.Next() {
		if _, err := s.TryRun(step, it.Batch()); err != nil {
			return 0, 0, err
		}
		steps++
		if steps == 2 {
			start = time.Now()
		}
		if steps > 2 && time.Since(start) >= budget {
			break
		}
	}
	if err := it.Err(); err != nil {
		return 0, 0, err
	}
	return float64((steps-2)*batch) / time.Since(start).Seconds(), flops, nil
}
