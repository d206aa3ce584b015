package graph_test

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
)

// A column [3,1] and a row [4] broadcast to a [3,4] table; the row's
// gradient sums over the three rows it was copied to.
func ExampleAdd_broadcast() {
	g := graph.New(graph.Float64)
	col := g.Placeholder("col", 3, 1)
	row := g.Placeholder("row", 4)
	sum := graph.Add(col, row)
	drow := g.Gradients(graph.Sum(sum), []*graph.Node{row})[0]
	p, _ := g.Compile(sum, drow)
	p.Feed(col, []float64{0, 10, 20})
	p.Feed(row, []float64{1, 2, 3, 4})
	_ = p.Run()
	fmt.Println(sum.Shape(), p.Value(sum))
	fmt.Println(p.Value(drow))
	// Output:
	// [3 4] [1 2 3 4 11 12 13 14 21 22 23 24]
	// [3 3 3 3]
}

// A residual join adds a branch to its input; AddSameShape refuses a branch
// that changed the shape, where Add would broadcast it.
func ExampleAddSameShape() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	y := graph.AddSameShape(x, graph.Scale(x, 2))
	p, _ := g.Compile(y)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	_ = p.Run()
	fmt.Println(p.Value(y))

	defer func() { fmt.Println(recover()) }()
	graph.AddSameShape(x, g.Placeholder("row", 3))
	// Output:
	// [3 6 9 12 15 18]
	// graph: add: want operands of one shape, got [2 3] and [3]
}

// Where picks between two nodes by a comparison: here a causal mask that
// keeps the scores on and below the diagonal and puts -1e9 above it.
func ExampleWhere() {
	g := graph.New(graph.Float64)
	scores := g.Placeholder("scores", 3, 3)
	i := g.Placeholder("i", 3, 1) // row index
	j := g.Placeholder("j", 3)    // column index
	masked := graph.Where(graph.LessEqual(j, i), scores, g.Const(-1e9))
	p, _ := g.Compile(masked)
	p.Feed(scores, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	p.Feed(i, []float64{0, 1, 2})
	p.Feed(j, []float64{0, 1, 2})
	_ = p.Run()
	fmt.Println(p.Value(masked))
	// Output: [1 -1e+09 -1e+09 4 5 -1e+09 7 8 9]
}

// Maximum and Minimum broadcast as Add does.
func ExampleMaximum() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	lo, hi := g.Placeholder("lo", 3), g.Const(4)
	clipped := graph.Minimum(graph.Maximum(x, lo), hi)
	p, _ := g.Compile(clipped)
	p.Feed(x, []float64{-5, 0, 5, 1, 2, 3})
	p.Feed(lo, []float64{0, 1, 2})
	_ = p.Run()
	fmt.Println(p.Value(clipped))
	// Output: [0 1 4 1 2 3]
}

// SumAxes and MeanAxes reduce any axes; keep-dims leaves them as size 1.
func ExampleSumAxes() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3, 2)
	s := graph.SumAxes(x, true, 0, -1)
	m := graph.MeanAxes(x, false)
	p, _ := g.Compile(s, m)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	_ = p.Run()
	fmt.Println(s.Shape(), p.Value(s))
	fmt.Println(m.Shape(), p.Value(m))
	// Output:
	// [1 3 1] [18 26 34]
	// [] [6.5]
}

// MaxAxis with keep-dims makes a stable softmax by hand; its gradient goes
// to the first maximum.
func ExampleMaxAxis() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	mx := graph.MaxAxis(x, -1, true)
	shifted := graph.Sub(x, mx)
	dx := g.Gradients(graph.Sum(graph.MaxAxis(x, 1, false)), []*graph.Node{x})[0]
	p, _ := g.Compile(shifted, dx)
	p.Feed(x, []float64{1, 3, 3, 2, 0, 1})
	_ = p.Run()
	fmt.Println(mx.Shape(), p.Value(shifted))
	fmt.Println(p.Value(dx))
	// Output:
	// [2 1] [-2 0 0 0 -2 -1]
	// [0 1 0 1 0 0]
}

// SoftmaxAxis normalises along any axis; here the columns.
func ExampleSoftmaxAxis() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 2)
	y := graph.SoftmaxAxis(x, 0)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{0, 1, 0, 3})
	_ = p.Run()
	fmt.Printf("%.3f\n", p.Value(y))
	// Output: [0.500 0.119 0.500 0.881]
}

// Activation.Apply is the standalone form of an activation, for a node of
// any rank.
func ExampleActivation_Apply() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 2, 2)
	outs := []*graph.Node{graph.ReLU.Apply(x), graph.GELUTanh.Apply(x), graph.SiLU.Apply(x)}
	p, _ := g.Compile(outs...)
	p.Feed(x, []float64{-1, 0, 1, 2})
	_ = p.Run()
	for _, o := range outs {
		fmt.Printf("%.4f\n", p.Value(o))
	}
	// Output:
	// [0.0000 0.0000 1.0000 2.0000]
	// [-0.1588 0.0000 0.8412 1.9546]
	// [-0.2689 0.0000 0.7311 1.7616]
}
