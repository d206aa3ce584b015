package data_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// TestIssue14TooLarge: a tensor or a batch larger than any machine's memory
// is an error naming the function and the shape, not "fatal error: out of
// memory". The shapes are 8 TiB and more, so the test holds on any machine
// whose memory can be read.
func TestIssue14TooLarge(t *testing.T) {
	if err := data.CheckAlloc("probe", []int{1 << 50}, 8); err == nil {
		t.Skip("this machine's memory cannot be read")
	}
	batchErr := func() error {
		it := data.FromTensorSlices(data.Zeros(2, 1<<20)).Batch(1 << 24).Iter()
		defer it.Close()
		for it.Next() {
		}
		return it.Err()
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"zeros", func() error { return panicErr(func() { data.Zeros(1<<20, 1<<20) }) },
			"data: not enough memory: Zeros: shape [1048576 1048576] needs 8 TiB, more than this machine's "},
		{"random-normal", func() error { return panicErr(func() { data.RandomNormal(1, 1<<20, 1<<20) }) },
			"data: not enough memory: RandomNormal: shape [1048576 1048576] needs 8 TiB, more than this machine's "},
		{"random-ints", func() error { return panicErr(func() { data.RandomInts(1, 10, 1<<21, 1<<20) }) },
			"data: not enough memory: RandomInts: shape [2097152 1048576] needs 16 TiB, more than this machine's "},
		{"batch", batchErr,
			"data: not enough memory: batch: component 0: shape [16777216 1048576] needs 128 TiB, more than this machine's "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, data.ErrMemory) {
				t.Errorf("error\n got %v\nwant %s... wrapping ErrMemory", err, tt.want)
			}
		})
	}
	if err := data.CheckAlloc("small", []int{1024, 1024}, 8); err != nil {
		t.Errorf("CheckAlloc of 8 MiB: %v", err)
	}
}

func panicErr(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
			if e, ok := v.(error); ok {
				err = e
			}
		}
	}()
	fn()
	return nil
}

// TestIssue14IterAt: an iterator resumed at another's state yields the rest
// of that iterator's elements, whatever the pipeline's Shuffles and
// Repeats; a later Iter reshuffles as the original dataset would.
func TestIssue14IterAt(t *testing.T) {
	x := data.NewTensor([]int{20}, func() []float64 {
		v := make([]float64, 20)
		for i := range v {
			v[i] = float64(i)
		}
		return v
	}())
	pipelines := []struct {
		name string
		make func() *data.Dataset
	}{
		{"shuffle", func() *data.Dataset { return data.FromTensorSlices(x).Shuffle(8, 1) }},
		{"shuffle-repeat", func() *data.Dataset { return data.FromTensorSlices(x).Shuffle(20, 2).Repeat(3) }},
		{"shuffle-batch-shuffle-prefetch", func() *data.Dataset {
			return data.FromTensorSlices(x).Shuffle(5, 3).Batch(3).Shuffle(3, 4).Prefetch(2)
		}},
		{"map-take", func() *data.Dataset {
			return data.FromTensorSlices(x).Map(func(e []data.Tensor) []data.Tensor { return []data.Tensor{e[0].Scale(2)} }).Shuffle(4, 5).Take(15)
		}},
	}
	values := func(it *data.Iterator) (out []float64) {
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
	ds := data.FromTensorSlices(x).Shuffle(4, 1)
	if _, err := ds.IterAt(data.IteratorState{Position: 21, Passes: []uint64{0}}); err == nil || !errors.Is(err, data.ErrArgument) {
		t.Errorf("IterAt past the end: %v, want an error wrapping ErrArgument", err)
	}
	if _, err := ds.IterAt(data.IteratorState{}); err == nil || !strings.Contains(err.Error(), "0 Shuffle pass counters, the dataset 1 Shuffles") {
		t.Errorf("IterAt of another pipeline: %v", err)
	}
}

func ExampleDataset_IterAt() {
	x := data.NewTensor([]int{6}, []float64{0, 1, 2, 3, 4, 5})
	ds := data.FromTensorSlices(x).Shuffle(6, 7)
	it := ds.Iter()
	it.Next()
	it.Next()
	st := it.State() // kept in a checkpoint, say
	fmt.Println("continuing:", st.Position, "elements read")
	resumed, _ := data.FromTensorSlices(x).Shuffle(6, 7).IterAt(st)
	for resumed.Next() && it.Next() {
		fmt.Println(resumed.Value()[0].Data[0] == it.Value()[0].Data[0])
	}
	// Output:
	// continuing: 2 elements read
	// true
	// true
	// true
	// true
}
