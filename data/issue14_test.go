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
