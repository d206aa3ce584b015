package graph_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// attentionRef is naive attention over q [n, tq, d], k [n, tk, d] and v
// [n, tk, dv], n the product of the batch axes.
func attentionRef(n, tq, tk, d, dv int, causal bool) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		q, k, v := in[0], in[1], in[2]
		out := make([]float64, n*tq*dv)
		for b := 0; b < n; b++ {
			for i := 0; i < tq; i++ {
				w := make([]float64, tk)
				var mx float64 = math.Inf(-1)
				for j := range w {
					if causal && j > i+tk-tq {
						w[j] = math.Inf(-1)
						continue
					}
					for p := 0; p < d; p++ {
						w[j] += q[(b*tq+i)*d+p] * k[(b*tk+j)*d+p]
					}
					w[j] /= math.Sqrt(float64(d))
					mx = math.Max(mx, w[j])
				}
				var s float64
				for j := range w {
					w[j] = math.Exp(w[j] - mx)
					s += w[j]
				}
				for j := range w {
					for p := 0; p < dv; p++ {
						out[(b*tq+i)*dv+p] += w[j] / s * v[(b*tk+j)*dv+p]
					}
				}
			}
		}
		return out
	}
}

func causalSoftmaxRef(tq, tk int) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		out := make([]float64, len(in[0]))
		for r := 0; r < len(out)/tk; r++ {
			row, o := in[0][r*tk:(r+1)*tk], out[r*tk:(r+1)*tk]
			last := r%tq + tk - tq // the last key query r sees
			l := lse(row[:last+1])
			for j := 0; j <= last; j++ {
				o[j] = math.Exp(row[j] - l)
			}
		}
		return out
	}
}

func attentionOpCases() []opCase {
	att := func(causal bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return graph.Attention(in[0], in[1], in[2], causal) }
	}
	return []opCase{
		{name: "causal_mask-softmax", shapes: [][]int{{2, 3, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Softmax(graph.CausalMask(in[0])) },
			ref:   causalSoftmaxRef(3, 3)},
		{name: "causal_mask-softmax-wide", shapes: [][]int{{2, 2, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.Softmax(graph.CausalMask(in[0])) },
			ref:   causalSoftmaxRef(2, 4)},
		{name: "attention", shapes: [][]int{{2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 2}}, build: att(false),
			ref: attentionRef(4, 3, 3, 4, 2, false)},
		{name: "attention-causal", shapes: [][]int{{2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 3, 2}}, build: att(true),
			ref: attentionRef(4, 3, 3, 4, 2, true)},
		{name: "attention-causal-fewer-queries", shapes: [][]int{{1, 2, 2, 3}, {1, 2, 4, 3}, {1, 2, 4, 3}}, build: att(true),
			ref: attentionRef(2, 2, 4, 3, 3, true)},
		{name: "attention-causal-rows-past-a-vector", shapes: [][]int{{1, 2, 11, 3}, {1, 2, 11, 3}, {1, 2, 11, 2}}, build: att(true),
			ref: attentionRef(2, 11, 11, 3, 2, true)},
		{name: "attention-rank3", shapes: [][]int{{2, 4, 3}, {2, 5, 3}, {2, 5, 2}}, build: att(false),
			ref: attentionRef(2, 4, 5, 3, 2, false)},
	}
}

// TestCausalMask checks the mask's values, -Inf included, for square and
// wide score matrices.
func TestCausalMask(t *testing.T) {
	inf := math.Inf(-1)
	for _, c := range []struct {
		shape []int
		want  []float64
	}{
		{[]int{3, 3}, []float64{1, inf, inf, 4, 5, inf, 7, 8, 9}},
		{[]int{2, 3}, []float64{1, 2, inf, 4, 5, 6}},
		{[]int{2, 1, 2}, []float64{1, 2, 3, 4}},
		{[]int{2, 2, 2}, []float64{1, inf, 3, 4, 5, inf, 7, 8}},
	} {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", c.shape...)
		y := graph.CausalMask(x)
		p, err := g.Compile(y)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, len(c.want))
		for i := range vals {
			vals[i] = float64(i + 1)
		}
		p.Feed(x, vals)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		if got := p.Value(y); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("CausalMask of %v: got %v, want %v", c.shape, got, c.want)
		}
	}
}

