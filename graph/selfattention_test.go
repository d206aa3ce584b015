package graph_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// selfAttentionRef is naive multi-head self-attention over qkv [n, t,
// 3·heads·d]: the heads are split out and attentionRef does the rest.
func selfAttentionRef(n, t, heads, d int, causal bool) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		hd := heads * d
		nh := n * heads
		q, k, v := make([]float64, nh*t*d), make([]float64, nh*t*d), make([]float64, nh*t*d)
		for b := range n {
			for i := range t {
				row := in[0][(b*t+i)*3*hd:]
				for h := range heads {
					at := ((b*heads+h)*t + i) * d
					copy(q[at:at+d], row[h*d:])
					copy(k[at:at+d], row[hd+h*d:])
					copy(v[at:at+d], row[2*hd+h*d:])
				}
			}
		}
		a := attentionRef(nh, t, t, d, d, causal)([][]float64{q, k, v})
		out := make([]float64, n*t*hd)
		for b := range n {
			for h := range heads {
				for i := range t {
					copy(out[(b*t+i)*hd+h*d:][:d], a[((b*heads+h)*t+i)*d:])
				}
			}
		}
		return out
	}
}

func selfAttentionOpCases() []opCase {
	sa := func(heads int, causal bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return graph.SelfAttention(in[0], heads, causal) }
	}
	return []opCase{
		{name: "self_attention", shapes: [][]int{{2, 3, 12}}, build: sa(2, false), ref: selfAttentionRef(2, 3, 2, 2, false)},
		{name: "self_attention-causal", shapes: [][]int{{2, 4, 18}}, build: sa(2, true), ref: selfAttentionRef(2, 4, 2, 3, true)},
		{name: "self_attention-causal-split-rows", shapes: [][]int{{1, 19, 12}}, build: sa(2, true), ref: selfAttentionRef(1, 19, 2, 2, true)},
		{name: "self_attention-one-head-rank2", shapes: [][]int{{5, 6}}, build: sa(1, true), ref: selfAttentionRef(1, 5, 1, 2, true)},
		{name: "self_attention-batch-axes", shapes: [][]int{{2, 1, 3, 9}}, build: sa(3, false), ref: selfAttentionRef(2, 3, 3, 1, false)},
	}
}

// composedSelfAttention is SelfAttention spelled with the general ops:
// split the heads out of qkv, attend, join them.
func composedSelfAttention(qkv *graph.Node, heads int, causal bool) *graph.Node {
	s := qkv.Shape()
	b, t, d := s[0], s[1], s[2]/(3*heads)
	x := graph.Transpose(graph.Reshape(qkv, b, t, 3, heads, d), 2, 0, 3, 1, 4)
	p := graph.Split(x, 0, 1, 1, 1)
	for i := range p {
		p[i] = graph.Reshape(p[i], b, heads, t, d)
	}
	y := graph.Attention(p[0], p[1], p[2], causal)
	return graph.Reshape(graph.Transpose(y, 0, 2, 1, 3), b, t, heads*d)
}

// TestSelfAttentionMatchesComposed checks the fused op against the same
// attention composed of Transpose, Split and Attention, value and
// gradient, in float64 at a GPT's proportions.
func TestSelfAttentionMatchesComposed(t *testing.T) {
	for _, c := range []struct {
		name           string
		b, t, heads, d int
		causal         bool
	}{
		{"causal-4-heads", 3, 17, 4, 8, true},
		{"full-2-heads", 2, 9, 2, 5, false},
		{"causal-one-position", 2, 1, 3, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New(graph.Float64)
			shape := []int{c.b, c.t, 3 * c.heads * c.d}
			qkv := g.Placeholder("qkv", shape...)
			w := g.Placeholder("w", c.b, c.t, c.heads*c.d)
			fused := graph.SelfAttention(qkv, c.heads, c.causal)
			composed := composedSelfAttention(qkv, c.heads, c.causal)
			df := g.Gradients(graph.Sum(graph.Mul(fused, w)), []*graph.Node{qkv})[0]
			dc := g.Gradients(graph.Sum(graph.Mul(composed, w)), []*graph.Node{qkv})[0]
			p, err := g.Compile(fused, composed, df, dc)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, uint64(c.t)))
			for _, n := range []*graph.Node{qkv, w} {
				v := make([]float64, n.Len())
				for i := range v {
					v[i] = r.NormFloat64()
				}
				p.Feed(n, v)
			}
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]*graph.Node{{fused, composed}, {df, dc}} {
				got, want := p.Value(pair[0]), p.Value(pair[1])
				for i := range want {
					if !near(got[i], want[i], 1e-6) {
						t.Errorf("%s[%d] = %.12g, composed %.12g", pair[0].Name(), i, got[i], want[i])
					}
				}
			}
		})
	}
}

func TestSelfAttentionErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	p := func(shape ...int) *graph.Node { return g.Placeholder("p", shape...) }
	checkShapeErrors(t, []shapeErrCase{
		{"rank-1", func() { graph.SelfAttention(p(12), 2, true) },
			"graph: self_attention: want qkv [..., t, 3·heads·d] with 2 heads, got [12]"},
		{"not-3-heads", func() { graph.SelfAttention(p(2, 5, 16), 2, false) },
			"graph: self_attention: want qkv [..., t, 3·heads·d] with 2 heads, got [2 5 16]"},
		{"no-heads", func() { graph.SelfAttention(p(2, 5, 12), 0, true) },
			"graph: self_attention: want qkv [..., t, 3·heads·d] with 0 heads, got [2 5 12]"},
	})
}

func ExampleSelfAttention() {
	g := graph.New(graph.Float64)
	// One sequence of two positions, one head of width 1: q, k and v per row.
	qkv := g.Placeholder("qkv", 1, 2, 3)
	y := graph.SelfAttention(qkv, 1, true)
	p, _ := g.Compile(y)
	p.Feed(qkv, []float64{0, 0, 1, 0, 0, 3})
	_ = p.Run()
	fmt.Println(y.Shape(), p.Value(y))
	// Output: [1 2 1] [1 2]
}
