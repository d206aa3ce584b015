package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/dnnl"
	"github.com/gotrain/gotrain/internal/loops"
	"github.com/gotrain/gotrain/models/resnet"
)

// convRow is one convolution shape of a step and the primitives the step
// runs for it, forward and gradients, in dnnl.Kind order.
type convRow struct {
	g      dnnl.Geometry
	layers int // convolutions of this shape in the step
	convs  [3]*dnnl.Conv
}

// benchConvs prints, for each convolution shape of the ResNet's step on one
// replica and one thread, the milliseconds and GFLOP/s of its forward and
// gradient primitives as a step runs them (through gotrain's binding, with
// the weights' reorders) and of oneDNN's primitives alone, beside the FMA
// peak of one core and of all cores at once, measured in the same run.
func benchConvs(cfg resnet.Config, batch int, stdout io.Writer) error {
	var mu sync.Mutex
	byShape := map[dnnl.Geometry]*convRow{}
	restore := graph.ObserveConvs(func(_ string, c *dnnl.Conv) {
		if c == nil {
			return // the im2col fallback, which the row's missing kind shows
		}
		mu.Lock()
		defer mu.Unlock()
		r := byShape[c.Geometry()]
		if r == nil {
			r = &convRow{g: c.Geometry()}
			byShape[c.Geometry()] = r
		}
		if c.Kind() == dnnl.Forward {
			r.layers++
		}
		if r.convs[c.Kind()] == nil {
			r.convs[c.Kind()] = c
		}
	})
	_, err := timeResNet(cfg, 1, 1, batch, 1, 1, io.Discard)
	restore()
	if err != nil {
		return err
	}
	if len(byShape) == 0 {
		conv, _ := graph.ConvBackend()
		fmt.Fprintf(stdout, "no oneDNN convolutions to time: float32 convolutions run on %s\n", conv)
		return nil
	}
	// oneDNN uses the widest vectors the CPU has; the table's %peak is
	// against them.
	one := 0.0
	for _, lanes := range []int{8, 16} {
		p := loops.FMAPeak(lanes, 300*time.Millisecond)
		if p == 0 {
			continue
		}
		one = p
		fmt.Fprintf(stdout, "FMA peak (float32, %d lanes): one core %.1f GFLOP/s; %d cores at once %.1f GFLOP/s each\n",
			lanes, p, runtime.NumCPU(), allCoresFMAPeak(lanes, 300*time.Millisecond))
	}
	rows := slices.SortedFunc(maps.Values(byShape), func(a, b *convRow) int {
		// The step's work first: a shape's layers times its own.
		return cmp.Or(cmp.Compare(float64(b.layers)*b.g.Flops(), float64(a.layers)*a.g.Flops()), strings.Compare(a.g.String(), b.g.String()))
	})
	fmt.Fprintf(stdout, "convolutions of the step, batch %d, 1 thread: forward + gradients (fwd/bwd-data/bwd-weights)\n", batch)
	fmt.Fprintf(stdout, "%-80s %6s %9s %9s %9s %11s %6s  %s\n", "shape", "layers", "ms step", "ms oneDNN", "GF/s step", "GF/s oneDNN", "%peak", "implementations")
	var sumCall, sumPrim time.Duration
	var sumFlops float64
	for _, r := range rows {
		var call, prim time.Duration
		var flops float64
		var impls []string
		for _, c := range r.convs {
			if c == nil {
				impls = append(impls, "-")
				continue
			}
			ct, pt := c.Time(convReps(c.Geometry()))
			call, prim, flops = call+ct, prim+pt, flops+c.Geometry().Flops()
			impls = append(impls, c.Impl())
		}
		sumCall += time.Duration(r.layers) * call
		sumPrim += time.Duration(r.layers) * prim
		sumFlops += float64(r.layers) * flops
		fmt.Fprintf(stdout, "%-80s %6d %9.2f %9.2f %9.1f %11.1f %6s  %s\n", r.g, r.layers, ms(call), ms(prim),
			flops/call.Seconds()/1e9, flops/prim.Seconds()/1e9, ofPeak(flops/prim.Seconds()/1e9, one), strings.Join(impls, "/"))
	}
	fmt.Fprintf(stdout, "%-80s %6s %9.2f %9.2f %9.1f %11.1f %6s\n", "all convolutions of a step", "", ms(sumCall), ms(sumPrim),
		sumFlops/sumCall.Seconds()/1e9, sumFlops/sumPrim.Seconds()/1e9, ofPeak(sumFlops/sumPrim.Seconds()/1e9, one))
	return nil
}

// ofPeak is gflops as a percentage of peak, or "-" where this build
// measured no peak (noasm, another architecture).
func ofPeak(gflops, peak float64) string {
	if peak == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*gflops/peak)
}

// convReps is how often a shape is timed: about 50 ms of work at 100
// GFLOP/s, at least 3 runs.
func convReps(g dnnl.Geometry) int { return max(3, int(5e9/g.Flops())) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// allCoresFMAPeak is loops.FMAPeak on every core at once, per core: below
// one core's figure where the cores share execution units or clock.
func allCoresFMAPeak(lanes int, d time.Duration) float64 {
	n := runtime.NumCPU()
	peaks := make([]float64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { peaks[i] = loops.FMAPeak(lanes, d) })
	}
	wg.Wait()
	var sum float64
	for _, p := range peaks {
		sum += p
	}
	return sum / float64(n)
}
