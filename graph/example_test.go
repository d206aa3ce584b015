package graph_test

import (
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// A whole training step: trace once, compile, then Run and update per step.
func Example() {
	w := graph.NewVariable("dense/kernel", []int{2, 1}, graph.Float64, []float64{0, 0})
	b := graph.NewVariable("dense/bias", []int{1}, graph.Float64, nil)

	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 4, 2)
	y := g.Placeholder("y", 4, 1)
	pred := graph.Dense(x, g.Var(w), g.Var(b), graph.Linear)
	loss := graph.Mean(graph.Square(graph.Sub(pred, y)))
	grads := g.Gradients(loss, []*graph.Node{g.Var(w), g.Var(b)})
	p, err := g.Compile(append([]*graph.Node{loss}, grads...)...)
	if err != nil {
		panic(err)
	}

	// y = 2·x₀ - x₁ + 0.5
	p.Feed(x, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	p.Feed(y, []float64{0.5, 2.5, -0.5, 1.5})
	for range 200 {
		if err := p.Run(); err != nil {
			panic(err)
		}
		loops.SGDUpdate(w.F64(), p.F64(grads[0]), nil, 0.5, 0, false)
		loops.SGDUpdate(b.F64(), p.F64(grads[1]), nil, 0.5, 0, false)
	}
	fmt.Printf("loss %.6f w %.3f b %.3f\n", p.Scalar(loss), w.Value(), b.Value())
	// Output: loss 0.000000 w [2.000 -1.000] b [0.500]
}

func ExampleNewVariable() {
	v := graph.NewVariable("dense/bias", []int{3}, graph.Float32, []float64{0.5, 1, 1.5})
	fmt.Println(v, v.Len(), v.Trainable())
	fmt.Printf("%.2f\n", v.F32())
	// Output:
	// dense/bias[3] float32 3 true
	// [0.50 1.00 1.50]
}

func ExampleVariable_Assign() {
	v := graph.NewVariable("w", []int{2}, graph.Float32, nil)
	v.Assign([]float64{0.25, -4})
	fmt.Printf("%.2f\n", v.Value())
	// Output: [0.25 -4.00]
}

func ExampleDense() {
	g := graph.New(graph.Float32)
	x := g.Const(1, 2, 3) // [2,3] of ones
	w := g.Var(graph.NewVariable("kernel", []int{3, 2}, graph.Float32, []float64{1, -1, 2, -2, 3, -3}))
	b := g.Var(graph.NewVariable("bias", []int{2}, graph.Float32, []float64{0.5, 0.5}))
	h := graph.Dense(x, w, b, graph.ReLU)
	p, _ := g.Compile(h)
	_ = p.Run()
	fmt.Println(h.Shape())
	fmt.Printf("%.1f\n", p.Value(h))
	// Output:
	// [2 2]
	// [6.5 0.0 6.5 0.0]
}

func ExampleGraph_Gradients() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 3)
	y := graph.Sum(graph.Mul(x, x)) // d/dx Σx² = 2x
	dx := g.Gradients(y, []*graph.Node{x})[0]
	p, _ := g.Compile(dx)
	p.Feed(x, []float64{1, -2, 0.5})
	_ = p.Run()
	fmt.Printf("%.1f\n", p.Value(dx))
	// Output: [2.0 -4.0 1.0]
}

func ExampleGraph_SetScope() {
	g := graph.New(graph.Float32)
	a := g.Placeholder("a", 64, 10)
	b := g.Placeholder("b", 12, 16)
	restore := g.SetScope("dense_1")
	defer restore()
	defer func() {
		err := recover().(error)
		fmt.Println(err)
		fmt.Println(errors.Is(err, graph.ErrShape))
	}()
	graph.MatMul(a, b)
	// Output:
	// graph: dense_1: matmul: want inner dimensions equal, got [64 10] x [12 16]
	// true
}

func ExampleSparseSoftmaxCrossEntropy() {
	g := graph.New(graph.Float64)
	labels := g.Placeholder("labels", 2)
	logits := g.Placeholder("logits", 2, 3)
	loss := graph.SparseSoftmaxCrossEntropy(labels, logits)
	p, _ := g.Compile(loss)
	p.Feed(labels, []float64{0, 2})
	p.Feed(logits, []float64{0, 0, 0, 1, 2, 10})
	if err := p.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", p.Value(loss))
	p.Feed(labels, []float64{0, 3})
	fmt.Println(p.Run())
	// Output:
	// [1.0986 0.0005]
	// graph: node sparse_softmax_cross_entropy_2: row 1: want a label in [0,3), got 3
}

func ExampleSoftmax() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1, 3)
	s := graph.Softmax(x)
	p, _ := g.Compile(s)
	p.Feed(x, []float64{1, 2, 3})
	_ = p.Run()
	fmt.Printf("%.4f\n", p.Value(s))
	// Output: [0.0900 0.2447 0.6652]
}

func ExampleAdd() {
	g := graph.New(graph.Float64)
	m := g.Placeholder("m", 2, 3)
	v := g.Placeholder("v", 3)
	sum := graph.Add(m, v) // v broadcast over m's rows
	p, _ := g.Compile(sum)
	p.Feed(m, []float64{1, 2, 3, 4, 5, 6})
	p.Feed(v, []float64{10, 20, 30})
	_ = p.Run()
	fmt.Printf("%.0f\n", p.Value(sum))
	// Output: [11 22 33 14 25 36]
}

func ExampleSumAxis() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	cols, rows := graph.SumAxis(x, 0), graph.MeanAxis(x, -1)
	p, _ := g.Compile(cols, rows)
	p.Feed(x, []float64{1, 2, 3, 4, 5, 6})
	_ = p.Run()
	fmt.Printf("%.1f %.1f\n", p.Value(cols), p.Value(rows))
	// Output: [5.0 7.0 9.0] [2.0 5.0]
}

func ExampleReshape() {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 2, 3)
	fmt.Println(graph.Reshape(x, -1).Shape(), graph.Reshape(x, 3, 2).Shape())
	// Output: [6] [3 2]
}

func ExampleStopGradient() {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 1)
	y := graph.Sum(graph.Mul(graph.StopGradient(x), x)) // x treated as constant on the left
	dx := g.Gradients(y, []*graph.Node{x})[0]
	p, _ := g.Compile(dx)
	p.Feed(x, []float64{3})
	_ = p.Run()
	fmt.Printf("%.1f\n", p.Value(dx))
	// Output: [3.0]
}

func ExampleGraph_SetMask() {
	g := graph.New(graph.Float64)
	loss := g.Placeholder("per_example_loss", 4)
	mask := g.Placeholder("mask", 4)
	g.SetMask(mask)
	// A loss that ignores padded examples and averages over real ones.
	avg := graph.Div(graph.Sum(graph.Mul(loss, g.Mask())), graph.Sum(g.Mask()))
	p, _ := g.Compile(avg)
	p.Feed(loss, []float64{1, 2, 3, 100})
	p.Feed(mask, []float64{1, 1, 1, 0})
	_ = p.Run()
	fmt.Printf("%.2f\n", p.Scalar(avg))
	// Output: 2.00
}

func ExampleProgram_F32() {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 3)
	y := graph.Scale(x, 2)
	p, _ := g.Compile(y)
	copy(p.F32(x), []float32{1, 2, 3}) // a Feed without conversion
	_ = p.Run()
	fmt.Printf("%.1f %v\n", p.F32(y), p.F64(y) == nil)
	// Output: [2.0 4.0 6.0] true
}

func ExampleDType_String() {
	fmt.Println(graph.Float32, graph.Float64)
	// Output: float32 float64
}
