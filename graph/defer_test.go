package graph_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// denseStep is a dense layer's training step on one replica: its loss and
// the weights' gradient, the product xᵀ·dz a strategy defers.
func denseStep(t *testing.T, dt graph.DType, rows, in, out int) (g *graph.Graph, x, dw *graph.Node, w *graph.Variable) {
	t.Helper()
	g = graph.New(dt)
	x = g.Placeholder("x", rows, in)
	r := rand.New(rand.NewPCG(3, 4))
	init := make([]float64, in*out)
	for i := range init {
		init[i] = r.NormFloat64()
	}
	w = graph.NewVariable("w", []int{in, out}, dt, init)
	loss := graph.Sum(graph.Dense(x, g.Var(w), nil, graph.ReLU))
	dw = g.Gradients(loss, []*graph.Node{g.Var(w)})[0]
	return g, x, dw, w
}

func feedRandom(p *graph.Program, x *graph.Node, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	v := make([]float64, x.Len())
	for i := range v {
		v[i] = r.NormFloat64()
	}
	p.Feed(x, v)
}

func TestDeferrable(t *testing.T) {
	g, x, dw, w := denseStep(t, graph.Float64, 4, 3, 2)
	y := graph.MatMul(x, g.Var(w)) // an operand is a variable
	flat := graph.NewVariable("flat", []int{6}, graph.Float64, nil)
	yr := graph.MatMul(x, graph.Reshape(g.Var(flat), 3, 2)) // a variable's storage under another node
	z := graph.MatMul(x, graph.Exp(g.Var(w)))               // read by s below
	s := graph.Sum(z)
	p, err := g.Compile(dw, y, yr, s)
	if err != nil {
		t.Fatal(err)
	}
	_, _, otherDW, _ := denseStep(t, graph.Float64, 4, 3, 2)
	tests := []struct {
		name string
		n    *graph.Node
		want bool
	}{
		{"weight gradient", dw, true},
		{"product of a variable", y, false},
		{"product of a reshaped variable", yr, false},
		{"product another node reads", z, false},
		{"not a product", s, false},
		{"node of another graph", otherDW, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := p.Deferrable(tt.n); got != tt.want {
			t.Errorf("%s: Deferrable = %v, want %v", tt.name, got, tt.want)
		}
	}
	if err, _ := panics(func() { p.Defer(z) }).(error); !errors.Is(err, graph.ErrGraph) {
		t.Errorf("Defer(a product another node reads) panicked with %v, want ErrGraph", err)
	}
	// Rows of a product that is not transposed, from its operands.
	feedRandom(p, x, 5)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	rows := make([]float64, 2*2)
	p.ProductRowsF64(z, 1, 3, rows, false)
	for i, v := range rows {
		if want := p.F64(z)[2+i]; v != want {
			t.Errorf("rows [1, 3) of x·exp(w): [%d] = %v, want %v", i, v, want)
		}
	}
}

// TestProductRows checks a deferred product computed in row ranges against
// the same product in a program that computes it whole: the same bits
// without add, and the sum of two replicas' products with add.
func TestProductRows(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		const rows, in, out = 5, 13, 7
		// Replica 0 and 1 of the same step, and one that keeps the product.
		g0, x0, dw0, _ := denseStep(t, dt, rows, in, out)
		g1, x1, dw1, _ := denseStep(t, dt, rows, in, out)
		p0, err := g0.Compile(dw0)
		if err != nil {
			t.Fatal(err)
		}
		p1, err := g1.Compile(dw1)
		if err != nil {
			t.Fatal(err)
		}
		whole0, err := g0.Compile(dw0)
		if err != nil {
			t.Fatal(err)
		}
		steps := p0.NumSteps()
		p0.Defer(dw0)
		p1.Defer(dw1)
		if p0.NumSteps() != steps-1 {
			t.Errorf("%v: Defer left %d steps of %d, want one fewer", dt, p0.NumSteps(), steps)
		}
		feedRandom(p0, x0, 1)
		feedRandom(whole0, x0, 1)
		feedRandom(p1, x1, 2)
		for _, p := range []*graph.Program{p0, p1, whole0} {
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if dt == graph.Float64 {
			// The deferred product's buffer is left alone by Run.
			buf := p0.F64(dw0)
			buf[0] = 42
			if err := p0.Run(); err != nil {
				t.Fatal(err)
			}
			if buf[0] != 42 {
				t.Errorf("Run wrote the deferred product's buffer")
			}
		}
		whole := whole0.Value(dw0)
		whole1 := make([]float64, in*out) // replica 1's own product, for the sums
		productRows(p1, dw1, 0, in, whole1, false)
		for _, cut := range [][2]int{{0, in}, {0, 4}, {4, 11}, {11, in}, {6, 6}} {
			lo, hi := cut[0], cut[1]
			for _, add := range []bool{false, true} {
				got := make([]float64, (hi-lo)*out)
				productRows(p0, dw0, lo, hi, got, false)
				if add {
					productRows(p1, dw1, lo, hi, got, true)
				}
				for i := range got {
					want := whole[lo*out+i]
					if add {
						want += whole1[lo*out+i]
					}
					// Without add: the same bits. With add, the pure-Go
					// BLAS sums term by term into dst: within rounding.
					if (!add && got[i] != want) || !near(got[i], want, 1e-5) {
						t.Fatalf("%v rows [%d, %d) add=%v: [%d] = %v, want %v", dt, lo, hi, add, i, got[i], want)
					}
				}
			}
		}
		for _, bad := range []struct {
			lo, hi, n int
		}{{-1, 2, 100}, {3, 2, 100}, {0, in + 1, 1000}, {0, 2, 2*out - 1}} {
			err, _ := panics(func() { p0.ProductRowsF64(dw0, bad.lo, bad.hi, make([]float64, bad.n), false) }).(error)
			if !errors.Is(err, graph.ErrShape) {
				t.Errorf("ProductRows(rows [%d, %d), %d elements) panicked with %v, want ErrShape", bad.lo, bad.hi, bad.n, err)
			}
		}
	}
}

// productRows is ProductRowsF32 or ProductRowsF64 by p's dtype, on float64
// values; float32 ones convert both ways exactly.
func productRows(p *graph.Program, n *graph.Node, lo, hi int, dst []float64, add bool) {
	if p.DType() == graph.Float64 {
		p.ProductRowsF64(n, lo, hi, dst, add)
		return
	}
	d := make([]float32, len(dst))
	for i, v := range dst {
		d[i] = float32(v)
	}
	p.ProductRowsF32(n, lo, hi, d, add)
	for i, v := range d {
		dst[i] = float64(v)
	}
}
