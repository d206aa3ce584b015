package graph_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// issue22OpCases are the op cases of the shape, product, normalization and
// attention ops (issue 22); opCases runs them forward, through finite
// differences and on the device.
func issue22OpCases() []opCase {
	cases := shapeOpCases()
	cases = append(cases, batchMatMulOpCases()...)
	cases = append(cases, normOpCases()...)
	cases = append(cases, attentionOpCases()...)
	return append(cases, selfAttentionOpCases()...)
}

// strides returns the row-major strides of shape in elements.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

func transposeRef(shape, perm []int) func(in [][]float64) []float64 {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[i] = shape[p]
	}
	st := strides(shape)
	return func(in [][]float64) []float64 {
		res := make([]float64, size(shape))
		for o := range res {
			src := 0
			for i, v := range unravel(o, out) {
				src += v * st[perm[i]]
			}
			res[o] = in[0][src]
		}
		return res
	}
}

// permutations returns every ordering of 0..r-1.
func permutations(r int) [][]int {
	if r == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(r - 1) {
		for at := 0; at <= len(p); at++ {
			out = append(out, slices.Insert(slices.Clone(p), at, r-1))
		}
	}
	return out
}

// sliceRef keeps [from, to) along axis of shape.
func sliceRef(shape []int, axis, from, to int) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		var out []float64
		for i, v := range in[0] {
			if k := unravel(i, shape)[axis]; k >= from && k < to {
				out = append(out, v)
			}
		}
		return out
	}
}

// concatRef joins inputs of the given shapes along axis.
func concatRef(shapes [][]int, axis int) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		outer := size(shapes[0][:axis])
		var out []float64
		for o := 0; o < outer; o++ {
			for i, s := range shapes {
				w := size(s[axis:])
				out = append(out, in[i][o*w:(o+1)*w]...)
			}
		}
		return out
	}
}

