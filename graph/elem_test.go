package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// bcastShapeRef is NumPy's broadcast of shapes, written from its rule.
func bcastShapeRef(shapes ...[]int) []int {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
		for _, s := range shapes {
			if j := i - (r - len(s)); j >= 0 && s[j] != 1 {
				out[i] = s[j]
			}
		}
	}
	return out
}

// unravel returns the multi-index of flat index e in shape.
func unravel(e int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = e % shape[d]
		e /= shape[d]
	}
	return idx
}

// bcastIndex returns the flat index in shape s of the element broadcast to
// the multi-index idx of a larger shape.
func bcastIndex(idx, s []int) int {
	k := 0
	for j, d := range s {
		i := idx[len(idx)-len(s)+j]
		if d == 1 {
			i = 0
		}
		k = k*d + i
	}
	return k
}

// bcastRef is the reference of an elementwise op of broadcast operands,
// looked up one output element at a time through multi-indices.
func bcastRef(shapes [][]int, f func(v []float64) float64) func(in [][]float64) []float64 {
	out := bcastShapeRef(shapes...)
	return func(in [][]float64) []float64 {
		res := make([]float64, size(out))
		v := make([]float64, len(shapes))
		for e := range res {
			idx := unravel(e, out)
			for k, s := range shapes {
				v[k] = in[k][bcastIndex(idx, s)]
			}
			res[e] = f(v)
		}
		return res
	}
}

// reduceRef sums (or averages) x of shape over axes (none: all) into the
// kept dimensions, element by element.
func reduceRef(shape []int, mean bool, axes ...int) func(in [][]float64) []float64 {
	red := make([]bool, len(shape))
	for _, a := range axes {
		red[(a+len(shape))%len(shape)] = true
	}
	var kept []int
	count := 1
	for i, d := range shape {
		if red[i] || len(axes) == 0 {
			count *= d
		} else {
			kept = append(kept, d)
		}
	}
	return func(in [][]float64) []float64 {
		out := make([]float64, size(kept))
		for e, v := range in[0] {
			idx := unravel(e, shape)
			k := 0
			for i, d := range shape {
				if !(red[i] || len(axes) == 0) {
					k = k*d + idx[i]
				}
			}
			out[k] += v
		}
		if mean {
			for i := range out {
				out[i] /= float64(count)
			}
		}
		return out
	}
}

// splitRef views shape as [outer, d, inner] around axis.
func splitRef(shape []int, axis int) (outer, d, inner int) {
	return size(shape[:axis]), shape[axis], size(shape[axis+1:])
}

// alongRef applies f to each line of x along axis, writing the line's
// results (one value for a reduction, a line for softmax) in place.
func alongRef(shape []int, axis int, f func(line []float64) []float64) func(in [][]float64) []float64 {
	outer, d, inner := splitRef(shape, axis)
	return func(in [][]float64) []float64 {
		var out []float64
		reduce := false
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				line := make([]float64, d)
				for k := range line {
					line[k] = in[0][(o*d+k)*inner+i]
				}
				res := f(line)
				if out == nil {
					reduce = len(res) == 1 && d != 1
					out = make([]float64, outer*inner*len(res))
				}
				for k, v := range res {
					if reduce {
						out[o*inner+i] = v
					} else {
						out[(o*d+k)*inner+i] = v
					}
				}
			}
		}
		return out
	}
}

func lineMax(l []float64) []float64 { return []float64{slices.Max(l)} }
func lineMin(l []float64) []float64 { return []float64{slices.Min(l)} }

func lineSoftmax(log bool) func(l []float64) []float64 {
	return func(l []float64) []float64 {
		out := make([]float64, len(l))
		s := lse(l)
		for k, v := range l {
			out[k] = v - s
			if !log {
				out[k] = math.Exp(out[k])
			}
		}
		return out
	}
}

func b01(c bool) float64 {
	if c {
		return 1
	}
	return 0
}

// small draws integers in [-1,1], so that comparisons meet ties.
func small(r *rand.Rand, _ int) float64 { return float64(r.IntN(3) - 1) }

