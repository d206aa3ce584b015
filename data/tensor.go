package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrShape is wrapped by the panics of functions given shapes that do not
// fit their data or each other.
var ErrShape = errors.New("data: shape mismatch")

// ErrArgument is wrapped by the panics of functions given an argument out of
// range, such as a negative count or a batch size of zero.
var ErrArgument = errors.New("data: invalid argument")

// Tensor is a dense row-major array of float64 values. Shape lists the
// dimensions, outermost first; a scalar has an empty shape and one value.
// The zero Tensor is an empty scalar-less tensor with no data.
//
// Data holds exactly the product of Shape values. Methods never modify the
// receiver; Row and Reshape return views that share Data.
type Tensor struct {
	Shape []int
	Data  []float64
}

// NewTensor returns a tensor of the given shape over data, which it takes
// ownership of (it does not copy data; it copies shape).
// It panics with an error wrapping ErrShape if a dimension is negative or
// len(data) is not the product of shape.
func NewTensor(shape []int, data []float64) Tensor {
	n := shapeLen(shape)
	if n != len(data) {
		panic(fmt.Errorf("%w: shape %v wants %d values, got %d", ErrShape, shape, n, len(data)))
	}
	return Tensor{Shape: append([]int(nil), shape...), Data: data}
}

// Zeros returns a tensor of the given shape filled with zeros.
// It panics with an error wrapping ErrShape if a dimension is negative, and
// ErrMemory if the tensor would not fit in the machine's memory.
func Zeros(shape ...int) Tensor { return zeros("Zeros", shape) }

// zeros is Zeros for the function named what.
func zeros(what string, shape []int) Tensor {
	n := shapeLen(shape)
	if err := CheckAlloc(what, shape, 8); err != nil {
		panic(err)
	}
	return Tensor{Shape: append([]int(nil), shape...), Data: make([]float64, n)}
}

// shapeLen returns the number of values a shape holds. It panics if a
// dimension is negative or the product overflows an int.
func shapeLen(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Errorf("%w: shape %v: want dimensions ≥ 0, got %d", ErrShape, shape, d))
		}
		if d != 0 && n > math.MaxInt/d {
			panic(fmt.Errorf("%w: shape %v: too many values for an int", ErrShape, shape))
		}
		n *= d
	}
	return n
}

// Len returns the number of values the tensor holds, the product of Shape.
func (t Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rank returns the number of dimensions.
func (t Tensor) Rank() int { return len(t.Shape) }

// Dim returns the size of dimension i.
// It panics with an error wrapping ErrArgument if i is not in [0, Rank).
func (t Tensor) Dim(i int) int {
	if i < 0 || i >= len(t.Shape) {
		panic(fmt.Errorf("%w: Dim(%d) of a tensor of rank %d", ErrArgument, i, len(t.Shape)))
	}
	return t.Shape[i]
}

// Row returns a view of entry i along the first axis: a tensor of shape
// Shape[1:] sharing the receiver's data. It does not allocate.
// It panics with an error wrapping ErrArgument if the tensor is a scalar or
// i is not in [0, Shape[0]).
func (t Tensor) Row(i int) Tensor {
	if len(t.Shape) == 0 {
		panic(fmt.Errorf("%w: Row(%d) of a scalar", ErrArgument, i))
	}
	if i < 0 || i >= t.Shape[0] {
		panic(fmt.Errorf("%w: Row(%d) of a tensor of shape %v", ErrArgument, i, t.Shape))
	}
	w := len(t.Data) / t.Shape[0] // Shape[0] > i ≥ 0
	return Tensor{Shape: t.Shape[1:len(t.Shape):len(t.Shape)], Data: t.Data[i*w : (i+1)*w : (i+1)*w]}
}

// Slice returns a view of rows [lo, hi) along the first axis, sharing the
// receiver's data; a strategy uses it to split a global batch among
// replicas without copying.
// It panics with an error wrapping ErrArgument if the tensor is a scalar or
// the range is not within [0, Shape[0]].
func (t Tensor) Slice(lo, hi int) Tensor {
	if len(t.Shape) == 0 {
		panic(fmt.Errorf("%w: Slice(%d, %d) of a scalar", ErrArgument, lo, hi))
	}
	if lo < 0 || hi < lo || hi > t.Shape[0] {
		panic(fmt.Errorf("%w: Slice(%d, %d) of a tensor of shape %v", ErrArgument, lo, hi, t.Shape))
	}
	w := 0
	if t.Shape[0] > 0 {
		w = len(t.Data) / t.Shape[0]
	}
	shape := append([]int{hi - lo}, t.Shape[1:]...)
	return Tensor{Shape: shape, Data: t.Data[lo*w : hi*w : hi*w]}
}

// Reshape returns a view of the tensor with a new shape and the same data.
// One dimension may be -1; it is inferred from the others.
// It panics with an error wrapping ErrShape if the shapes hold different
// numbers of values.
func (t Tensor) Reshape(shape ...int) Tensor {
	shape = append([]int(nil), shape...)
	infer := -1
	known := 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			panic(fmt.Errorf("%w: Reshape%v: want dimensions ≥ 0 and at most one -1", ErrShape, shape))
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || len(t.Data)%known != 0 {
			panic(fmt.Errorf("%w: cannot reshape %v (%d values) to %v", ErrShape, t.Shape, len(t.Data), shape))
		}
		shape[infer] = len(t.Data) / known
	}
	if shapeLen(shape) != len(t.Data) {
		panic(fmt.Errorf("%w: cannot reshape %v (%d values) to %v", ErrShape, t.Shape, len(t.Data), shape))
	}
	return Tensor{Shape: shape, Data: t.Data}
}