func shapeOpCases() []opCase {
	var cases []opCase
	// Every permutation up to rank 4, on axes of distinct lengths, and on
	// shapes with axes of length 1 (which Transpose turns into Reshape
	// where the other axes keep their order).
	for _, shape := range [][]int{{3}, {2, 3}, {2, 3, 4}, {2, 3, 4, 5}, {2, 1, 3}, {3, 1, 2, 1}} {
		for _, perm := range permutations(len(shape)) {
			cases = append(cases, opCase{name: fmt.Sprintf("transpose-%v-%v", shape, perm), shapes: [][]int{shape},
				build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0], perm...) },
				ref:   transposeRef(shape, perm)})
		}
	}
	cases = append(cases,
		opCase{name: "transpose-reverse", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0]) },
			ref:   transposeRef([]int{2, 3, 4}, []int{2, 1, 0})},
		opCase{name: "slice-axis1", shapes: [][]int{{3, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], 1, 1, 4) },
			ref:   sliceRef([]int{3, 5}, 1, 1, 4)},
		opCase{name: "slice-axis0-rank3", shapes: [][]int{{3, 2, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], 0, 1, 2) },
			ref:   sliceRef([]int{3, 2, 4}, 0, 1, 2)},
		opCase{name: "slice-last-negative", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], -1, 2, 4) },
			ref:   sliceRef([]int{2, 3, 4}, 2, 2, 4)},
		opCase{name: "slice-empty", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], 1, 2, 2) },
			ref:   sliceRef([]int{2, 3}, 1, 2, 2)},
		opCase{name: "slice-of-slice-grad", shapes: [][]int{{2, 6}},
			// A slice of a slice: the second's gradient feeds the first's.
			build: func(in []*graph.Node) *graph.Node {
				return graph.Slice(graph.Square(graph.Slice(in[0], 1, 1, 5)), 1, 1, 3)
			},
			ref: func(in [][]float64) []float64 {
				return elementwise(func(x float64) float64 { return x * x })([][]float64{sliceRef([]int{2, 6}, 1, 2, 4)(in)})
			}},
		opCase{name: "concat-axis0", shapes: [][]int{{1, 3}, {2, 3}, {3, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(0, in...) },
			ref:   concatRef([][]int{{1, 3}, {2, 3}, {3, 3}}, 0)},
		opCase{name: "concat-axis1", shapes: [][]int{{2, 1, 3}, {2, 2, 3}, {2, 3, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(1, in...) },
			ref:   concatRef([][]int{{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, 1)},
		opCase{name: "concat-last-negative", shapes: [][]int{{2, 2}, {2, 0}, {2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(-1, in...) },
			ref:   concatRef([][]int{{2, 2}, {2, 0}, {2, 3}}, 1)},
		opCase{name: "concat-same-input", shapes: [][]int{{2, 3}},
			// x twice: its gradient sums both slices of dy.
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(1, in[0], in[0]) },
			ref: func(in [][]float64) []float64 {
				return concatRef([][]int{{2, 3}, {2, 3}}, 1)([][]float64{in[0], in[0]})
			}},
		opCase{name: "split", shapes: [][]int{{3, 4}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 1, 2, 2)
				return graph.Mul(p[0], p[1])
			},
			ref: func(in [][]float64) []float64 {
				var out []float64
				for i := 0; i < 3; i++ {
					for j := 0; j < 2; j++ {
						out = append(out, in[0][i*4+j]*in[0][i*4+j+2])
					}
				}
				return out
			}},
		// A Split's parts tile x, so x's gradient joins theirs (Concat);
		// parts left unused, overlapping slices and slices along two axes
		// do not, and their gradients are summed.
		opCase{name: "split-part-used-twice", shapes: [][]int{{2, 5}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 1, 2, 3)
				return graph.Concat(1, graph.Mul(p[0], p[0]), p[1], p[0])
			},
			ref: func(in [][]float64) []float64 {
				var out []float64
				for i := 0; i < 2; i++ {
					r := in[0][i*5 : i*5+5]
					out = append(out, r[0]*r[0], r[1]*r[1], r[2], r[3], r[4], r[0], r[1])
				}
				return out
			}},
		opCase{name: "split-part-unused", shapes: [][]int{{2, 6}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 1, 2, 2, 2)
				return graph.Mul(p[0], p[2])
			},
			ref: func(in [][]float64) []float64 {
				x := in[0]
				return []float64{x[0] * x[4], x[1] * x[5], x[6] * x[10], x[7] * x[11]}
			}},
		opCase{name: "slices-overlapping", shapes: [][]int{{2, 4}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.Mul(graph.Slice(in[0], 1, 0, 3), graph.Slice(in[0], 1, 1, 4))
			},
			ref: func(in [][]float64) []float64 {
				x := in[0]
				return []float64{x[0] * x[1], x[1] * x[2], x[2] * x[3], x[4] * x[5], x[5] * x[6], x[6] * x[7]}
			}},
		opCase{name: "slices-two-axes", shapes: [][]int{{2, 2}},
			// [0, 1) along axis 0 and [1, 2) along axis 1: lengths that
			// would tile either axis, were they along one.
			build: func(in []*graph.Node) *graph.Node {
				a := graph.Reshape(graph.Slice(in[0], 0, 0, 1), 2)
				b := graph.Reshape(graph.Slice(in[0], 1, 1, 2), 2)
				return graph.Concat(0, graph.Square(a), b)
			},
			ref: func(in [][]float64) []float64 {
				x := in[0]
				return []float64{x[0] * x[0], x[1] * x[1], x[1], x[3]}
			}},
		opCase{name: "split-uneven-axis0", shapes: [][]int{{5, 2}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 0, 1, 3, 1)
				return graph.Concat(0, p[2], graph.Square(p[1]), p[0])
			},
			ref: func(in [][]float64) []float64 {
				x := in[0]
				out := slices.Clone(x[8:10])
				for _, v := range x[2:8] {
					out = append(out, v*v)
				}
				return append(out, x[0:2]...)
			}},
	)
	for _, axis := range []int{0, 1, 2, -1} {
		cases = append(cases, opCase{name: fmt.Sprintf("stack-axis%d", axis), shapes: [][]int{{2, 3}, {2, 3}, {2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Stack(axis, in...) },
			ref: func(in [][]float64) []float64 {
				a := axis
				if a < 0 {
					a += 3
				}
				shape := slices.Insert([]int{2, 3}, a, 3)
				out := make([]float64, 18)
				for o := range out {
					idx := unravel(o, shape)
					k := idx[a]
					src := slices.Delete(idx, a, a+1)
					out[o] = in[k][src[0]*3+src[1]]
				}
				return out
			}})
	}
	return cases
}

