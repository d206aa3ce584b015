package loops_test

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/loops"
)

func ExampleAllReduceSum() {
	// Three replicas' gradients; afterwards each holds the sum.
	bufs := [][]float32{{1, 2}, {10, 20}, {100, 200}}
	loops.AllReduceSum(bufs)
	for _, b := range bufs {
		fmt.Printf("%.1f\n", b)
	}
	// Output:
	// [111.0 222.0]
	// [111.0 222.0]
	// [111.0 222.0]
}

func ExampleSumTo() {
	dst := make([]float64, 2)
	loops.SumTo(dst, []float64{1, 2}, []float64{0.5, 0.25})
	fmt.Printf("%.2f\n", dst)
	// Output: [1.50 2.25]
}

func ExampleAdamUpdate() {
	w := []float64{1}
	g := []float64{0.5}
	m, v := []float64{0}, []float64{0}
	loops.AdamUpdate(w, g, m, v, 0.1, 0.9, 0.999, 1e-8, 1)
	// The first Adam step moves each weight by about lr against its gradient's sign.
	fmt.Printf("w=%.4f m=%.4f v=%.6f\n", w[0], m[0], v[0])
	// Output: w=0.9000 m=0.0500 v=0.000250
}

func ExampleAdamWUpdate() {
	w := []float64{1}
	g := []float64{0}
	m, v := []float64{0}, []float64{0}
	loops.AdamWUpdate(w, g, m, v, 0.1, 0.9, 0.999, 1e-8, 0.5, 1)
	// A zero gradient leaves only the decoupled decay: w·(1 - lr·wd).
	fmt.Printf("%.4f\n", w[0])
	// Output: 0.9500
}

func ExampleSGDUpdate() {
	w, vel := []float64{1}, []float64{0}
	for range 2 {
		loops.SGDUpdate(w, []float64{1}, vel, 0.1, 0.9, false)
	}
	fmt.Printf("w=%.3f vel=%.3f\n", w[0], vel[0])
	// Output: w=0.710 vel=1.900
}

func ExampleRMSpropUpdate() {
	w, ms := []float64{1}, []float64{0}
	loops.RMSpropUpdate(w, []float64{2}, ms, nil, 0.01, 0.9, 1e-7, 0)
	fmt.Printf("w=%.4f ms=%.4f\n", w[0], ms[0])
	// Output: w=0.9684 ms=0.4000
}

func ExampleScaleTo() {
	dst := make([]float32, 3)
	loops.ScaleTo(dst, 2, []float32{1, 2, 3})
	fmt.Printf("%.1f\n", dst)
	// Output: [2.0 4.0 6.0]
}

func ExampleAddTo() {
	dst := make([]float32, 2)
	loops.AddTo(dst, []float32{1, 2}, []float32{3, 4})
	fmt.Printf("%.1f\n", dst)
	// Output: [4.0 6.0]
}

func ExampleAxpyTo() {
	dst := make([]float64, 2)
	loops.AxpyTo(dst, 2, []float64{1, 2}, []float64{10, 20})
	fmt.Printf("%.1f\n", dst)
	// Output: [12.0 24.0]
}

func ExampleDot() {
	fmt.Printf("%.1f\n", loops.Dot([]float32{1, 2, 3}, []float32{4, 5, 6}))
	// Output: 32.0
}

func ExampleSumSq() {
	fmt.Printf("%.1f\n", loops.SumSq([]float64{3, 4}))
	// Output: 25.0
}

func ExampleSum() {
	fmt.Printf("%.2f\n", loops.Sum([]float32{0.5, 0.25, 1}))
	// Output: 1.75
}

func ExampleSubTo() {
	dst := make([]float32, 2)
	loops.SubTo(dst, []float32{1, 2}, []float32{3, 5})
	fmt.Printf("%.1f\n", dst)
	// Output: [-2.0 -3.0]
}

func ExampleMulTo() {
	dst := make([]float32, 2)
	loops.MulTo(dst, []float32{1, 2}, []float32{3, 5})
	fmt.Printf("%.1f\n", dst)
	// Output: [3.0 10.0]
}

func ExampleDivTo() {
	dst := make([]float64, 2)
	loops.DivTo(dst, []float64{1, 2}, []float64{4, 5})
	fmt.Printf("%.2f\n", dst)
	// Output: [0.25 0.40]
}

func ExampleOpTo() {
	dst := make([]float32, 2)
	loops.OpTo(loops.OpSub, dst, []float32{1, 2}, []float32{3, 5})
	fmt.Printf("%.1f\n", dst)
	// Output: [-2.0 -3.0]
}

// A batch norm's scale per channel: 2 rows of 3 channels.
func ExampleRowsOpTo() {
	dst := make([]float32, 6)
	loops.RowsOpTo(loops.OpMul, dst, []float32{1, 2, 3, 4, 5, 6}, []float32{10, 100, 1000})
	fmt.Printf("%.0f\n", dst)
	// Output: [10 200 3000 40 500 6000]
}

func ExampleOpRowsTo() {
	dst := make([]float32, 4)
	loops.OpRowsTo(loops.OpSub, dst, []float32{10, 20}, []float32{1, 2, 3, 4})
	fmt.Printf("%.0f\n", dst)
	// Output: [9 18 7 16]
}

// A bias's gradient: the sum of 3 rows of 2 channels.
func ExampleSumRowsTo() {
	dst := make([]float64, 2)
	loops.SumRowsTo(dst, []float64{1, 2, 3, 4, 5, 6})
	fmt.Printf("%.0f\n", dst)
	// Output: [9 12]
}

// A masked mean's numerator: 2 rows of 2 channels, weighted by 0.5.
func ExampleAccRowsTo() {
	acc := []float64{100, 200}
	loops.AccRowsTo(acc, 0.5, []float32{1, 2, 3, 4})
	fmt.Println(acc)
	// Output: [102 203]
}
