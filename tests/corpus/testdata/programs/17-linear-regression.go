package main

import (
	"fmt"
	"math"
)

type model struct {
	slope, intercept float64
}

func (m model) predict(x float64) float64 { return m.intercept + m.slope*x }

func fit(xs, ys []float64) model {
	n := float64(len(xs))
	var sx, sy, sxy, sxx float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxy += xs[i] * ys[i]
		sxx += xs[i] * xs[i]
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return model{slope: slope, intercept: (sy - slope*sx) / n}
}

func rSquared(m model, xs, ys []float64) float64 {
	mean := 0.0
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	var ssRes, ssTot float64
	for i := range xs {
		ssRes += math.Pow(ys[i]-m.predict(xs[i]), 2)
		ssTot += math.Pow(ys[i]-mean, 2)
	}
	return 1 - ssRes/ssTot
}

func main() {
	hours := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	scores := []float64{52, 55, 61, 64, 70, 71, 79, 83}
	m := fit(hours, scores)
	fmt.Printf("score = %.3f + %.3f*hours, r2=%.4f\n", m.intercept, m.slope, rSquared(m, hours, scores))
	for _, h := range []float64{0, 4.5, 10} {
		fmt.Printf("predict(%.1f) = %.2f\n", h, m.predict(h))
	}
	perfect := fit([]float64{0, 1, 2}, []float64{1, 3, 5})
	fmt.Println(perfect, perfect.predict(3))
}
