package loops

import (
	"runtime"
	"sync"
)

// Float is the element type of the kernels.
type Float interface{ ~float32 | ~float64 }

// parallelMin is the smallest length worth splitting across goroutines;
// below it, starting workers costs more than the loop.
const parallelMin = 1 << 14

// serial reports whether n elements are too few to split across workers.
// Callers test it before building the closure parallel takes: that closure
// escapes to the heap, and the small buffers of a training step must not
// allocate.
func serial(n int) bool { return n < 2*parallelMin }

// AllReduceSum is:
//
//	for i := range bufs[0] {
//		s := bufs[0][i]
//		for r := 1; r < len(bufs); r++ {
//			s += bufs[r][i]
//		}
//		for r := range bufs {
//			bufs[r][i] = s
//		}
//	}
//
// so every replica's buffer holds the same bits afterwards. Long buffers are
// split into chunks summed by parallel workers (at most GOMAXPROCS), joined
// before it returns. Every buffer must be at least as long as bufs[0].
func AllReduceSum[T Float](bufs [][]T) {
	if len(bufs) < 2 {
		return
	}
	n := len(bufs[0])
	if serial(n) {
		allReduceRange(bufs, 0, n)
		return
	}
	parallel(n, func(lo, hi int) { allReduceRange(bufs, lo, hi) })
}

func allReduceRange[T Float](bufs [][]T, lo, hi int) {
	dst := bufs[0][lo:hi]
	for _, b := range bufs[1:] {
		AddTo(dst, dst, b[lo:hi])
	}
	for _, b := range bufs[1:] {
		copy(b[lo:hi], dst)
	}
}

// parallel calls fn on disjoint ranges covering [0,n), concurrently when n is
// large, and returns when every call has. It uses at most one worker per
// core even when GOMAXPROCS is higher: a worker beyond the cores waits for
// a time slice and holds up the join.
func parallel(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	if w := n / parallelMin; w < workers {
		workers = w
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	// Chunks are multiples of 64 elements so workers do not share cache lines.
	chunk := (n/workers + 63) &^ 63
	var wg sync.WaitGroup
	defer wg.Wait()
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
}

// SumTo is:
//
//	for i := range dst {
//		s := srcs[0][i]
//		for r := 1; r < len(srcs); r++ {
//			s += srcs[r][i]
//		}
//		dst[i] = s
//	}
//
// the same order as AllReduceSum. dst may be srcs[0]. With no srcs, dst is
// zeroed.
func SumTo[T Float](dst []T, srcs ...[]T) {
	if len(srcs) == 0 {
		clear(dst)
		return
	}
	copy(dst, srcs[0][:len(dst)])
	for _, s := range srcs[1:] {
		AddTo(dst, dst, s[:len(dst)])
	}
}

// ScaleTo is: for i, v := range x { dst[i] = a * v }.
// On amd64 with AVX float32 runs 8 lanes at a time, with the same bits: a
// clipped step scales every gradient, and attention scales its queries.
func ScaleTo[T Float](dst []T, a T, x []T) {
	dst = dst[:len(x)]
	done := 0
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX {
		done = len(xs) &^ 7
		scaleAVX32(any(dst).([]float32)[:done], any(a).(float32), xs[:done])
	}
	for i := done; i < len(x); i++ {
		dst[i] = a * x[i]
	}
}

// AddTo is: for i, v := range a { dst[i] = v + b[i] }.
// On amd64 with AVX it runs 8 float32 or 4 float64 lanes at a time, with
// the same bits: the replicas' gradient sums go through it every step.
func AddTo[T Float](dst, a, b []T) {
	dst, b, done := vectorPrefix(dst, a, b, addVector[T])
	for i := done; i < len(a); i++ {
		dst[i] = a[i] + b[i]
	}
}

// AxpyTo is: for i, v := range x { dst[i] = alpha*v + y[i] }.
func AxpyTo[T Float](dst []T, alpha T, x, y []T) {
	dst = dst[:len(x)]
	y = y[:len(x)]
	for i, v := range x {
		dst[i] = alpha*v + y[i]
	}
}

// SumSq is Σ x[j]² in float64, SumSqDev with a mean of 0: in Sum's 4 lanes
// and order.
func SumSq[T Float](x []T) float64 { return SumSqDev(x, 0) }
