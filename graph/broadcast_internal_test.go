package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// TestBcastDims checks the merged index space of broadcasts: size-1 axes
// dropped, axes merged where every operand steps across them alike, and a
// stride of 0 along the axes an operand is broadcast along.
func TestBcastDims(t *testing.T) {
	for _, c := range []struct {
		shape    []int
		operands [][]int
		dims     string
		strides  string
	}{
		{[]int{3, 5, 7}, [][]int{{3, 5, 7}, {3, 5, 7}}, "[105]", "[[1] [1]]"},
		{[]int{3, 5, 7}, [][]int{{3, 5, 7}, {5, 7}}, "[3 35]", "[[35 1] [0 1]]"},
		{[]int{3, 5, 7}, [][]int{{3, 1, 7}, {5, 1}}, "[3 5 7]", "[[7 0 1] [0 1 0]]"},
		{[]int{3, 1, 5}, [][]int{{3, 1, 5}, {1}}, "[15]", "[[1] [0]]"},
		{[]int{2, 3, 4, 5}, [][]int{{2, 3, 1, 1}, {4, 5}}, "[6 20]", "[[1 0] [0 1]]"},
		{[]int{1, 1}, [][]int{{1}, {}}, "[1]", "[[0] [0]]"},
		{[]int{4, 1, 6}, [][]int{{1, 1, 6}}, "[4 6]", "[[0 1]]"},
	} {
		dims, strides := bcastDims(c.shape, c.operands...)
		if got := fmt.Sprint(dims); got != c.dims {
			t.Errorf("bcastDims(%v, %v): dims %s, want %s", c.shape, c.operands, got, c.dims)
		}
		if got := fmt.Sprint(strides); got != c.strides {
			t.Errorf("bcastDims(%v, %v): strides %s, want %s", c.shape, c.operands, got, c.strides)
		}
	}
}

// TestBcastMode checks that the layouts arithKernel and gt_binary handle
// without index arithmetic keep their modes, so the MLP's bias and loss ops stay on them.
func TestBcastMode(t *testing.T) {
	for _, c := range []struct {
		a, b []int
		want bcast
	}{
		{[]int{4, 3}, []int{4, 3}, bSame},
		{[]int{4, 3}, []int{}, bScalarB},
		{[]int{1}, []int{4, 3}, bScalarA},
		{[]int{4, 3}, []int{1, 1}, bScalarB},
		{[]int{4, 3}, []int{3}, bVecB},
		{[]int{1, 3}, []int{2, 4, 3}, bVecA},
		{[]int{4, 1}, []int{4, 3}, bGeneral},
		{[]int{3}, []int{3, 1}, bGeneral},
		{[]int{1, 1, 3}, []int{4, 3}, bGeneral},
	} {
		out, _ := tryBroadcast(c.a, c.b)
		if got := bcastMode(c.a, c.b, out); got != c.want {
			t.Errorf("bcastMode(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestArithKernelMatchesGeneralLoop checks the vector paths of Add, Sub,
// Mul and Div, and binaryKernel's per-element path, against a naive loop
// over broadcast indices (naiveBinary), bit for bit, for both dtypes and every layout: equal
// shapes, scalars, a vector along the last axis on either side (a bias, a
// batch norm's [C] against [N,H,W,C]), a per-row column ([N,C] with [N,1])
// on either side, and strided runs; with signed zeros, infinities, NaN and
// subnormals among the values.
func TestArithKernelMatchesGeneralLoop(t *testing.T) {
	testArithKernel[float32](t)
	testArithKernel[float64](t)
}

func testArithKernel[T Float](t *testing.T) {
	ops := []struct {
		name string
		op   loops.Op
		f    func(a, b T) T
		node func(a, b *Node) *Node
	}{
		{"add", loops.OpAdd, func(a, b T) T { return a + b }, Add},
		{"sub", loops.OpSub, func(a, b T) T { return a - b }, Sub},
		{"mul", loops.OpMul, func(a, b T) T { return a * b }, Mul},
		{"div", loops.OpDiv, func(a, b T) T { return a / b }, Div},
	}
	shapes := []struct{ a, b []int }{
		{[]int{5, 11}, []int{5, 11}},
		{[]int{5, 11}, []int{}},
		{[]int{1}, []int{5, 11}},
		{[]int{2, 3, 3, 13}, []int{1, 1, 1, 13}},
		{[]int{7, 16}, []int{16}},
		{[]int{1, 9}, []int{4, 9}},
		{[]int{1, 1, 16}, []int{3, 2, 16}},
		{[]int{6, 10}, []int{6, 1}},
		{[]int{6, 1}, []int{6, 10}},
		{[]int{3, 1, 7}, []int{5, 1}},
		{[]int{3, 5}, []int{2, 1, 5}},
	}
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 1e-40, -2.5}
	r := rand.New(rand.NewPCG(23, 24))
	values := func(shape []int) []T {
		v := make([]T, sizeOf(shape))
		for i := range v {
			if r.IntN(4) == 0 {
				v[i] = T(special[r.IntN(len(special))])
			} else {
				v[i] = T(r.NormFloat64())
			}
		}
		return v
	}
	dt := Float64
	if _, ok := any(T(0)).(float32); ok {
		dt = Float32
	}
	for _, op := range ops {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%s/%T/%v_%v", op.name, T(0), s.a, s.b), func(t *testing.T) {
				g := New(dt)
				n := op.node(g.Placeholder("a", s.a...), g.Placeholder("b", s.b...))
				a, b := values(s.a), values(s.b)
				got, want := make([]T, n.size), make([]T, n.size)
				arithKernel(n, [][]T{a, b}, got, op.op, op.f)()
				naiveBinary(want, n.shape, a, s.a, b, s.b, op.f)
				perElem := make([]T, n.size)
				binaryKernel(n, [][]T{a, b}, perElem, op.f)()
				for i := range want {
					if math.Float64bits(float64(perElem[i])) != math.Float64bits(float64(want[i])) {
						t.Fatalf("binaryKernel: [%d] = %v, naive loop %v", i, perElem[i], want[i])
					}
				}
				for i := range want {
					if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
						t.Fatalf("arithKernel: [%d] = %v, naive loop %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// naiveBinary is out[e] = f(a[ia], b[ib]) with ia and ib found from e's
// index in shape by NumPy's rule, one element at a time.
func naiveBinary[T Float](out []T, shape []int, a []T, sa []int, b []T, sb []int, f func(a, b T) T) {
	at := func(e int, s []int) int {
		i, stride := 0, 1
		for k := len(shape) - 1; k >= 0; k-- {
			x := e % shape[k]
			e /= shape[k]
			if j := k - (len(shape) - len(s)); j >= 0 {
				if s[j] != 1 {
					i += x * stride
				}
				stride *= s[j]
			}
		}
		return i
	}
	for e := range out {
		out[e] = f(a[at(e, sa)], b[at(e, sb)])
	}
}