// TestTransposeShares checks that a transpose moving only axes of length
// 1 is a Reshape (no copy), and that the others copy.
func TestTransposeShares(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 1, 3, 1)
	for _, c := range []struct {
		perm []int
		op   string
	}{
		{[]int{0, 1, 2, 3}, "x"},
		{[]int{1, 0, 3, 2}, "reshape"},
		{[]int{3, 0, 1, 2}, "reshape"},
		{[]int{2, 1, 0, 3}, "transpose"},
	} {
		if got := graph.Transpose(x, c.perm...).Name(); !strings.HasPrefix(got, c.op) {
			t.Errorf("Transpose(%v, %v) is %s, want a %s", x.Shape(), c.perm, got, c.op)
		}
	}
}

func TestShapeOpShapes(t *testing.T) {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 2, 3, 4, 5)
	a, b := g.Placeholder("a", 2, 3), g.Placeholder("b", 2, 3)
	split := graph.Split(x, 2, 1, 0, 3)
	cases := []struct {
		name string
		n    *graph.Node
		want string
	}{
		{"transpose", graph.Transpose(x, 0, 2, 1, 3), "[2 4 3 5]"},
		{"transpose-reverse", graph.Transpose(x), "[5 4 3 2]"},
		{"slice", graph.Slice(x, -2, 1, 3), "[2 3 2 5]"},
		{"slice-whole", graph.Slice(x, 0, 0, 2), "[2 3 4 5]"},
		{"concat", graph.Concat(0, a, b, a), "[6 3]"},
		{"split-0", split[0], "[2 3 1 5]"},
		{"split-1", split[1], "[2 3 0 5]"},
		{"split-2", split[2], "[2 3 3 5]"},
		{"stack-0", graph.Stack(0, a, b), "[2 2 3]"},
		{"stack-last", graph.Stack(-1, a, b), "[2 3 2]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(c.n.Shape()); got != c.want {
			t.Errorf("%s: shape %s, want %s", c.name, got, c.want)
		}
	}
}

// checkShapeErrors runs each case and wants a panic with exactly its
// message, wrapping ErrShape.
func checkShapeErrors(t *testing.T, cases []shapeErrCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := panics(c.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, graph.ErrShape) || err.Error() != c.want {
				t.Errorf("panic %v, want %q wrapping ErrShape", v, c.want)
			}
		})
	}
}

type shapeErrCase struct {
	name string
	fn   func()
	want string
}

func TestShapeOpErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 2, 3, 4)
	y := g.Placeholder("y", 2, 5, 4)
	checkShapeErrors(t, []shapeErrCase{
		{"transpose-length", func() { graph.Transpose(x, 0, 1) },
			"graph: transpose: want a permutation of the 3 axes of [2 3 4], got [0 1]"},
		{"transpose-repeat", func() { graph.Transpose(x, 0, 1, 1) },
			"graph: transpose: want a permutation of the 3 axes of [2 3 4], got [0 1 1]"},
		{"transpose-range", func() { graph.Transpose(x, 0, 1, 3) },
			"graph: transpose: want a permutation of the 3 axes of [2 3 4], got [0 1 3]"},
		{"slice-axis", func() { graph.Slice(x, 3, 0, 1) },
			"graph: slice: want axis in [-3,3), got 3 for shape [2 3 4]"},
		{"slice-range", func() { graph.Slice(x, 1, 2, 4) },
			"graph: slice: want 0 ≤ from ≤ to ≤ 3, got [2, 4) along axis 1 of [2 3 4]"},
		{"slice-reversed", func() { graph.Slice(x, -1, 2, 1) },
			"graph: slice: want 0 ≤ from ≤ to ≤ 4, got [2, 1) along axis 2 of [2 3 4]"},
		{"concat-none", func() { graph.Concat(0) }, "graph: concat: want at least one node, got none"},
		{"concat-shapes", func() { graph.Concat(2, x, y) },
			"graph: concat: want shapes equal except along axis 2, got [2 3 4] and [2 5 4]"},
		{"concat-rank", func() { graph.Concat(0, x, g.Placeholder("v", 4)) },
			"graph: concat: want shapes equal except along axis 0, got [2 3 4] and [4]"},
		{"split-sum", func() { graph.Split(x, 1, 1, 1) },
			"graph: split: want non-negative sizes adding up to 3 along axis 1 of [2 3 4], got [1 1]"},
		{"split-negative", func() { graph.Split(x, 1, 4, -1) },
			"graph: split: want non-negative sizes adding up to 3 along axis 1 of [2 3 4], got [4 -1]"},
		{"split-none", func() { graph.Split(x, 0) },
			"graph: split: want non-negative sizes adding up to 2 along axis 0 of [2 3 4], got []"},
		{"stack-shapes", func() { graph.Stack(0, x, y) }, "graph: stack: want equal shapes, got [2 3 4] and [2 5 4]"},
		{"stack-axis", func() { graph.Stack(4, x, x) }, "graph: stack: want axis in [-4,3], got 4 for shape [2 3 4]"},
	})
}