// TestAttentionDropout checks that AttentionDropout drops attention
// weights exactly as Dropout on Attention's weights would, and that rate 0
// is Attention.
func TestAttentionDropout(t *testing.T) {
	g := graph.New(graph.Float64)
	q, k, v := g.Placeholder("q", 2, 5, 4), g.Placeholder("k", 2, 5, 4), g.Placeholder("v", 2, 5, 3)
	step := g.Const(3, 2)
	got := graph.AttentionDropout(q, k, v, true, step, 0.4, 11, 2)
	w := graph.Softmax(graph.CausalMask(graph.BatchMatMul(graph.Scale(q, 0.5), k, false, true)))
	want := graph.BatchMatMul(graph.Dropout(w, step, 0.4, 11, 2), v, false, false)
	plain, rate0 := graph.Attention(q, k, v, true), graph.AttentionDropout(q, k, v, true, step, 0, 11, 2)
	p, err := g.Compile(got, want, plain, rate0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []*graph.Node{q, k, v} {
		vals := make([]float64, n.Len())
		for j := range vals {
			vals[j] = math.Sin(float64(i*100 + j))
		}
		p.Feed(n, vals)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if a, b := p.Value(got), p.Value(want); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("AttentionDropout = %v, want %v", a, b)
	}
	if a, b := p.Value(plain), p.Value(rate0); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("AttentionDropout at rate 0 = %v, want Attention's %v", b, a)
	}
	if a, b := p.Value(got), p.Value(plain); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Errorf("AttentionDropout at rate 0.4 = Attention's %v: nothing dropped", a)
	}
}

func TestAttentionErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	p := func(shape ...int) *graph.Node { return g.Placeholder("p", shape...) }
	checkShapeErrors(t, []shapeErrCase{
		{"qk-depth", func() { graph.Attention(p(2, 4, 8, 16), p(2, 4, 8, 8), p(2, 4, 8, 8), false) },
			"graph: attention: want q [..., tq, d] and k [..., tk, d] with equal batch axes, got [2 4 8 16] and [2 4 8 8]"},
		{"qk-batch", func() { graph.Attention(p(2, 4, 8, 16), p(2, 3, 8, 16), p(2, 3, 8, 16), false) },
			"graph: attention: want q [..., tq, d] and k [..., tk, d] with equal batch axes, got [2 4 8 16] and [2 3 8 16]"},
		{"kv-time", func() { graph.Attention(p(2, 8, 16), p(2, 8, 16), p(2, 7, 16), true) },
			"graph: attention: want k [..., tk, d] and v [..., tk, dv] with equal batch axes, got [2 8 16] and [2 7 16]"},
		{"rank", func() { graph.Attention(p(16), p(16), p(16), true) },
			"graph: attention: want q [..., tq, d] and k [..., tk, d] with equal batch axes, got [16] and [16]"},
		{"causal-queries", func() { graph.Attention(p(2, 9, 16), p(2, 8, 16), p(2, 8, 16), true) },
			"graph: attention: want no more queries than keys for a causal mask, got [2 9 16] and [2 8 16]"},
		{"dropout", func() { graph.AttentionDropout(p(2, 9, 16), p(2, 8, 16), p(2, 8, 16), true, p(2), 0.1, 1, 1) },
			"graph: attention_dropout: want no more queries than keys for a causal mask, got [2 9 16] and [2 8 16]"},
		{"mask-rank", func() { graph.CausalMask(p(4)) }, "graph: causal_mask: want [..., tq, tk] with tq ≤ tk, got [4]"},
		{"mask-tall", func() { graph.CausalMask(p(2, 5, 4)) }, "graph: causal_mask: want [..., tq, tk] with tq ≤ tk, got [2 5 4]"},
	})
}

func ExampleAttention() {
	g := graph.New(graph.Float64)
	// One head, two positions of depth 1: the first can only see itself.
	q := g.Placeholder("q", 1, 1, 2, 1)
	k := g.Placeholder("k", 1, 1, 2, 1)
	v := g.Placeholder("v", 1, 1, 2, 1)
	out := graph.Attention(q, k, v, true)
	p, _ := g.Compile(out)
	p.Feed(q, []float64{0, 0}) // equal scores: the second averages
	p.Feed(k, []float64{1, 2})
	p.Feed(v, []float64{10, 20})
	p.Run()
	fmt.Println(out.Shape(), p.Value(out))
	// Output: [1 1 2 1] [10 15]
}

func ExampleCausalMask() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 2)
	w := graph.Softmax(graph.CausalMask(x))
	p, _ := g.Compile(w)
	p.Feed(x, []float64{1, 2, 3, 3})
	p.Run()
	fmt.Println(p.Value(w))
	// Output: [1 0 0.5 0.5]
}
