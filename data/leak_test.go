package data

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

func TestPrefetchCloseWithoutDrainingLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	d := seq(1000).Repeat(-1).Batch(8).Prefetch(4).Map(func(e []Tensor) []Tensor { return e }).Prefetch(2)
	for _, reads := range []int{0, 1, 5, 50} {
		it := d.Iter()
		for i := 0; i < reads && it.Next(); i++ {
		}
		it.Close()
		it.Close() // idempotent
	}
	// A pass that ends by itself releases its goroutine too.
	it := seq(10).Prefetch(3).Iter()
	for it.Next() {
	}
}

// TestDroppedIteratorStopsPrefetch covers a notebook loop that breaks out
// without Close: once the iterator is garbage, its producer stops.
func TestDroppedIteratorStopsPrefetch(t *testing.T) {
	func() {
		it := seq(100).Repeat(-1).Prefetch(2).Iter()
		it.Next()
	}()
	for range 3 {
		runtime.GC()
	}
	goleak.VerifyNone(t)
}
