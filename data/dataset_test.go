package data

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/internal/safepoint"
)

func TestFromTensorSlices(t *testing.T) {
	d := seq(4)
	if d.Cardinality() != 4 {
		t.Fatalf("Cardinality = %d, want 4", d.Cardinality())
	}
	if got := shapeStr(d.ElementSpec()); got != "[[] [2]]" {
		t.Fatalf("ElementSpec = %s, want [[] [2]]", got)
	}
	elems := collect(t, d)
	if !slices.Equal(firsts(elems), floats(0, 1, 2, 3)) {
		t.Fatalf("elements %v", firsts(elems))
	}
	consistent(t, elems)
	// Re-iterable: a second pass gives the same.
	if !slices.Equal(firsts(collect(t, d)), floats(0, 1, 2, 3)) {
		t.Fatal("second pass differs")
	}

	r := panics(func() { FromTensorSlices(Zeros(3, 2), Zeros(4)) })
	err, ok := r.(error)
	if !ok || !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "3 rows") || !strings.Contains(err.Error(), "has 4") {
		t.Fatalf("mismatched first dims panicked with %v, want ErrShape naming 3 and 4", r)
	}
	for name, fn := range map[string]func(){
		"none":   func() { FromTensorSlices() },
		"scalar": func() { FromTensorSlices(Zeros()) },
	} {
		if r := panics(fn); r == nil {
			t.Errorf("%s: did not panic", name)
		}
	}
}

func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		n, size   int
		drop      bool
		wantSizes []int
		wantSpec  string
	}{
		{10, 5, false, []int{5, 5}, "[[5] [5 2]]"},
		{10, 3, false, []int{3, 3, 3, 1}, "[[-1] [-1 2]]"},
		{10, 3, true, []int{3, 3, 3}, "[[3] [3 2]]"},
		{10, 10, false, []int{10}, "[[10] [10 2]]"},
		{10, 11, false, []int{10}, "[[-1] [-1 2]]"},
		{10, 11, true, nil, "[[11] [11 2]]"},
		{10, 1, false, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "[[1] [1 2]]"},
		{0, 4, false, nil, "[[4] [4 2]]"},
	} {
		t.Run(fmt.Sprintf("n=%d/batch=%d/drop=%v", tc.n, tc.size, tc.drop), func(t *testing.T) {
			var opts []BatchOption
			if tc.drop {
				opts = append(opts, DropRemainder())
			}
			d := seq(tc.n).Batch(tc.size, opts...)
			if d.Cardinality() != len(tc.wantSizes) {
				t.Errorf("Cardinality = %d, want %d", d.Cardinality(), len(tc.wantSizes))
			}
			if got := shapeStr(d.ElementSpec()); got != tc.wantSpec {
				t.Errorf("ElementSpec = %s, want %s", got, tc.wantSpec)
			}
			elems := collect(t, d)
			var sizes []int
			for _, e := range elems {
				sizes = append(sizes, e[0].Shape[0])
				if e[1].Shape[0] != e[0].Shape[0] || e[1].Shape[1] != 2 {
					t.Fatalf("batch shapes %v and %v", e[0].Shape, e[1].Shape)
				}
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.wantSizes) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.wantSizes)
			}
			total := 0
			for _, s := range tc.wantSizes {
				total += s
			}
			if !slices.Equal(firsts(elems), rangeFloats(0, total)) {
				t.Fatalf("batched values %v, want 0..%d", firsts(elems), total-1)
			}
			consistent(t, elems)
		})
	}
	if r := panics(func() { seq(3).Batch(0) }); r == nil {
		t.Error("Batch(0) did not panic")
	}
}

func TestBatchValueValidUntilNext(t *testing.T) {
	it := seq(6).Batch(2).Iter()
	defer it.Close()
	it.Next()
	first := it.Value()[0]
	if !slices.Equal(first.Data, floats(0, 1)) {
		t.Fatalf("first batch %v", first)
	}
	it.Next()
	// The buffer is reused: documented, and what keeps batching
	// allocation-free.
	if !slices.Equal(first.Data, floats(2, 3)) {
		t.Fatalf("first batch after Next = %v, want the reused buffer [2 3]", first)
	}
}

