package main

import (
	"fmt"
	"math"
	"slices"
)

type feature struct {
	name   string
	values []float64
}

func (f feature) minMax() []float64 {
	lo, hi := slices.Min(f.values), slices.Max(f.values)
	out := make([]float64, len(f.values))
	for i, v := range f.values {
		out[i] = (v - lo) / (hi - lo)
	}
	return out
}

func (f feature) zscore() []float64 {
	n := float64(len(f.values))
	mean := 0.0
	for _, v := range f.values {
		mean += v
	}
	mean /= n
	ss := 0.0
	for _, v := range f.values {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / n)
	out := make([]float64, len(f.values))
	for i, v := range f.values {
		out[i] = (v - mean) / sd
	}
	return out
}

func main() {
	features := []feature{
		{"income", []float64{32000, 45000, 51000, 120000, 38000}},
		{"age", []float64{25, 38, 41, 59, 30}},
	}
	for _, f := range features {
		fmt.Printf("%-7s minmax %.3f\n", f.name, f.minMax())
		fmt.Printf("%-7s zscore %.3f\n", f.name, f.zscore())
	}
	features[1].values[0] = 18
	fmt.Printf("%.3f\n", features[1].minMax())
}
