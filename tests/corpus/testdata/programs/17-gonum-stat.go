package main

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

func main() {
	heights := []float64{160, 172, 168, 181, 175, 158, 190, 166, 171, 177}
	weights := []float64{55, 70, 63, 84, 72, 52, 95, 60, 68, 76}
	mean, std := stat.MeanStdDev(heights, nil)
	fmt.Printf("mean=%.2f std=%.3f var=%.3f\n", mean, std, stat.Variance(heights, nil))
	fmt.Printf("corr=%.4f cov=%.3f\n", stat.Correlation(heights, weights, nil), stat.Covariance(heights, weights, nil))
	alpha, beta := stat.LinearRegression(heights, weights, nil, false)
	fmt.Printf("weight = %.3f + %.4f*height, r2=%.4f\n", alpha, beta, stat.RSquared(heights, weights, nil, alpha, beta))
	sorted := append([]float64(nil), heights...)
	sort.Float64s(sorted)
	for _, p := range []float64{0.25, 0.5, 0.75} {
		fmt.Printf("q%.0f=%.1f ", p*100, stat.Quantile(p, stat.Empirical, sorted, nil))
	}
	fmt.Println()
	fmt.Println(floats.Max(heights), floats.Min(weights), floats.Sum(weights), floats.MaxIdx(heights))
	z := make([]float64, len(heights))
	copy(z, heights)
	floats.AddConst(-mean, z)
	floats.Scale(1/std, z)
	fmt.Printf("%.3f %v %.3f\n", z[:3], math.Abs(stat.Mean(z, nil)) < 1e-12, stat.StdDev(z, nil))
}