func ExampleTranspose() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	y := graph.Transpose(x, 1, 0)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	p.Run()
	fmt.Println(y.Shape(), p.Value(y))
	// Output: [3 2] [1 4 2 5 3 6]
}

func ExampleSplit() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	parts := graph.Split(x, 1, 1, 2)
	joined := graph.Concat(1, parts[1], parts[0])
	p, _ := g.Compile(parts[0], joined)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	p.Run()
	fmt.Println(p.Value(parts[0]), p.Value(joined))
	// Output: [1 4] [2 3 1 5 6 4]
}

func ExampleStack() {
	g := graph.New(graph.Float64)
	a, b := g.Placeholder("a", 2), g.Placeholder("b", 2)
	s := graph.Stack(1, a, b)
	p, _ := g.Compile(s)
	p.Feed(a, []float64{1, 2})
	p.Feed(b, []float64{3, 4})
	p.Run()
	fmt.Println(s.Shape(), p.Value(s))
	// Output: [2 2] [1 3 2 4]
}

func ExampleSlice() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	s := graph.Slice(x, 1, 1, 3)
	p, _ := g.Compile(s)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	p.Run()
	fmt.Println(s.Shape(), p.Value(s))
	// Output: [2 2] [2 3 5 6]
}

func ExampleConcat() {
	g := graph.New(graph.Float64)
	a, b := g.Placeholder("a", 1, 2), g.Placeholder("b", 2, 2)
	c := graph.Concat(0, a, b)
	p, _ := g.Compile(c)
	p.Feed(a, []float64{1, 2})
	p.Feed(b, []float64{3, 4, 5, 6})
	p.Run()
	fmt.Println(c.Shape(), p.Value(c))
	// Output: [3 2] [1 2 3 4 5 6]
}

// TestIssue22Same: graphs that differ only in a permutation, a slice's
// start or a norm's parameters are not the same computation.
func TestIssue22Same(t *testing.T) {
	type params struct {
		perm []int
		from int
		eps  float64
		rms  bool
	}
	build := func(p params) *graph.Graph {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 3, 3, 3) // every permutation has its shape
		y := graph.Slice(graph.Transpose(x, p.perm...), 0, p.from, p.from+1)
		if p.rms {
			graph.RMSNorm(y, nil, p.eps)
		} else {
			graph.LayerNorm(y, nil, nil, p.eps)
		}
		return g
	}
	base := params{perm: []int{2, 0, 1}, from: 1, eps: 1e-5}
	tests := []struct {
		name string
		p    params
		want bool
	}{
		{"same", base, true},
		{"perm", params{perm: []int{1, 2, 0}, from: 1, eps: 1e-5}, false},
		{"from", params{perm: []int{2, 0, 1}, from: 2, eps: 1e-5}, false},
		{"eps", params{perm: []int{2, 0, 1}, from: 1, eps: 1e-6}, false},
		{"rms", params{perm: []int{2, 0, 1}, from: 1, eps: 1e-5, rms: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build(base).Same(build(tt.p)); got != tt.want {
				t.Errorf("Same = %v, want %v", got, tt.want)
			}
		})
	}
}
