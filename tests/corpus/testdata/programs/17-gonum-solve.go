package main

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

var x mat.VecDense

var coef mat.Dense

var eig mat.EigenSym

var inv mat.Dense

func main() {
	a := mat.NewDense(3, 3, []float64{
		2, 1, -1,
		-3, -1, 2,
		-2, 1, 2,
	})
	b := mat.NewVecDense(3, []float64{8, -11, -3})
	err := x.SolveVec(a, b)
	fmt.Printf("x = %.4f err=%v\n", mat.Formatted(x.T()), err)
	xs := []float64{0, 1, 2, 3, 4}
	ys := []float64{1.1, 2.9, 5.2, 7.1, 8.8}
	design := mat.NewDense(len(xs), 2, nil)
	for i, v := range xs {
		design.Set(i, 0, 1)
		design.Set(i, 1, v)
	}
	err = coef.Solve(design, mat.NewDense(len(ys), 1, ys))
	fmt.Printf("least squares: intercept=%.4f slope=%.4f err=%v\n", coef.At(0, 0), coef.At(1, 0), err)
	sym := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	ok := eig.Factorize(sym, true)
	fmt.Printf("%v %.4f\n", ok, eig.Values(nil))
	singular := mat.NewDense(2, 2, []float64{1, 2, 2, 4})
	fmt.Println(inv.Inverse(singular) != nil)
}
