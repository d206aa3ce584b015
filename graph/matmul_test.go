package graph_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// bmmRef is the naive batched product of a (shape as) and b (shape bs)
// with NumPy broadcasting of the batch axes.
func bmmRef(as, bs []int, ta, tb bool) func(in [][]float64) []float64 {
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	if ta {
		m, k = k, m
	}
	if tb {
		n = bs[rb-2]
	}
	r := max(ra, rb) - 2
	batch := make([]int, r)
	for i := range batch {
		batch[i] = 1
		for _, s := range [][]int{as[:ra-2], bs[:rb-2]} {
			if j := i - (r - len(s)); j >= 0 && s[j] != 1 {
				batch[i] = s[j]
			}
		}
	}
	// block returns the index of the block of an operand with batch shape s
	// that output batch index idx reads.
	block := func(idx, s []int) int {
		lead, b := len(idx)-len(s), 0
		for j, d := range s {
			v := idx[lead+j]
			if d == 1 {
				v = 0
			}
			b = b*d + v
		}
		return b
	}
	return func(in [][]float64) []float64 {
		out := make([]float64, size(batch)*m*n)
		for bi := 0; bi < size(batch); bi++ {
			idx := unravel(bi, batch)
			a := in[0][block(idx, as[:ra-2])*m*k:]
			b := in[1][block(idx, bs[:rb-2])*k*n:]
			c := matmulRef(m, k, n, ta, tb)([][]float64{a[:m*k], b[:k*n]})
			copy(out[bi*m*n:], c)
		}
		return out
	}
}

func batchMatMulOpCases() []opCase {
	var cases []opCase
	for _, c := range []struct {
		name   string
		as, bs []int
		ta, tb bool
	}{
		{"nn", []int{2, 3, 4}, []int{2, 4, 5}, false, false},
		{"tn", []int{2, 4, 3}, []int{2, 4, 5}, true, false},
		{"nt", []int{2, 3, 4}, []int{2, 5, 4}, false, true},
		{"tt", []int{2, 4, 3}, []int{2, 5, 4}, true, true},
		{"rank4", []int{2, 2, 3, 2}, []int{2, 2, 2, 3}, false, false},
		{"both-broadcast", []int{1, 2, 3, 4}, []int{3, 1, 4, 2}, false, false},
		{"both-broadcast-tt", []int{3, 1, 4, 2}, []int{1, 2, 3, 4}, true, true},
		{"missing-leading", []int{2, 3, 4}, []int{3, 2, 4, 2}, false, false},
		{"a-matrix", []int{3, 4}, []int{2, 4, 5}, false, false},
		{"a-matrix-nt", []int{3, 4}, []int{2, 5, 4}, false, true},
		{"b-matrix", []int{2, 2, 3, 4}, []int{4, 5}, false, false},  // one stacked gemm
		{"b-matrix-nt", []int{2, 3, 4}, []int{5, 4}, false, true},   // one stacked gemm
		{"b-ones", []int{2, 3, 4}, []int{1, 1, 4, 2}, false, false}, // one stacked gemm
		{"b-matrix-tn", []int{2, 4, 3}, []int{4, 5}, true, false},   // b repeated per block
		{"matrices", []int{3, 4}, []int{4, 2}, false, false},
		{"empty-k", []int{2, 3, 0}, []int{2, 0, 2}, false, false},
	} {
		cases = append(cases, opCase{name: "batch_matmul-" + c.name, shapes: [][]int{c.as, c.bs},
			build: func(in []*graph.Node) *graph.Node { return graph.BatchMatMul(in[0], in[1], c.ta, c.tb) },
			ref:   bmmRef(c.as, c.bs, c.ta, c.tb)})
	}
	return cases
}

func TestBatchMatMulShapes(t *testing.T) {
	g := graph.New(graph.Float32)
	cases := []struct {
		a, b   []int
		ta, tb bool
		want   string
	}{
		{[]int{12, 4, 64, 32}, []int{12, 4, 64, 32}, false, true, "[12 4 64 64]"},
		{[]int{12, 4, 64, 64}, []int{12, 4, 64, 32}, false, false, "[12 4 64 32]"},
		{[]int{6, 64, 128}, []int{128, 512}, false, false, "[6 64 512]"},
		{[]int{1, 4, 5, 6}, []int{3, 1, 6, 7}, false, false, "[3 4 5 7]"},
		{[]int{5, 2, 3}, []int{3, 2}, true, true, "[5 3 3]"},
	}
	for _, c := range cases {
		n := graph.BatchMatMul(g.Placeholder("a", c.a...), g.Placeholder("b", c.b...), c.ta, c.tb)
		if got := fmt.Sprint(n.Shape()); got != c.want {
			t.Errorf("BatchMatMul(%v, %v, %v, %v): shape %s, want %s", c.a, c.b, c.ta, c.tb, got, c.want)
		}
	}
}

func TestBatchMatMulErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	p := func(shape ...int) *graph.Node { return g.Placeholder("p", shape...) }
	checkShapeErrors(t, []shapeErrCase{
		{"inner", func() { graph.BatchMatMul(p(2, 3, 4), p(2, 5, 6), false, false) },
			"graph: batch_matmul: want inner dimensions equal, got [2 3 4] x [2 5 6]"},
		{"inner-transposed", func() { graph.BatchMatMul(p(2, 3, 4), p(2, 3, 6), true, true) },
			"graph: batch_matmul: want inner dimensions equal, got [2 3 4] x [2 3 6]"},
		{"batch", func() { graph.BatchMatMul(p(2, 3, 4, 5), p(2, 5, 6), false, false) },
			"graph: batch_matmul: want batch axes that broadcast, got [2 3 4 5] x [2 5 6]"},
		{"rank", func() { graph.BatchMatMul(p(4), p(4, 5), false, false) },
			"graph: batch_matmul: want operands of at least two axes, got [4] x [4 5]"},
		{"matmul-t", func() { graph.MatMulT(p(3, 4), p(3, 5), false, true) },
			"graph: matmul: want inner dimensions equal, got [3 4] x [3 5]"},
	})
}

func ExampleBatchMatMul() {
	g := graph.New(graph.Float64)
	a := g.Placeholder("a", 2, 1, 2) // two row vectors
	b := g.Placeholder("b", 2, 2)    // one matrix for both
	c := graph.BatchMatMul(a, b, false, false)
	p, _ := g.Compile(c)
	p.Feed(a, []float64{1, 0, 0, 1})
	p.Feed(b, []float64{1, 2, 3, 4})
	p.Run()
	fmt.Println(c.Shape(), p.Value(c))
	// Output: [2 1 2] [1 2 3 4]
}

func ExampleMatMulT() {
	g := graph.New(graph.Float64)
	h := g.Placeholder("h", 1, 2)         // one hidden state
	table := g.Placeholder("table", 3, 2) // an embedding of 3 tokens
	logits := graph.MatMulT(h, table, false, true)
	p, _ := g.Compile(logits)
	p.Feed(h, []float64{1, 2})
	p.Feed(table, []float64{1, 0, 0, 1, 1, 1})
	p.Run()
	fmt.Println(logits.Shape(), p.Value(logits))
	// Output: [1 3] [1 2 3]
}
