package main

import (
	"fmt"
	"math"
	"math/cmplx"
)

func quadratic(a, b, c float64) (complex128, complex128) {
	d := cmplx.Sqrt(complex(b*b-4*a*c, 0))
	return (complex(-b, 0) + d) / complex(2*a, 0), (complex(-b, 0) - d) / complex(2*a, 0)
}

var roots []complex128

func main() {
	z := complex(3, 4)
	fmt.Println(z, real(z), imag(z), cmplx.Abs(z), cmplx.Conj(z), z*z, 1/z)
	fmt.Println(quadratic(1, -3, 2))
	fmt.Println(quadratic(1, 2, 5))
	e := cmplx.Exp(complex(0, math.Pi))
	fmt.Printf("%.3f %.3f\n", real(e), imag(e))
	for k := range 4 {
		roots = append(roots, cmplx.Rect(1, 2*math.Pi*float64(k)/4))
	}
	for _, r := range roots {
		fmt.Printf("(%.2f%+.2fi) ", real(r), imag(r))
	}
	fmt.Println()
	fmt.Printf("%.2f %v\n", cmplx.Phase(complex(-1, 0)), complex64(z))
}
