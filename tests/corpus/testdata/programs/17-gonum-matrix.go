package main

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

var c mat.Dense

var inv mat.Dense

var id mat.Dense

var scaled mat.Dense

func main() {
	a := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	b := mat.NewDense(3, 2, []float64{7, 8, 9, 10, 11, 12})
	c.Mul(a, b)
	fmt.Printf("a = %v\n\nc = a*b =\n%v\n", mat.Formatted(a, mat.Prefix("    "), mat.Squeeze()), mat.Formatted(&c))
	fmt.Printf("a^T =\n%v\n", mat.Formatted(a.T()))
	sq := mat.NewDense(2, 2, []float64{4, 7, 2, 6})
	err := inv.Inverse(sq)
	fmt.Printf("det=%.1f err=%v\ninv =\n%.3f\n", mat.Det(sq), err, mat.Formatted(&inv))
	id.Mul(sq, &inv)
	fmt.Println(mat.EqualApprox(&id, mat.NewDiagDense(2, []float64{1, 1}), 1e-12))
	r, cols := c.Dims()
	fmt.Println(r, cols, c.At(1, 0), mat.Sum(&c), mat.Trace(&c), mat.Norm(sq, 2) > 0)
	scaled.Scale(0.5, &c)
	fmt.Printf("%.1f\n", mat.Formatted(&scaled, mat.FormatPython()))
}
