package data

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// sink keeps benchmark results alive.
var sink []Tensor

// benchPipeline is an MNIST-sized training input: 60000 images of 784
// values and their labels.
func benchPipeline(b testing.TB, prefetch bool) *Dataset {
	b.Helper()
	x := RandomUniform(1, 0, 1, 6000, 784)
	y := RandomInts(2, 10, 6000)
	d := FromTensorSlices(x, y).Shuffle(1000, 3).Repeat(-1).Batch(64)
	if prefetch {
		d = d.Prefetch(2)
	}
	return d
}

func BenchmarkIterBatch(b *testing.B) {
	for _, prefetch := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", prefetch), func(b *testing.B) {
			it := benchPipeline(b, prefetch).Iter()
			defer it.Close()
			it.Next() // warm the buffers
			b.SetBytes(64 * 785 * 8)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				it.Next()
				sink = it.Value()
			}
		})
	}
}

// TestIterationDoesNotAllocate pins the benchmark's claim: once its buffers
// are warm, a pass over shuffled, batched, prefetched slices allocates
// nothing per batch.
func TestIterationDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, prefetch := range []bool{false, true} {
		it := benchPipeline(t, prefetch).Iter()
		for range 5 {
			it.Next()
		}
		allocs := testing.AllocsPerRun(50, func() { it.Next() })
		it.Close()
		if allocs != 0 {
			t.Errorf("prefetch=%v: %.1f allocations per batch, want 0", prefetch, allocs)
		}
	}
}

// TestRepeatKeepsBatchBuffers: a small dataset batched, then repeated,
// opens a pass every few batches; each pass takes over the batch buffers of
// the one before instead of allocating its own. What a pass still
// allocates (its streams' headers) is a few hundred bytes, against 400 KB
// for a batch.
func TestRepeatKeepsBatchBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const rows, batch, batches = 200, 64, 200
	batchBytes := batch * (784 + 1) * 8
	for _, prefetch := range []bool{false, true} {
		d := FromTensorSlices(RandomUniform(1, 0, 1, rows, 784), RandomInts(2, 10, rows)).Batch(batch).Repeat(-1)
		if prefetch {
			d = d.Prefetch(2)
		}
		it := d.Iter()
		for range 10 {
			it.Next()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range batches {
			it.Next()
		}
		runtime.ReadMemStats(&after)
		it.Close()
		if perBatch := float64(after.TotalAlloc-before.TotalAlloc) / batches; perBatch > float64(batchBytes)/100 {
			t.Errorf("prefetch=%v: %.0f bytes allocated per batch, want under 1%% of a batch's %d", prefetch, perBatch, batchBytes)
		}
	}
}

// BenchmarkReadIDX reads the size of MNIST's test images (10000×28×28
// bytes), raw and gzip-compressed.
func BenchmarkReadIDX(b *testing.B) {
	raw := idxBytes(0x08, []int{10000, 28, 28}, RandomInts(1, 256, 10000*28*28).Data)
	for _, enc := range []struct {
		name string
		in   []byte
	}{{"raw", raw}, {"gzip", gzipped(raw)}} {
		b.Run(enc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for range b.N {
				x, err := ReadIDX(bytes.NewReader(enc.in))
				if err != nil {
					b.Fatal(err)
				}
				sink = []Tensor{x}
			}
		})
	}
}