func TestBatchShapeMismatch(t *testing.T) {
	d := FromFunc(4, func(i int) []Tensor { return []Tensor{Zeros(1 + i/2)} }).Batch(4)
	it := d.Iter()
	if it.Next() {
		t.Fatal("Next succeeded on a batch of mixed shapes")
	}
	err := it.Err()
	if err == nil || !strings.Contains(err.Error(), "element 2") || !strings.Contains(err.Error(), "want shape [1], got [2]") {
		t.Fatalf("Err = %v, want one naming element 2 and the shapes", err)
	}
}

func TestShuffle(t *testing.T) {
	const n = 50
	for _, buffer := range []int{1, 7, 50, 1000} {
		t.Run(fmt.Sprintf("buffer=%d", buffer), func(t *testing.T) {
			a := firsts(collect(t, seq(n).Shuffle(buffer, 3)))
			b := firsts(collect(t, seq(n).Shuffle(buffer, 3)))
			if !slices.Equal(a, b) {
				t.Fatalf("same seed, different orders:\n%v\n%v", a, b)
			}
			if !slices.Equal(sortedCopy(a), rangeFloats(0, n)) {
				t.Fatalf("not a permutation: %v", a)
			}
			ordered := slices.Equal(a, rangeFloats(0, n))
			if buffer == 1 != ordered {
				t.Fatalf("buffer %d: in order = %v", buffer, ordered)
			}
			if buffer > 1 {
				c := firsts(collect(t, seq(n).Shuffle(buffer, 4)))
				if slices.Equal(a, c) {
					t.Fatal("seeds 3 and 4 give the same order")
				}
			}
		})
	}
	// Every pass reshuffles; pass k uses seed+k.
	d := seq(n).Shuffle(n, 10)
	p0, p1 := firsts(collect(t, d)), firsts(collect(t, d))
	if slices.Equal(p0, p1) {
		t.Fatal("second pass has the first pass's order")
	}
	if q := firsts(collect(t, seq(n).Shuffle(n, 11))); !slices.Equal(p1, q) {
		t.Fatal("pass 1 of seed 10 differs from pass 0 of seed 11")
	}
	// Under Repeat every pass is a fresh permutation.
	r := firsts(collect(t, seq(n).Shuffle(n, 10).Repeat(2)))
	if !slices.Equal(r[:n], p0) || !slices.Equal(r[n:], p1) {
		t.Fatal("Repeat passes do not follow seed+k")
	}
	// Shuffling batches (whose buffers are reused) keeps them intact.
	b := collect(t, seq(12).Batch(3).Shuffle(4, 1))
	consistent(t, b)
	if !slices.Equal(sortedCopy(firsts(b)), rangeFloats(0, 12)) {
		t.Fatalf("shuffled batches lost values: %v", firsts(b))
	}
	if r := panics(func() { seq(3).Shuffle(0, 1) }); r == nil {
		t.Error("Shuffle(0) did not panic")
	}
}

