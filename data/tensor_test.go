package data

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewTensor(t *testing.T) {
	shape := []int{2, 3}
	x := NewTensor(shape, rangeFloats(0, 6))
	shape[0] = 9 // NewTensor copies the shape
	if x.Dim(0) != 2 || x.Dim(1) != 3 || x.Len() != 6 || x.Rank() != 2 {
		t.Fatalf("NewTensor: got shape %v len %d", x.Shape, x.Len())
	}
	for _, tc := range []struct {
		name  string
		shape []int
		n     int
	}{
		{"too few", []int{2, 3}, 5},
		{"too many", []int{2}, 3},
		{"negative", []int{-1, 2}, 0},
		{"scalar with none", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := panics(func() { NewTensor(tc.shape, make([]float64, tc.n)) })
			err, ok := r.(error)
			if !ok || !errors.Is(err, ErrShape) {
				t.Fatalf("NewTensor(%v, %d values) panicked with %v, want ErrShape", tc.shape, tc.n, r)
			}
		})
	}
}

func TestRowAndReshape(t *testing.T) {
	x := NewTensor([]int{3, 2}, rangeFloats(0, 6))
	r := x.Row(1)
	if !slices.Equal(r.Data, floats(2, 3)) || len(r.Shape) != 1 || r.Shape[0] != 2 {
		t.Fatalf("Row(1) = %v, want [2 3]", r)
	}
	r.Data[0] = 42 // a view
	if x.Data[2] != 42 {
		t.Fatal("Row returned a copy, want a view")
	}
	if got := NewTensor([]int{3}, floats(5, 6, 7)).Row(2); got.Scalar() != 7 || len(got.Shape) != 0 {
		t.Fatalf("Row of a vector = %v, want scalar 7", got)
	}
	y := x.Reshape(-1)
	if len(y.Shape) != 1 || y.Shape[0] != 6 {
		t.Fatalf("Reshape(-1) shape %v, want [6]", y.Shape)
	}
	if z := x.Reshape(1, -1, 3); z.Shape[1] != 2 {
		t.Fatalf("Reshape(1,-1,3) shape %v, want [1 2 3]", z.Shape)
	}
	for _, tc := range []struct {
		name string
		fn   func()
		want error
	}{
		{"row of scalar", func() { Zeros().Row(0) }, ErrArgument},
		{"row out of range", func() { x.Row(3) }, ErrArgument},
		{"row negative", func() { x.Row(-1) }, ErrArgument},
		{"dim out of range", func() { x.Dim(2) }, ErrArgument},
		{"reshape wrong size", func() { x.Reshape(4) }, ErrShape},
		{"reshape two -1", func() { x.Reshape(-1, -1) }, ErrShape},
		{"reshape indivisible", func() { x.Reshape(-1, 4) }, ErrShape},
		{"scalar of many", func() { x.Scalar() }, ErrShape},
		{"zeros negative", func() { Zeros(2, -3) }, ErrShape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := panics(tc.fn)
			err, ok := r.(error)
			if !ok || !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "data: ") {
				t.Fatalf("panicked with %v, want an error wrapping %v", r, tc.want)
			}
		})
	}
}

func TestScaleAndClone(t *testing.T) {
	x := NewTensor([]int{2}, floats(255, 51))
	y := x.Scale(1.0 / 255)
	if y.Data[0] != 1 || y.Data[1] != 0.2 || x.Data[0] != 255 {
		t.Fatalf("Scale: got %v from %v", y, x)
	}
	c := x.Clone()
	c.Data[0], c.Shape[0] = 0, 7
	if x.Data[0] != 255 || x.Shape[0] != 2 {
		t.Fatal("Clone shares storage")
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Tensor
		want string
	}{
		{"scalar", NewTensor(nil, []float64{0.69314718}), "0.693147"},
		{"big scalar", NewTensor(nil, []float64{123456789}), "1.23457e+08"},
		{"vector", NewTensor([]int{3}, []float64{1, 2.5, -3}), "[  1 2.5  -3]"},
		{"matrix", NewTensor([]int{2, 2}, floats(1, 20, 3, 4)), "[[ 1 20]\n [ 3  4]]"},
		{"rank 3", NewTensor([]int{2, 1, 2}, floats(1, 2, 3, 4)), "[[[1 2]]\n\n [[3 4]]]"},
		{"elided", NewTensor([]int{12}, rangeFloats(0, 12)), "[ 0  1  2 ...  9 10 11]"},
		{"ten not elided", NewTensor([]int{10}, rangeFloats(0, 10)), "[0 1 2 3 4 5 6 7 8 9]"},
		{"elided rows", NewTensor([]int{11, 1}, rangeFloats(0, 11)), "[[ 0]\n [ 1]\n [ 2]\n ...\n [ 8]\n [ 9]\n [10]]"},
		{"empty", Zeros(0, 3), "[[]]"},
		{"one element vector", NewTensor([]int{1}, floats(7)), "[7]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.String(); got != tc.want {
				t.Fatalf("String of %v %v:\ngot  %q\nwant %q", tc.t.Shape, tc.t.Data, got, tc.want)
			}
		})
	}
}