// elemOpCases are the element-wise and reduction ops of issue 22, at
// shapes that broadcast size-1 axes from either side across ranks, with
// odd sizes, keep-dims and negative axes.
func elemOpCases() []opCase {
	two := func(f func(a, b *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) }
	}
	one := func(f func(x *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	fn := func(f func(a, b float64) float64) func(v []float64) float64 {
		return func(v []float64) float64 { return f(v[0], v[1]) }
	}
	add := fn(func(a, b float64) float64 { return a + b })
	sub := fn(func(a, b float64) float64 { return a - b })
	mul := fn(func(a, b float64) float64 { return a * b })
	div := fn(func(a, b float64) float64 { return a / b })
	pos := []func(*rand.Rand, int) float64{nil, positive}
	ints := []func(*rand.Rand, int) float64{small, small}
	noDiff := []bool{false, false}
	var cases []opCase
	binCase := func(name string, a, b []int, build func(a, b *graph.Node) *graph.Node, f func(v []float64) float64, gen []func(*rand.Rand, int) float64, diff []bool) {
		cases = append(cases, opCase{name: fmt.Sprintf("%s-%v-%v", name, a, b), shapes: [][]int{a, b}, gen: gen, diff: diff,
			build: two(build), ref: bcastRef([][]int{a, b}, f)})
	}
	binCase("add-bc", []int{3, 1, 5}, []int{7, 1}, graph.Add, add, nil, nil)
	binCase("add-bc", []int{3, 1}, []int{1, 5}, graph.Add, add, nil, nil)
	binCase("add-bc", []int{2, 1, 3, 1}, []int{5, 1, 7}, graph.Add, add, nil, nil)
	binCase("add-bc-vec", []int{1, 3}, []int{5, 3}, graph.Add, add, nil, nil)
	binCase("add-bc-scalar", []int{3, 5}, []int{1, 1}, graph.Add, add, nil, nil)
	binCase("add-bc-scalar", []int{1, 1, 1}, []int{5}, graph.Add, add, nil, nil)
	binCase("sub-bc", []int{5}, []int{3, 1}, graph.Sub, sub, nil, nil)
	binCase("sub-bc", []int{3, 5, 1}, []int{3, 1, 7}, graph.Sub, sub, nil, nil)
	binCase("mul-bc", []int{1, 5, 1}, []int{3, 1, 7}, graph.Mul, mul, nil, nil)
	binCase("mul-bc", []int{7, 1}, []int{}, graph.Mul, mul, nil, nil)
	binCase("div-bc", []int{3, 5, 7}, []int{5, 1}, graph.Div, div, pos, nil)
	binCase("div-bc", []int{5, 1}, []int{3, 1, 7}, graph.Div, div, pos, nil)
	binCase("maximum", []int{3, 1, 5}, []int{7, 1}, graph.Maximum, fn(math.Max), nil, nil)
	binCase("maximum", []int{3, 4}, []int{3, 4}, graph.Maximum, fn(math.Max), nil, nil)
	binCase("maximum", []int{5}, []int{}, graph.Maximum, fn(math.Max), nil, nil)
	binCase("minimum", []int{5}, []int{3, 1}, graph.Minimum, fn(math.Min), nil, nil)
	binCase("minimum", []int{3, 5, 1}, []int{5, 7}, graph.Minimum, fn(math.Min), nil, nil)
	for _, c := range []struct {
		name  string
		build func(a, b *graph.Node) *graph.Node
		f     func(a, b float64) float64
	}{
		{"greater", graph.Greater, func(a, b float64) float64 { return b01(a > b) }},
		{"greater_equal", graph.GreaterEqual, func(a, b float64) float64 { return b01(a >= b) }},
		{"less", graph.Less, func(a, b float64) float64 { return b01(a < b) }},
		{"less_equal", graph.LessEqual, func(a, b float64) float64 { return b01(a <= b) }},
		{"equal", graph.Equal, func(a, b float64) float64 { return b01(a == b) }},
	} {
		// Integers meet ties (no finite differences across a jump); normal
		// values check that the gradient through a comparison is zero.
		binCase(c.name+"-ties", []int{3, 1, 5}, []int{7, 1}, c.build, fn(c.f), ints, noDiff)
		binCase(c.name+"-ties", []int{4, 3}, []int{4, 3}, c.build, fn(c.f), ints, noDiff)
		if c.name != "equal" {
			binCase(c.name, []int{3, 5}, []int{5}, c.build, fn(c.f), nil, nil)
		}
	}
	where := func(v []float64) float64 {
		if v[0] != 0 {
			return v[1]
		}
		return v[2]
	}
	cond := func(r *rand.Rand, _ int) float64 { return float64(r.IntN(2)) }
	for _, s := range [][][]int{
		{{3, 1, 1}, {1, 5, 1}, {7}},
		{{5, 1}, {3, 5, 7}, {}},
		{{4, 3}, {4, 3}, {4, 3}},
		{{7}, {3, 1}, {3, 7}},
	} {
		cases = append(cases, opCase{name: fmt.Sprintf("where-%v-%v-%v", s[0], s[1], s[2]), shapes: s,
			gen: []func(*rand.Rand, int) float64{cond, nil, nil}, diff: []bool{false, true, true},
			build: func(in []*graph.Node) *graph.Node { return graph.Where(in[0], in[1], in[2]) },
			ref:   bcastRef(s, where)})
	}
	for _, c := range []struct {
		shape []int
		keep  bool
		axes  []int
	}{
		{[]int{3, 5, 7}, true, []int{0, 2}},
		{[]int{3, 5, 7}, false, []int{0, 2}},
		{[]int{3, 5, 7}, false, []int{-1}},
		{[]int{3, 5, 7}, true, []int{1}},
		{[]int{3, 5, 7}, true, nil},
		{[]int{3, 5, 7}, false, nil},
		{[]int{3, 5, 7}, false, []int{-3, -2}},
		{[]int{2, 1, 3}, true, []int{1}},
		{[]int{2, 1, 3}, false, []int{1}},
		{[]int{7}, false, []int{0}},
	} {
		for _, mean := range []bool{false, true} {
			name, f := "sum-axes", graph.SumAxes
			if mean {
				name, f = "mean-axes", graph.MeanAxes
			}
			cases = append(cases, opCase{name: fmt.Sprintf("%s-%v-keep=%v-%v", name, c.shape, c.keep, c.axes), shapes: [][]int{c.shape},
				build: one(func(x *graph.Node) *graph.Node { return f(x, c.keep, c.axes...) }),
				ref:   reduceRef(c.shape, mean, c.axes...)})
		}
	}
	for _, c := range []struct {
		shape []int
		axis  int
		keep  bool
	}{
		{[]int{3, 5, 7}, 1, true},
		{[]int{3, 5, 7}, -1, false},
		{[]int{3, 5, 7}, 0, false},
		{[]int{5}, 0, true},
		{[]int{3, 1, 4}, 1, false},
	} {
		ax := (c.axis + len(c.shape)) % len(c.shape)
		gen := []func(*rand.Rand, int) float64{distinct(size(c.shape))}
		cases = append(cases,
			opCase{name: fmt.Sprintf("max-axis-%v-%d-keep=%v", c.shape, c.axis, c.keep), shapes: [][]int{c.shape}, gen: gen,
				build: one(func(x *graph.Node) *graph.Node { return graph.MaxAxis(x, c.axis, c.keep) }),
				ref:   alongRef(c.shape, ax, lineMax)},
			opCase{name: fmt.Sprintf("min-axis-%v-%d-keep=%v", c.shape, c.axis, c.keep), shapes: [][]int{c.shape}, gen: gen,
				build: one(func(x *graph.Node) *graph.Node { return graph.MinAxis(x, c.axis, c.keep) }),
				ref:   alongRef(c.shape, ax, lineMin)})
	}
	for _, c := range []struct {
		shape []int
		axis  int
	}{{[]int{3, 5, 7}, 0}, {[]int{3, 5, 7}, 1}, {[]int{3, 5, 7}, -1}, {[]int{5, 3}, -2}, {[]int{2, 1, 3}, 1}} {
		ax := (c.axis + len(c.shape)) % len(c.shape)
		cases = append(cases,
			opCase{name: fmt.Sprintf("softmax-axis-%v-%d", c.shape, c.axis), shapes: [][]int{c.shape},
				build: one(func(x *graph.Node) *graph.Node { return graph.SoftmaxAxis(x, c.axis) }),
				ref:   alongRef(c.shape, ax, lineSoftmax(false))},
			opCase{name: fmt.Sprintf("log-softmax-axis-%v-%d", c.shape, c.axis), shapes: [][]int{c.shape},
				build: one(func(x *graph.Node) *graph.Node { return graph.LogSoftmaxAxis(x, c.axis) }),
				ref:   alongRef(c.shape, ax, lineSoftmax(true))})
	}
	// Softmax and LogSoftmax work on the last axis of any rank.
	cases = append(cases,
		opCase{name: "softmax-rank4", shapes: [][]int{{2, 3, 1, 5}}, build: one(graph.Softmax),
			ref: alongRef([]int{2, 3, 1, 5}, 3, lineSoftmax(false))},
		opCase{name: "log-softmax-rank3", shapes: [][]int{{3, 2, 5}}, build: one(graph.LogSoftmax),
			ref: alongRef([]int{3, 2, 5}, 2, lineSoftmax(true))},
		opCase{name: "apply-softmax", shapes: [][]int{{2, 3, 5}}, build: one(graph.SoftmaxActivation.Apply),
			ref: alongRef([]int{2, 3, 5}, 2, lineSoftmax(false))})
	for _, act := range []graph.Activation{graph.ReLU, graph.Tanh, graph.Sigmoid, graph.GELU, graph.GELUTanh, graph.SiLU} {
		cases = append(cases, opCase{name: "apply-" + act.String(), shapes: [][]int{{2, 3, 5}},
			build: one(act.Apply), ref: elementwise(actRef(act))})
	}
	return cases
}

// TestBroadcastShapes checks the result shapes of the broadcasting ops
// against NumPy's rule, and that the result does not depend on the order
// of the operands.
func TestBroadcastShapes(t *testing.T) {
	g := graph.New(graph.Float64)
	for _, c := range []struct{ a, b, want []int }{
		{[]int{}, []int{}, []int{}},
		{[]int{}, []int{3, 1}, []int{3, 1}},
		{[]int{1}, []int{}, []int{1}},
		{[]int{3, 1, 5}, []int{7, 1}, []int{3, 7, 5}},
		{[]int{5}, []int{3, 1}, []int{3, 5}},
		{[]int{1, 1}, []int{4}, []int{1, 4}},
		{[]int{0, 3}, []int{1}, []int{0, 3}},
		{[]int{2, 1, 3, 1}, []int{5, 1, 7}, []int{2, 5, 3, 7}},
	} {
		a, b := g.Placeholder("a", c.a...), g.Placeholder("b", c.b...)
		for name, f := range map[string]func(a, b *graph.Node) *graph.Node{
			"add": graph.Add, "sub": graph.Sub, "mul": graph.Mul, "div": graph.Div,
			"maximum": graph.Maximum, "minimum": graph.Minimum, "greater": graph.Greater, "equal": graph.Equal,
		} {
			for _, n := range []*graph.Node{f(a, b), f(b, a)} {
				if got := n.Shape(); !slices.Equal(got, c.want) {
					t.Errorf("%s(%v, %v) has shape %v, want %v", name, c.a, c.b, got, c.want)
				}
			}
		}
		if got := graph.Where(g.Placeholder("c", 1), a, b).Shape(); len(c.want) > 0 && !slices.Equal(got, c.want) {
			t.Errorf("where([1], %v, %v) has shape %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestReduceShapes checks the result shapes of the reductions.
func TestReduceShapes(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 3, 5, 7)
	for _, c := range []struct {
		name string
		n    *graph.Node
		want []int
	}{
		{"sum all", graph.SumAxes(x, false), []int{}},
		{"sum all keep", graph.SumAxes(x, true), []int{1, 1, 1}},
		{"sum 0,2 keep", graph.SumAxes(x, true, 0, 2), []int{1, 5, 1}},
		{"mean -1", graph.MeanAxes(x, false, -1), []int{3, 5}},
		{"mean 2,0", graph.MeanAxes(x, false, 2, 0), []int{5}},
		{"max 1", graph.MaxAxis(x, 1, false), []int{3, 7}},
		{"min -3 keep", graph.MinAxis(x, -3, true), []int{1, 5, 7}},
		{"softmax 0", graph.SoftmaxAxis(x, 0), []int{3, 5, 7}},
		{"log softmax -2", graph.LogSoftmaxAxis(x, -2), []int{3, 5, 7}},
	} {
		if got := c.n.Shape(); !slices.Equal(got, c.want) {
			t.Errorf("%s: shape %v, want %v", c.name, got, c.want)
		}
	}
}

// TestElemShapeErrors checks that misuse panics with an ErrShape error
// naming the op and the shapes.
func TestElemShapeErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	a, b := g.Placeholder("a", 2, 3), g.Placeholder("b", 4, 3)
	c3, e := g.Placeholder("c", 3, 1, 5), g.Placeholder("e", 2, 0)
	for _, c := range []struct {
		name string
		fn   func()
		want string
	}{
		{"add", func() { graph.Add(a, b) }, "graph: add: want shapes that broadcast, got [2 3] and [4 3]"},
		{"sub-rank", func() { graph.Sub(c3, b) }, "graph: sub: want shapes that broadcast, got [3 1 5] and [4 3]"},
		{"mul", func() { graph.Mul(b, a) }, "graph: mul: want shapes that broadcast, got [4 3] and [2 3]"},
		{"div", func() { graph.Div(a, g.Placeholder("v2", 2)) }, "graph: div: want shapes that broadcast, got [2 3] and [2]"},
		{"maximum", func() { graph.Maximum(a, b) }, "graph: maximum: want shapes that broadcast, got [2 3] and [4 3]"},
		{"minimum", func() { graph.Minimum(a, b) }, "graph: minimum: want shapes that broadcast, got [2 3] and [4 3]"},
		{"greater", func() { graph.Greater(a, b) }, "graph: greater: want shapes that broadcast, got [2 3] and [4 3]"},
		{"greater_equal", func() { graph.GreaterEqual(a, b) }, "graph: greater_equal: want shapes that broadcast, got [2 3] and [4 3]"},
		{"less", func() { graph.Less(a, b) }, "graph: less: want shapes that broadcast, got [2 3] and [4 3]"},
		{"less_equal", func() { graph.LessEqual(a, b) }, "graph: less_equal: want shapes that broadcast, got [2 3] and [4 3]"},
		{"equal", func() { graph.Equal(a, b) }, "graph: equal: want shapes that broadcast, got [2 3] and [4 3]"},
		{"where-ab", func() { graph.Where(a, a, b) }, "graph: where: want shapes that broadcast, got [2 3], [2 3] and [4 3]"},
		{"where-cond", func() { graph.Where(b, a, a) }, "graph: where: want shapes that broadcast, got [4 3], [2 3] and [2 3]"},
		{"sum-axes-range", func() { graph.SumAxes(a, false, 2) }, "graph: sum_axes: want axes in [-2,2), got [2] for shape [2 3]"},
		{"mean-axes-repeat", func() { graph.MeanAxes(a, true, 1, -1) }, "graph: mean_axes: want distinct axes, got [1 -1] for shape [2 3]"},
		{"max-axis-range", func() { graph.MaxAxis(a, -3, false) }, "graph: max_axis: want axis in [-2,2), got -3 for shape [2 3]"},
		{"min-axis-empty", func() { graph.MinAxis(e, 1, false) }, "graph: min_axis: want a non-empty axis 1, got shape [2 0]"},
		{"softmax-axis-range", func() { graph.SoftmaxAxis(a, 2) }, "graph: softmax_axis: want axis in [-2,2), got 2 for shape [2 3]"},
		{"log-softmax-axis-scalar", func() { graph.LogSoftmaxAxis(g.Placeholder("s"), 0) }, "graph: log_softmax_axis: want axis in [-0,0), got 0 for shape []"},
		{"apply", func() { graph.Activation(-1).Apply(a) }, "graph: activate: want an activation Linear..SoftmaxActivation, got Activation(-1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := panics(c.fn)
			err, ok := v.(error)
			if !ok {
				t.Fatalf("panicked with %v (%T), want an error", v, v)
			}
			if err.Error() != c.want || !errors.Is(err, graph.ErrShape) {
				t.Errorf("error = %q (ErrShape: %v)\nwant    %q", err, errors.Is(err, graph.ErrShape), c.want)
			}
		})
	}
}

// runOnce compiles outs, feeds the placeholders and returns each output's
// value.
func runOnce(t *testing.T, g *graph.Graph, feeds map[*graph.Node][]float64, outs ...*graph.Node) [][]float64 {
	t.Helper()
	p, err := g.Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	for n, v := range feeds {
		p.Feed(n, v)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		res[i] = p.Value(o)
	}
	return res
}

// TestTieGradients checks where the gradient goes on ties, which finite
// differences cannot: MaxAxis and MinAxis send it to the first extreme
// element, Maximum to a and Minimum to a.
func TestTieGradients(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New(dt)
			x := g.Placeholder("x", 2, 4)
			a, b := g.Placeholder("a", 4), g.Placeholder("b", 2, 4)
			loss := graph.Add(
				graph.Add(graph.Sum(graph.MaxAxis(x, 1, false)), graph.Scale(graph.Sum(graph.MinAxis(x, 0, false)), 10)),
				graph.Add(graph.Sum(graph.Maximum(a, b)), graph.Scale(graph.Sum(graph.Minimum(a, b)), 100)))
			grads := g.Gradients(loss, []*graph.Node{x, a, b})
			got := runOnce(t, g, map[*graph.Node][]float64{
				x: {1, 3, 3, 0, 2, 2, 0, 0},
				a: {1, 2, 3, 4},
				b: {1, 0, 5, 4, 1, 2, 3, 9},
			}, grads...)
			for _, c := range []struct {
				name      string
				got, want []float64
			}{
				// Row maxima 3 (first at 1) and 2 (first at 0); column minima
				// 1|2, 2|3, 0|3, 0|0 (first at row 0 on the tie).
				{"dx", got[0], []float64{10, 1, 0, 10, 1, 10, 10, 0}},
				// Elements where a ≥ b send max's gradient to a, where
				// a ≤ b min's; a is broadcast over b's two rows.
				{"da", got[1], []float64{1 + 1 + 100 + 100, 1 + 1 + 100, 1 + 100 + 100, 1 + 100 + 100}},
				{"db", got[2], []float64{0, 100, 1, 0, 0, 0, 0, 1}},
			} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestCompareNaN checks the comparisons and Where on NaN: every comparison
// with NaN is 0, and a NaN condition picks a.
func TestCompareNaN(t *testing.T) {
	g := graph.New(graph.Float64)
	a, b := g.Placeholder("a", 3), g.Placeholder("b", 3)
	outs := []*graph.Node{graph.Greater(a, b), graph.GreaterEqual(a, b), graph.Less(a, b), graph.LessEqual(a, b),
		graph.Equal(a, b), graph.Where(a, g.Const(1), g.Const(2)), graph.Maximum(a, b), graph.Minimum(b, a)}
	nan := math.NaN()
	got := runOnce(t, g, map[*graph.Node][]float64{a: {nan, 1, 0}, b: {1, nan, 0}}, outs...)
	want := [][]float64{{0, 0, 0}, {0, 0, 1}, {0, 0, 0}, {0, 0, 1}, {0, 0, 1}, {1, 1, 2}, {nan, nan, 0}, {nan, nan, 0}}
	for i := range outs {
		for j := range want[i] {
			if !near(got[i][j], want[i][j], 0) {
				t.Errorf("%v = %v, want %v", outs[i], got[i], want[i])
				break
			}
		}
	}
}

// TestAddSameShape: the strict add computes what Add computes for equal
// shapes, and refuses shapes Add would broadcast with an error wrapping
// ErrShape that names both.
func TestAddSameShape(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	y := graph.AddSameShape(x, graph.Scale(x, 2))
	dx := g.Gradients(graph.Sum(y), []*graph.Node{x})[0]
	p, err := g.Compile(y, dx)
	if err != nil {
		t.Fatal(err)
	}
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(p.Value(y), p.Value(dx)), "[3 6 9 12 15 18] [3 3 3 3 3 3]"; got != want {
		t.Errorf("AddSameShape(x, 2x) and its gradient: got %s, want %s", got, want)
	}
	for _, shape := range [][]int{{3}, {2, 1}, {1, 2, 3}} {
		v := panics(func() { graph.AddSameShape(x, g.Placeholder("b", shape...)) })
		err, _ := v.(error)
		if !errors.Is(err, graph.ErrShape) {
			t.Fatalf("AddSameShape([2 3], %v): panic %v, want an error wrapping ErrShape", shape, v)
		}
		if want := fmt.Sprintf("graph: add: want operands of one shape, got [2 3] and %v", shape); err.Error() != want {
			t.Errorf("AddSameShape([2 3], %v): %q, want %q", shape, err, want)
		}
	}
}
