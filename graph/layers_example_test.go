package graph_test

import (
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/graph"
)

// A 2x2 kernel summing each window of a 3x3 single-channel image.
func ExampleConv2D() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 3, 3, 1)
	w := g.Const(1, 2, 2, 1, 1)
	y := graph.Conv2D(x, w, nil, 1, 1, graph.Valid, graph.Linear)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	_ = p.Run()
	fmt.Println(y.Shape())
	fmt.Printf("%.1f\n", p.Value(y))
	// Output:
	// [1 2 2 1]
	// [12.0 16.0 24.0 28.0]
}

// Max-pooling routes the gradient to each window's maximum.
func ExampleMaxPool2D() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 2, 4, 1)
	y := graph.MaxPool2D(x, 2, 2, 2, 2, graph.Valid)
	dx := g.Gradients(graph.Sum(y), []*graph.Node{x})[0]
	p, _ := g.Compile(y, dx)
	p.Feed(x, []float64{1, 5, 2, 0, 3, 4, 8, 7})
	_ = p.Run()
	fmt.Printf("%.1f\n", p.Value(y))
	fmt.Printf("%.1f\n", p.Value(dx))
	// Output:
	// [5.0 8.0]
	// [0.0 1.0 0.0 0.0 0.0 0.0 1.0 0.0]
}

// Average pooling with Same padding divides by the pixels inside the image:
// the last column's windows hold two pixels, not four.
func ExampleAvgPool2D() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 2, 3, 1)
	y := graph.AvgPool2D(x, 2, 2, 2, 2, graph.Same)
	dx := g.Gradients(graph.Sum(y), []*graph.Node{x})[0]
	p, _ := g.Compile(y, dx)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	_ = p.Run()
	fmt.Println(y.Shape())
	fmt.Printf("%.2f\n", p.Value(y))
	fmt.Printf("%.2f\n", p.Value(dx))
	// Output:
	// [1 1 2 1]
	// [3.00 4.50]
	// [0.25 0.25 0.50 0.25 0.25 0.50]
}

// A 2x2 kernel dilated by 2 reads the corners of each 3x3 window.
func ExampleConv2DDilated() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 3, 4, 1)
	w := g.Const(1, 2, 2, 1, 1)
	y := graph.Conv2DDilated(x, w, nil, 1, 1, 2, 2, graph.Valid, graph.Linear)
	p, _ := g.Compile(y)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	_ = p.Run()
	fmt.Println(y.Shape())
	fmt.Printf("%.1f\n", p.Value(y))
	// Output:
	// [1 1 2 1]
	// [24.0 28.0]
}

// Gather reads table rows by id; the gradient sums back into the rows read.
func ExampleGather() {
	table := graph.NewVariable("emb", []int{3, 2}, graph.Float64, []float64{0, 1, 10, 11, 20, 21})
	g := graph.New(graph.Float64)
	ids := g.Placeholder("ids", 3)
	rows := graph.Gather(g.Var(table), ids)
	dt := g.Gradients(graph.Sum(rows), []*graph.Node{g.Var(table)})[0]
	p, _ := g.Compile(rows, dt)
	p.Feed(ids, []float64{2, 0, 2})
	_ = p.Run()
	fmt.Printf("%.1f\n", p.Value(rows))
	fmt.Printf("%.1f\n", p.Value(dt))
	p.Feed(ids, []float64{2, 0, 3})
	var ie *graph.IndexError
	fmt.Println(errors.As(p.Run(), &ie), ie)
	// Output:
	// [20.0 21.0 0.0 1.0 20.0 21.0]
	// [1.0 1.0 0.0 0.0 2.0 2.0]
	// true graph: ids[2]: want an index in [0,3), got 3
}

// The mask depends only on seed, stream and counter: advancing the counter
// between Runs draws a new one.
func ExampleDropout() {
	counter := graph.NewVariable("counter", []int{2}, graph.Float32, nil)
	g := graph.New(graph.Float32)
	y := graph.Dropout(g.Const(1, 8), g.Var(counter), 0.5, 42, 0)
	p, _ := g.Compile(y)
	for range 2 {
		_ = p.Run()
		fmt.Printf("step %d: %.0f\n", graph.CounterValue(counter), p.Value(y))
		graph.AdvanceCounter(counter)
	}
	// Output:
	// step 0: [2 0 0 2 0 0 2 0]
	// step 1: [0 2 0 2 0 0 2 2]
}

// Batch statistics over the real rows only: row 2 is padding.
func ExampleMaskedSum() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 3, 2)
	mask := g.Placeholder("mask", 3)
	mean := graph.Div(graph.MaskedSum(x, mask), graph.Maximum(graph.Sum(mask), g.Const(1)))
	p, _ := g.Compile(mean)
	p.Feed(x, []float64{1, 10, 3, 30, 1e9, 1e9})
	p.Feed(mask, []float64{1, 1, 0})
	_ = p.Run()
	fmt.Printf("%.1f\n", p.Value(mean))
	// Output: [2.0 20.0]
}

func ExamplePadding_String() {
	fmt.Println(graph.Valid, graph.Same, graph.Causal)
	// Output: valid same causal
}