// Clone returns a deep copy of the tensor.
func (t Tensor) Clone() Tensor {
	return Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float64(nil), t.Data...)}
}

// Scale returns a new tensor whose values are a times the receiver's, for
// example Scale(1.0/255) to map image bytes to [0, 1].
func (t Tensor) Scale(a float64) Tensor {
	out := Tensor{Shape: append([]int(nil), t.Shape...), Data: make([]float64, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = a * v
	}
	return out
}

// Scalar returns the tensor's only value.
// It panics with an error wrapping ErrShape unless the tensor holds exactly
// one value.
func (t Tensor) Scalar() float64 {
	if len(t.Data) != 1 {
		panic(fmt.Errorf("%w: Scalar of a tensor of shape %v: want 1 value, got %d", ErrShape, t.Shape, len(t.Data)))
	}
	return t.Data[0]
}

// Axes longer than elideAbove print only their first and last elideKeep
// entries, as NumPy does for large arrays, so that a notebook cell that
// prints a dataset's batch stays readable.
const (
	elideAbove = 10
	elideKeep  = 3
)

// String formats the tensor the way NumPy prints arrays: a scalar as a
// number with six significant digits ("0.693147"), vectors and matrices in
// nested brackets with right-aligned columns, and axes longer than ten
// entries elided with "...".
func (t Tensor) String() string {
	if len(t.Data) != t.Len() {
		return fmt.Sprintf("Tensor{Shape: %v, invalid: %d values}", t.Shape, len(t.Data))
	}
	if len(t.Shape) == 0 {
		return formatValue(t.Data[0])
	}
	if len(t.Data) == 0 {
		return strings.Repeat("[", len(t.Shape)) + strings.Repeat("]", len(t.Shape))
	}
	// Format every value that will be shown first, to align columns.
	width := 0
	t.walkShown(0, 0, func(v float64) {
		width = max(width, len(formatValue(v)))
	})
	var b strings.Builder
	t.format(&b, 0, 0, width)
	return b.String()
}

// shown returns the indexes along an axis of size n that String prints; -1
// stands for the "..." between the kept ends.
func shown(n int) []int {
	if n <= elideAbove {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, 0, 2*elideKeep+1)
	for i := range elideKeep {
		idx = append(idx, i)
	}
	idx = append(idx, -1)
	for i := n - elideKeep; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// walkShown calls fn for every value String prints, starting at axis with
// the sub-array at offset.
func (t Tensor) walkShown(axis, offset int, fn func(float64)) {
	stride := 1
	for _, d := range t.Shape[axis+1:] {
		stride *= d
	}
	for _, i := range shown(t.Shape[axis]) {
		if i < 0 {
			continue
		}
		if axis == len(t.Shape)-1 {
			fn(t.Data[offset+i])
		} else {
			t.walkShown(axis+1, offset+i*stride, fn)
		}
	}
}

func (t Tensor) format(b *strings.Builder, axis, offset, width int) {
	stride := 1
	for _, d := range t.Shape[axis+1:] {
		stride *= d
	}
	b.WriteByte('[')
	last := axis == len(t.Shape)-1
	for k, i := range shown(t.Shape[axis]) {
		if k > 0 {
			if last {
				b.WriteByte(' ')
			} else {
				// NumPy separates rows with a newline, and blocks of
				// higher rank with extra blank lines.
				b.WriteString(strings.Repeat("\n", len(t.Shape)-axis-1))
				b.WriteString(strings.Repeat(" ", axis+1))
			}
		}
		if i < 0 {
			b.WriteString("...")
			continue
		}
		if last {
			s := formatValue(t.Data[offset+i])
			b.WriteString(strings.Repeat(" ", width-len(s)))
			b.WriteString(s)
		} else {
			t.format(b, axis+1, offset+i*stride, width)
		}
	}
	b.WriteByte(']')
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