func TestRepeatTakeSkipShard(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        *Dataset
		want     []float64
		wantCard int
	}{
		{"repeat 3", seq(3).Repeat(3), floats(0, 1, 2, 0, 1, 2, 0, 1, 2), 9},
		{"repeat 0", seq(3).Repeat(0), nil, 0},
		{"repeat forever take", seq(3).Repeat(-1).Take(7), floats(0, 1, 2, 0, 1, 2, 0), 7},
		{"repeat empty forever", seq(0).Repeat(-1), nil, 0},
		{"take fewer", seq(5).Take(2), floats(0, 1), 2},
		{"take more", seq(5).Take(9), rangeFloats(0, 5), 5},
		{"take 0", seq(5).Take(0), nil, 0},
		{"skip", seq(5).Skip(2), floats(2, 3, 4), 3},
		{"skip all", seq(5).Skip(8), nil, 0},
		{"skip then take", seq(10).Skip(3).Take(4), floats(3, 4, 5, 6), 4},
		{"shard 0 of 3", seq(10).Shard(3, 0), floats(0, 3, 6, 9), 4},
		{"shard 2 of 3", seq(10).Shard(3, 2), floats(2, 5, 8), 3},
		{"shard then batch", seq(10).Shard(2, 1).Batch(2), floats(1, 3, 5, 7, 9), 3},
		{"batch then repeat", seq(3).Batch(2).Repeat(2), floats(0, 1, 2, 0, 1, 2), 4},
		{"map", seq(4).Map(func(e []Tensor) []Tensor { return []Tensor{e[0].Scale(2), e[1]} }), floats(0, 2, 4, 6), 4},
		{"func", FromFunc(3, func(i int) []Tensor { return []Tensor{NewTensor(nil, []float64{float64(i * i)})} }), floats(0, 1, 4), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firsts(collect(t, tc.d)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.d.Cardinality() != tc.wantCard {
				t.Fatalf("Cardinality = %d, want %d", tc.d.Cardinality(), tc.wantCard)
			}
		})
	}
	for _, tc := range []struct {
		name string
		d    *Dataset
		want int
	}{
		{"repeat forever", seq(2).Repeat(-1), Infinite},
		{"func forever", FromFunc(-1, func(int) []Tensor { return nil }), Infinite},
		{"skip forever", seq(2).Repeat(-1).Skip(5), Infinite},
		{"batch forever", seq(2).Repeat(-1).Batch(3), Infinite},
	} {
		if got := tc.d.Cardinality(); got != tc.want {
			t.Errorf("%s: Cardinality = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := shapeStr(seq(2).Repeat(-1).Batch(3).ElementSpec()); got != "[[3] [3 2]]" {
		t.Errorf("ElementSpec of endless batches = %s, want fixed batch dim", got)
	}
	for name, fn := range map[string]func(){
		"take -1":      func() { seq(2).Take(-1) },
		"skip -1":      func() { seq(2).Skip(-1) },
		"shard 3 of 3": func() { seq(2).Shard(3, 3) },
		"shard of 0":   func() { seq(2).Shard(0, 0) },
	} {
		if r := panics(fn); r == nil {
			t.Errorf("%s: did not panic", name)
		}
	}
}

func TestMapElementSpec(t *testing.T) {
	d := seq(10).Batch(3).Map(func(e []Tensor) []Tensor {
		return []Tensor{e[1].Reshape(-1), e[0]}
	})
	if got := shapeStr(d.ElementSpec()); got != "[[-1] [-1]]" {
		t.Fatalf("ElementSpec = %s, want [[-1] [-1]]", got)
	}
	fixed := seq(9).Batch(3).Map(func(e []Tensor) []Tensor { return []Tensor{e[1].Reshape(-1)} })
	if got := shapeStr(fixed.ElementSpec()); got != "[[6]]" {
		t.Fatalf("ElementSpec = %s, want [[6]]", got)
	}
	failing := seq(3).Map(func(e []Tensor) []Tensor { return []Tensor{e[0].Row(0)} })
	if got := failing.ElementSpec(); got != nil {
		t.Fatalf("ElementSpec of a map that panics on probes = %v, want nil", got)
	}
}

func TestPrefetchEquivalence(t *testing.T) {
	scale := func(e []Tensor) []Tensor { return []Tensor{e[0].Scale(1), e[1]} }
	for name, pipeline := range map[string]func(prefetch int) *Dataset{
		"repeat-batch": func(prefetch int) *Dataset {
			return seq(37).Shuffle(10, 5).Repeat(3).Batch(4).Prefetch(prefetch).Map(scale).Prefetch(prefetch)
		},
		// Each pass hands its batch buffers to the next (recycler): the
		// prefetched batches of one pass must survive the next pass's
		// first, whether the pass ends on a partial batch or a full one.
		"batch-repeat-partial": func(prefetch int) *Dataset {
			return seq(37).Shuffle(10, 5).Batch(4).Repeat(3).Prefetch(prefetch)
		},
		"batch-repeat-full": func(prefetch int) *Dataset {
			return seq(12).Shuffle(10, 5).Batch(4).Repeat(4).Prefetch(prefetch)
		},
		"batch-batch-repeat": func(prefetch int) *Dataset {
			return seq(24).Batch(2).Batch(3).Repeat(3).Prefetch(prefetch)
		},
	} {
		want := collect(t, pipeline(0))
		for _, n := range []int{1, 2, 8} {
			got := collect(t, pipeline(n))
			if len(got) != len(want) {
				t.Fatalf("%s, prefetch %d: %d batches, want %d", name, n, len(got), len(want))
			}
			if !slices.Equal(firsts(got), firsts(want)) {
				t.Fatalf("%s, prefetch %d: values differ", name, n)
			}
			consistent(t, got)
		}
	}
	// Stable sources are borrowed, not copied; the result must match too.
	if got := firsts(collect(t, seq(20).Prefetch(3))); !slices.Equal(got, rangeFloats(0, 20)) {
		t.Fatalf("prefetched slices: %v", got)
	}
}

func TestPrefetchPanicComesBackThroughErr(t *testing.T) {
	boom := errors.New("boom")
	d := seq(10).Map(func(e []Tensor) []Tensor {
		if e[0].Scalar() == 4 {
			panic(boom)
		}
		return e
	}).Prefetch(2)
	it := d.Iter()
	n := 0
	for it.Next() {
		n++
	}
	if n != 4 || !errors.Is(it.Err(), boom) || !strings.HasPrefix(it.Err().Error(), "data: prefetch: panic in producer: boom") {
		t.Fatalf("read %d elements, Err = %v; want 4 and the panic", n, it.Err())
	}
	// An upstream error (not a panic) comes through as well.
	bad := FromFunc(3, func(i int) []Tensor { return []Tensor{Zeros(i + 1)} }).Batch(3).Prefetch(1)
	it = bad.Iter()
	if it.Next() || it.Err() == nil {
		t.Fatalf("mixed-shape batch behind Prefetch: Err = %v", it.Err())
	}
}

func TestInterrupt(t *testing.T) {
	safepoint.Clear()
	defer safepoint.Clear()
	it := seq(100).Batch(2).Prefetch(2).Iter()
	if !it.Next() {
		t.Fatal("first Next failed")
	}
	safepoint.Raise()
	r := panics(func() { it.Next() })
	if r != safepoint.ErrInterrupted {
		t.Fatalf("Next with an interrupt pending panicked with %v, want safepoint.ErrInterrupted", r)
	}
	safepoint.Clear()
	if it.Next() {
		t.Fatal("an interrupted iterator kept going")
	}
	if !errors.Is(it.Err(), safepoint.ErrInterrupted) {
		t.Fatalf("Err after interrupt = %v", it.Err())
	}
}

func TestPerReplicaBatchSize(t *testing.T) {
	for _, tc := range []struct {
		global, replicas int
		want             int
		wantErr          string
	}{
		{64, 1, 64, ""},
		{64, 4, 16, ""},
		{30, 4, 0, "data: global batch 30 not divisible by 4 replicas"},
		{8, 0, 0, "data: want at least 1 replica in sync, got 0"},
		{0, 2, 0, "data: want a positive global batch, got 0"},
	} {
		c := InputContext{NumInputPipelines: 1, NumReplicasInSync: tc.replicas}
		got, err := c.PerReplicaBatchSize(tc.global)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("PerReplicaBatchSize(%d) with %d replicas = %d, %v; want %d, %q", tc.global, tc.replicas, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestFromFuncAndString(t *testing.T) {
	calls := 0
	d := FromFunc(-1, func(i int) []Tensor {
		calls++
		return []Tensor{Zeros(3), NewTensor(nil, []float64{float64(i)})}
	})
	if got, want := d.String(), "Dataset{elements: infinite, shapes: [[3] []]}"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	d.ElementSpec()
	if calls != 1 {
		t.Fatalf("ElementSpec called fn %d times, want once", calls)
	}
	if got, want := d.Batch(4).Take(2).String(), "Dataset{elements: 2, shapes: [[4 3] [4]]}"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got, want := seq(10).Batch(4).String(), "Dataset{elements: 3, shapes: [[-1] [-1 2]]}"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got, want := FromFunc(0, func(int) []Tensor { return nil }).String(), "Dataset{elements: 0, shapes: unknown}"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got, want := seq(4).Map(func(e []Tensor) []Tensor { return e }).Repeat(-1).Shard(2, 1).String(), "Dataset{elements: infinite, shapes: [[] [2]]}"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}

// TestConcurrentPasses reads one dataset from several goroutines at once;
// under -race it checks that passes share no mutable state.
func TestConcurrentPasses(t *testing.T) {
	d := seq(40).Shuffle(16, 1).Batch(5).Prefetch(2).Map(func(e []Tensor) []Tensor { return e })
	done := make(chan []float64)
	for range 4 {
		go func() {
			var got []float64
			for it := d.Iter(); it.Next(); {
				got = append(got, it.Value()[0].Data...)
			}
			done <- sortedCopy(got)
		}()
	}
	for range 4 {
		if got := <-done; !slices.Equal(got, rangeFloats(0, 40)) {
			t.Fatalf("a concurrent pass read %v", got)
		}
	}
}

func TestInterruptWithoutPrefetch(t *testing.T) {
	safepoint.Clear()
	defer safepoint.Clear()
	it := seq(10).Iter()
	safepoint.Raise()
	if r := panics(func() { it.Next() }); r != safepoint.ErrInterrupted {
		t.Fatalf("Next panicked with %v, want safepoint.ErrInterrupted", r)
	}
	if safepoint.Handled() != 1 {
		t.Fatalf("safepoint.Handled() = %d, want 1", safepoint.Handled())
	}
}

// TestPrefetchValueStableUntilNext holds each value while the producer runs
// ahead, and checks that it is unchanged when the next Next comes: the
// ring never hands the producer the consumer's buffer, whether batches
// are copied (after Map) or borrowed (straight from Batch).
func TestPrefetchValueStableUntilNext(t *testing.T) {
	for name, d := range map[string]*Dataset{
		"borrowed batches":     seq(50).Batch(3).Repeat(2).Take(30).Prefetch(2),
		"copied batches":       seq(50).Batch(3).Map(func(e []Tensor) []Tensor { return e }).Prefetch(1),
		"borrowed slices":      seq(50).Shuffle(8, 1).Prefetch(3),
		"shuffled batches":     seq(50).Batch(3).Shuffle(4, 2).Prefetch(2),
		"prefetch of prefetch": seq(50).Batch(2).Prefetch(1).Prefetch(1),
	} {
		t.Run(name, func(t *testing.T) {
			want := firsts(collect(t, d))
			var got []float64
			it := d.Iter()
			for it.Next() {
				v := it.Value()[0]
				c := v.Clone()
				time.Sleep(50 * time.Microsecond) // let the producer fill the ring
				if !slices.Equal(v.Data, c.Data) || !slices.Equal(v.Shape, c.Shape) {
					t.Fatalf("value changed before Next: %v became %v", c, v)
				}
				got = append(got, c.Data...)
			}
			if !slices.Equal(sortedCopy(got), sortedCopy(want)) {
				t.Fatalf("read %v, want %v", got, want)
			}
		})
	}
}

// TestIterAt: an iterator resumed at another's state yields the rest of
// that iterator's elements, whatever the pipeline's Shuffles and Repeats; a
// later Iter reshuffles as the original dataset would.
func TestIterAt(t *testing.T) {
	x := NewTensor([]int{20}, rangeFloats(0, 20))
	pipelines := []struct {
		name string
		make func() *Dataset
	}{
		{"shuffle", func() *Dataset { return FromTensorSlices(x).Shuffle(8, 1) }},
		{"shuffle-repeat", func() *Dataset { return FromTensorSlices(x).Shuffle(20, 2).Repeat(3) }},
		{"shuffle-batch-shuffle-prefetch", func() *Dataset {
			return FromTensorSlices(x).Shuffle(5, 3).Batch(3).Shuffle(3, 4).Prefetch(2)
		}},
		{"map-take", func() *Dataset {
			return FromTensorSlices(x).Map(func(e []Tensor) []Tensor { return []Tensor{e[0].Scale(2)} }).Shuffle(4, 5).Take(15)
		}},
	}
	values := func(it *Iterator) (out []float64) {
		for it.Next() {
			out = append(out, it.Value()[0].Data...)
		}
		return out
	}
	for _, p := range pipelines {
		for _, at := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("%s/epoch-1-element-%d", p.name, at), func(t *testing.T) {
				orig := p.make()
				values(orig.Iter()) // epoch 0
				it := orig.Iter()
				var head []float64
				for range at {
					it.Next()
					head = append(head, it.Value()[0].Data...)
				}
				st := it.State()
				rest, next := values(it), values(orig.Iter())
				again := p.make() // another process: counters at 0
				resumed, err := again.IterAt(st)
				if err != nil {
					t.Fatal(err)
				}
				if got := values(resumed); fmt.Sprint(got) != fmt.Sprint(rest) {
					t.Errorf("resumed after %v: %v, want %v", head, got, rest)
				}
				if got := values(again.Iter()); fmt.Sprint(got) != fmt.Sprint(next) {
					t.Errorf("the pass after the resumed one: %v, want %v", got, next)
				}
			})
		}
	}
	ds := FromTensorSlices(x).Shuffle(4, 1)
	if _, err := ds.IterAt(IteratorState{Position: 21, Passes: []uint64{0}}); err == nil || !errors.Is(err, ErrArgument) {
		t.Errorf("IterAt past the end: %v, want an error wrapping ErrArgument", err)
	}
	if _, err := ds.IterAt(IteratorState{}); err == nil || !strings.Contains(err.Error(), "0 Shuffle pass counters, the dataset 1 Shuffles") {
		t.Errorf("IterAt of another pipeline: %v", err)
	}
}
