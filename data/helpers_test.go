package data

import (
	"fmt"
	"slices"
	"testing"
)

// panics runs fn and returns what it panicked with, or nil.
func panics(fn func()) (r any) {
	defer func() { r = recover() }()
	fn()
	return nil
}

// panicErr runs fn and returns what it panicked with as an error, or nil.
func panicErr(fn func()) error {
	switch v := panics(fn).(type) {
	case nil:
		return nil
	case error:
		return v
	default:
		return fmt.Errorf("%v", v)
	}
}

// seq returns a dataset of n elements: (i) as a scalar and (10i, 10i+1) as
// a vector, so that every element's values identify it.
func seq(n int) *Dataset {
	a := Zeros(n)
	b := Zeros(n, 2)
	for i := range n {
		a.Data[i] = float64(i)
		b.Data[2*i] = float64(10 * i)
		b.Data[2*i+1] = float64(10*i + 1)
	}
	return FromTensorSlices(a, b)
}

// collect reads one pass of d, copying every element.
func collect(t testing.TB, d *Dataset) [][]Tensor {
	t.Helper()
	it := d.Iter()
	defer it.Close()
	var out [][]Tensor
	for it.Next() {
		v := it.Value()
		c := make([]Tensor, len(v))
		for k := range v {
			c[k] = v[k].Clone()
		}
		out = append(out, c)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iteration failed: %v", err)
	}
	return out
}

// firsts concatenates component 0 of every element.
func firsts(elems [][]Tensor) []float64 {
	var out []float64
	for _, e := range elems {
		out = append(out, e[0].Data...)
	}
	return out
}

// consistent checks that component 1 of each element matches component 0
// (as seq builds them), which shows rows of different components were
// never mixed up.
func consistent(t testing.TB, elems [][]Tensor) {
	t.Helper()
	for i, e := range elems {
		for j, v := range e[0].Data {
			if e[1].Data[2*j] != 10*v || e[1].Data[2*j+1] != 10*v+1 {
				t.Fatalf("element %d row %d: components disagree: %v vs %v", i, j, e[0], e[1])
			}
		}
	}
}

func floats(xs ...int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func rangeFloats(lo, hi int) []float64 {
	var out []float64
	for i := lo; i < hi; i++ {
		out = append(out, float64(i))
	}
	return out
}

func sortedCopy(a []float64) []float64 {
	c := slices.Clone(a)
	slices.Sort(c)
	return c
}

func shapeStr(s [][]int) string { return fmt.Sprint(s) }
