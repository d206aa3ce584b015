package main

import (
	"fmt"
	"strings"
)

func sma(xs []float64, window int) []float64 {
	out := make([]float64, 0, len(xs)-window+1)
	sum := 0.0
	for i, x := range xs {
		sum += x
		if i >= window {
			sum -= xs[i-window]
		}
		if i >= window-1 {
			out = append(out, sum/float64(window))
		}
	}
	return out
}

func ema(xs []float64, alpha float64) []float64 {
	out := make([]float64, len(xs))
	out[0] = xs[0]
	for i := 1; i < len(xs); i++ {
		out[i] = alpha*xs[i] + (1-alpha)*out[i-1]
	}
	return out
}

func format(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}

func main() {
	prices := []float64{10, 11, 12, 11, 13, 15, 14, 16, 18, 17, 19, 21}
	fmt.Println("sma3:", format(sma(prices, 3)))
	fmt.Println("sma5:", format(sma(prices, 5)))
	fmt.Println("ema :", format(ema(prices, 0.3)))
	s3, s5 := sma(prices, 3), sma(prices, 5)
	above := 0
	for i := range s5 {
		diff := s3[i+2] - s5[i]
		if diff > 0 {
			above++
		}
		fmt.Printf("%+.2f ", diff)
	}
	fmt.Println()
	fmt.Println(above, "of", len(s5), "points have the short average above the long one")
}
