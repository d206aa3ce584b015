//go:build mpi && cgo

package mpi

import (
	"cmp"
	"slices"
	"testing"
	"time"
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
			iters, err := world.AllGather([]float64{float64(b.N)})
			if err != nil {
				b.Fatal(err)
			}
			for _, it := range iters {
				if it[0] != float64(b.N) {
					b.Fatalf("ranks chose different iteration counts %v: run with -test.benchtime=Nx", iters)
				}
			}
			buf := make([]float32, c.n)
			b.SetBytes(int64(4 * c.n))
			b.ReportAllocs()
			// One call first: connections are set up on first use.
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
			all, err := world.AllGather([]float64{elapsed.Seconds()})
			if err != nil {
				b.Fatal(err)
			}
			slowest := slices.MaxFunc(all, func(x, y []float64) int { return cmp.Compare(x[0], y[0]) })[0] / float64(b.N)
			p := float64(world.Size())
			b.ReportMetric(slowest*1e9, "slowest-ns/op")
			b.ReportMetric(2*(p-1)/p*float64(4*c.n)/slowest/1e9, "busbw-GB/s")
		})
	}
}
