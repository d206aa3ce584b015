//go:build mpi && cgo

package mpi

import (
	"cmp"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/bench"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/strategy"
)

// BenchmarkAllReduceF32 times AllReduceF32 on buffers of 1K, 64K, 670K (the
// MLP's gradient) and 16M floats. Every rank must run the same number of
// iterations, so run it with a fixed count, -test.benchtime=100x; ranks
// that would run different counts stop with an error instead of hanging.
// Besides each rank's own time it reports the slowest rank's time per call
// and the bus bandwidth that time gives, as nccl-tests define it:
// busbw = 2·(n−1)/n · bytes / time for n ranks.
func BenchmarkAllReduceF32(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1K", 1 << 10}, {"64K", 1 << 16}, {"670K", 670_000}, {"16M", 1 << 24}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * c.n))
			b.ReportAllocs()
			slowest := timeAllReduce(b, c.n)
			p := float64(world.Size())
			b.ReportMetric(slowest*1e9, "slowest-ns/op")
			b.ReportMetric(2*(p-1)/p*float64(4*c.n)/slowest/1e9, "busbw-GB/s")
		})
	}
}

// timeAllReduce times b.N calls of AllReduceF32 on n floats, after one
// untimed (connections are set up on first use), and returns the slowest
// rank's seconds per call.
func timeAllReduce(b *testing.B, n int) float64 {
	sameN(b)
	buf := make([]float32, n)
	if err := world.AllReduceF32(buf); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := world.AllReduceF32(buf); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	return slowest(b, elapsed.Seconds()) / float64(b.N)
}

// sameN stops the benchmark, on every rank, unless every rank runs b.N
// iterations: the collectives would hang otherwise.
func sameN(b *testing.B) {
	iters, err := world.AllGather([]float64{float64(b.N)})
	if err != nil {
		b.Fatal(err)
	}
	for _, it := range iters {
		if it[0] != float64(b.N) {
			b.Fatalf("ranks chose different iteration counts %v: run with -test.benchtime=Nx", iters)
		}
	}
}

// slowest returns the largest of every rank's d.
func slowest(b *testing.B, d float64) float64 {
	all, err := world.AllGather([]float64{d})
	if err != nil {
		b.Fatal(err)
	}
	return slices.MaxFunc(all, func(x, y []float64) int { return cmp.Compare(x[0], y[0]) })[0]
}

// timedCluster is the World with the time spent inside its all-reductions
// added up: what a training step spends summing gradients across workers.
// With barrier, the ranks first wait for each other, untimed, so the time
// is the transfer's alone, without the wait for the last rank to arrive.
// The strategy calls it from one goroutine at a time.
type timedCluster struct {
	*World
	barrier bool
	calls   int
	bytes   int64
	spent   time.Duration
}

func (c *timedCluster) wait() {
	if c.barrier {
		c.World.AllGather(nil)
	}
}

func (c *timedCluster) AllReduceF32(buf []float32) error {
	c.wait()
	start := time.Now()
	err := c.World.AllReduceF32(buf)
	c.spent += time.Since(start)
	c.calls++
	c.bytes += int64(4 * len(buf))
	return err
}

func (c *timedCluster) AllReduceF64(buf []float64) error {
	c.wait()
	start := time.Now()
	err := c.World.AllReduceF64(buf)
	c.spent += time.Since(start)
	c.calls++
	c.bytes += int64(8 * len(buf))
	return err
}

// BenchmarkStepAllReduce times the cross-worker reduction inside a
// multi-worker training step of the MLP 784-512-512-10 in float32 (global
// batch 256, Adam, one replica per rank, the cores shared among the ranks),
// against one AllReduceF32 outside any step of the same bytes per step.
// Run it with a fixed count, -test.benchtime=100x (b.N steps, and as many
// calls of the bare reduction). Both report the slowest rank's reduction
// time per step and busbw = 2·(n−1)/n · bytes / time; step also reports
// the all-reductions per step and their share of the step's time; it
// counts the first step (the trace) in its reductions but not in its
// samples/s. step's time includes waiting for the last rank to arrive;
// step-barrier lines the ranks up first (timedCluster.barrier) and times
// the transfer alone.
func BenchmarkStepAllReduce(b *testing.B) {
	dims := []int{784, 512, 512, 10}
	params := 0
	for i := 0; i+1 < len(dims); i++ {
		params += dims[i]*dims[i+1] + dims[i+1]
	}
	p := float64(world.Size())
	step := func(b *testing.B, barrier bool) {
		sameN(b)
		prev := blas.Threads()
		defer blas.SetThreads(prev)
		blas.SetThreads(max(1, runtime.NumCPU()/world.Size()))
		c := &timedCluster{World: world, barrier: barrier}
		// Connections are set up on first use.
		if err := world.AllReduceF32(make([]float32, params)); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		rate, err := bench.MLP(1, dims, 256, b.N, graph.Float32, strategy.WithCluster(c), strategy.WithBLASThreads(false), strategy.WithSeed(1))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		steps := float64(b.N + 1)
		if got, want := c.bytes, int64(4*params)*int64(b.N+1); got != want {
			b.Fatalf("the steps all-reduced %d bytes, want %d (%d parameters, %d steps)", got, want, params, b.N+1)
		}
		perStep := slowest(b, c.spent.Seconds()) / steps
		stepTime := 256 / rate
		b.ReportMetric(perStep*1e9, "allreduce-ns/step")
		b.ReportMetric(float64(c.calls)/steps, "allreduces/step")
		b.ReportMetric(100*perStep/stepTime, "allreduce-%")
		b.ReportMetric(2*(p-1)/p*float64(4*params)/perStep/1e9, "busbw-GB/s")
		b.ReportMetric(rate, "samples/s")
	}
	b.Run("step", func(b *testing.B) { step(b, false) })
	b.Run("step-barrier", func(b *testing.B) { step(b, true) })
	b.Run("bare", func(b *testing.B) {
		perCall := timeAllReduce(b, params)
		b.ReportMetric(perCall*1e9, "allreduce-ns/step")
		b.ReportMetric(2*(p-1)/p*float64(4*params)/perCall/1e9, "busbw-GB/s")
	})
}
