package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"testing"

	"github.com/gotrain/gotrain/graph"
)

// normRef normalises rows of c of in[0] (subtracting the mean unless rms)
// and applies in[gi] as γ and in[bi] as β where those are ≥ 0.
func normRef(c int, eps float64, rms bool, gi, bi int) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		return rowsRef(c, func(row, out []float64) {
			var mean, ss float64
			if !rms {
				for _, v := range row {
					mean += v / float64(c)
				}
			}
			for _, v := range row {
				ss += (v - mean) * (v - mean) / float64(c)
			}
			for j, v := range row {
				out[j] = (v - mean) / math.Sqrt(ss+eps)
				if gi >= 0 {
					out[j] *= in[gi][j]
				}
				if bi >= 0 {
					out[j] += in[bi][j]
				}
			}
		})(in)
	}
}

func normOpCases() []opCase {
	const eps = 1e-3
	ln := func(gamma, beta bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node {
			var g, b *graph.Node
			if gamma {
				g = in[1]
			}
			if beta {
				b = in[len(in)-1]
			}
			return graph.LayerNorm(in[0], g, b, eps)
		}
	}
	return []opCase{
		{name: "layer_norm", shapes: [][]int{{3, 5}, {5}, {5}}, build: ln(true, true), ref: normRef(5, eps, false, 1, 2)},
		{name: "layer_norm-rank3", shapes: [][]int{{2, 2, 4}, {4}, {4}}, build: ln(true, true), ref: normRef(4, eps, false, 1, 2)},
		{name: "layer_norm-gamma", shapes: [][]int{{3, 4}, {4}}, build: ln(true, false), ref: normRef(4, eps, false, 1, -1)},
		{name: "layer_norm-beta", shapes: [][]int{{3, 4}, {4}}, build: ln(false, true), ref: normRef(4, eps, false, -1, 1)},
		{name: "layer_norm-bare-vector", shapes: [][]int{{6}}, build: ln(false, false), ref: normRef(6, eps, false, -1, -1)},
		// Rows of 9 and 11 take two steps of the 4 lanes and a rest.
		{name: "layer_norm-lanes", shapes: [][]int{{2, 9}, {9}, {9}}, build: ln(true, true), ref: normRef(9, eps, false, 1, 2)},
		{name: "rms_norm-lanes", shapes: [][]int{{3, 11}, {11}},
			build: func(in []*graph.Node) *graph.Node { return graph.RMSNorm(in[0], in[1], eps) },
			ref:   normRef(11, eps, true, 1, -1)},
		{name: "layer_norm-zero-eps", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.LayerNorm(in[0], nil, nil, 0) },
			ref:   normRef(3, 0, false, -1, -1)},
		{name: "layer_norm-shared-input", shapes: [][]int{{3, 4}, {4}},
			// x feeds the norm and the sum: its gradient adds both.
			build: func(in []*graph.Node) *graph.Node { return graph.Add(graph.LayerNorm(in[0], in[1], nil, eps), in[0]) },
			ref: func(in [][]float64) []float64 {
				y := normRef(4, eps, false, 1, -1)(in)
				for i, v := range in[0] {
					y[i] += v
				}
				return y
			}},
		{name: "rms_norm", shapes: [][]int{{3, 5}, {5}},
			build: func(in []*graph.Node) *graph.Node { return graph.RMSNorm(in[0], in[1], eps) },
			ref:   normRef(5, eps, true, 1, -1)},
		{name: "rms_norm-bare-rank3", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.RMSNorm(in[0], nil, eps) },
			ref:   normRef(4, eps, true, -1, -1)},
	}
}

// TestLayerNormStatistics checks the forward pass on rows far from zero
// mean with a tiny spread, where a one-pass variance E[x²]-E[x]² in
// float32 would lose every digit.
func TestLayerNormStatistics(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		x := g.Placeholder("x", 4, 8)
		y := graph.LayerNorm(x, nil, nil, 0)
		p, err := g.Compile(y)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(4, 5))
		vals := make([]float64, 32)
		for i := range vals {
			vals[i] = float64(float32(1000 + r.NormFloat64()*0.01))
		}
		p.Feed(x, vals)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		got, want := p.Value(y), normRef(8, 0, false, -1, -1)([][]float64{vals})
		for i := range want {
			if !near(got[i], want[i], 1e-3) {
				t.Errorf("%v: y[%d] = %v, want %v", dt, i, got[i], want[i])
			}
		}
	}
}

func TestNormErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	x, v4, v5 := g.Placeholder("x", 2, 4), g.Placeholder("v4", 4), g.Placeholder("v5", 5)
	checkShapeErrors(t, []shapeErrCase{
		{"gamma", func() { graph.LayerNorm(x, v5, nil, 1e-5) },
			"graph: layer_norm: want gamma of shape [4] for x [2 4], got [5]"},
		{"beta", func() { graph.LayerNorm(x, v4, x, 1e-5) },
			"graph: layer_norm: want beta of shape [4] for x [2 4], got [2 4]"},
		{"scalar", func() { graph.RMSNorm(g.Placeholder("s"), nil, 1e-5) },
			"graph: rms_norm: want at least one axis, got a scalar"},
		{"eps", func() { graph.RMSNorm(x, v4, -1) }, "graph: rms_norm: want eps ≥ 0, got -1"},
		{"eps-nan", func() { graph.LayerNorm(x, nil, nil, math.NaN()) }, "graph: layer_norm: want eps ≥ 0, got NaN"},
	})
}

func ExampleLayerNorm() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 2)
	beta := g.Const(10, 2)
	y := graph.LayerNorm(x, nil, beta, 0)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{1, 3, 5, 4})
	p.Run()
	fmt.Println(p.Value(y))
	// Output: [9 11 11 9]
}

func ExampleRMSNorm() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 2)
	gamma := g.Const(2, 2)
	y := graph.RMSNorm(x, gamma, 0)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{3, 4}) // root mean square √12.5
	p.Run()
	fmt.Printf("%.4f\n", p.Value(y))
	// Output: [1.6971 2.2627]
}

// TestIssue22NormRunAllocatesNothing: a LayerNorm with γ and no β (a GPT's),
// forward and backward through the vector row loops, allocates nothing per
// Run.
func TestIssue22NormRunAllocatesNothing(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		x, gamma := g.Placeholder("x", 5, 12), g.Placeholder("gamma", 12)
		y := graph.LayerNorm(x, gamma, nil, 1e-5)
		loss := graph.Sum(graph.Mul(y, graph.Add(y, x)))
		d := g.Gradients(loss, []*graph.Node{x, gamma})
		p, err := g.Compile(loss, d[0], d[1])
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, x.Len())
		for i := range vals {
			vals[i] = math.Sin(float64(i))
		}
		p.Feed(x, vals)
		p.Feed(gamma, vals[:12])
		if got := testing.AllocsPerRun(20, func() {
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
		}); got != 0 {
			t.Errorf("%v: Run allocates %v times per call, want 0", dt, got)
		}
	}
}