func TestRandom(t *testing.T) {
	a, b := RandomNormal(7, 1000), RandomNormal(7, 1000)
	if !slices.Equal(a.Data, b.Data) {
		t.Fatal("RandomNormal with one seed differs between calls")
	}
	if c := RandomNormal(8, 1000); slices.Equal(a.Data, c.Data) {
		t.Fatal("RandomNormal ignores its seed")
	}
	// Moments of 1000 standard normals: mean within 4 standard errors.
	var sum, sq float64
	for _, v := range a.Data {
		sum += v
		sq += v * v
	}
	mean := sum / 1000
	if mean < -0.13 || mean > 0.13 || sq/1000 < 0.8 || sq/1000 > 1.2 {
		t.Fatalf("RandomNormal moments: mean %.3f, mean square %.3f", mean, sq/1000)
	}
	u := RandomUniform(3, -2, 5, 10, 10)
	if u.Shape[0] != 10 || u.Shape[1] != 10 {
		t.Fatalf("RandomUniform shape %v", u.Shape)
	}
	for _, v := range u.Data {
		if v < -2 || v >= 5 {
			t.Fatalf("RandomUniform value %v outside [-2, 5)", v)
		}
	}
	seen := map[float64]bool{}
	for _, v := range RandomInts(8, 3, 500).Data {
		if v != 0 && v != 1 && v != 2 {
			t.Fatalf("RandomInts(n=3) value %v", v)
		}
		seen[v] = true
	}
	if len(seen) != 3 {
		t.Fatalf("RandomInts(n=3) over 500 draws hit only %v", seen)
	}
	for name, fn := range map[string]func(){
		"ints n=0":        func() { RandomInts(1, 0, 3) },
		"uniform lo > hi": func() { RandomUniform(1, 2, 1, 3) },
		"normal negative": func() { RandomNormal(1, -3) },
	} {
		if r := panics(fn); r == nil {
			t.Errorf("%s: did not panic", name)
		}
	}
}

func TestSlice(t *testing.T) {
	x := NewTensor([]int{4, 2}, rangeFloats(0, 8))
	for _, tc := range []struct {
		lo, hi int
		want   []float64
	}{
		{0, 4, rangeFloats(0, 8)},
		{1, 3, rangeFloats(2, 6)},
		{2, 2, nil},
		{3, 4, floats(6, 7)},
	} {
		s := x.Slice(tc.lo, tc.hi)
		if s.Shape[0] != tc.hi-tc.lo || s.Shape[1] != 2 || len(s.Data) != len(tc.want) || (len(tc.want) > 0 && !slices.Equal(s.Data, tc.want)) {
			t.Errorf("Slice(%d, %d) = %v %v, want %v", tc.lo, tc.hi, s.Shape, s.Data, tc.want)
		}
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 5}} {
		if p := panics(func() { x.Slice(r[0], r[1]) }); p == nil {
			t.Errorf("Slice(%d, %d) did not panic", r[0], r[1])
		}
	}
}

// TestTooLarge: a tensor or a batch larger than any machine's memory is an
// error naming the function and the shape, not "fatal error: out of memory". The shapes are 8 TiB and more, so the test holds on any machine
// whose memory can be read.
func TestTooLarge(t *testing.T) {
	if err := CheckAlloc("probe", []int{1 << 50}, 8); err == nil {
		t.Skip("this machine's memory cannot be read")
	}
	batchErr := func() error {
		it := FromTensorSlices(Zeros(2, 1<<20)).Batch(1 << 24).Iter()
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
		{"zeros", func() error { return panicErr(func() { Zeros(1<<20, 1<<20) }) },
			"data: not enough memory: Zeros: shape [1048576 1048576] needs 8 TiB, more than this machine's "},
		{"random-normal", func() error { return panicErr(func() { RandomNormal(1, 1<<20, 1<<20) }) },
			"data: not enough memory: RandomNormal: shape [1048576 1048576] needs 8 TiB, more than this machine's "},
		{"random-ints", func() error { return panicErr(func() { RandomInts(1, 10, 1<<21, 1<<20) }) },
			"data: not enough memory: RandomInts: shape [2097152 1048576] needs 16 TiB, more than this machine's "},
		{"batch", batchErr,
			"data: not enough memory: batch: component 0: shape [16777216 1048576] needs 128 TiB, more than this machine's "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, ErrMemory) {
				t.Errorf("error\n got %v\nwant %s... wrapping ErrMemory", err, tt.want)
			}
		})
	}
	if err := CheckAlloc("small", []int{1024, 1024}, 8); err != nil {
		t.Errorf("CheckAlloc of 8 MiB: %v", err)
	}
}
