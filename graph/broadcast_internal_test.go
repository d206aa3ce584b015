package graph

import (
	"fmt"
	"testing"
)

// TestBcastDims checks the merged index space of broadcasts: size-1 axes
// dropped, axes merged where every operand steps across them alike, and a
// stride of 0 along the axes an operand is broadcast along.
func TestBcastDims(t *testing.T) {
	for _, c := range []struct {
		shape    []int
		operands [][]int
		dims     string
		strides  string
	}{
		{[]int{3, 5, 7}, [][]int{{3, 5, 7}, {3, 5, 7}}, "[105]", "[[1] [1]]"},
		{[]int{3, 5, 7}, [][]int{{3, 5, 7}, {5, 7}}, "[3 35]", "[[35 1] [0 1]]"},
		{[]int{3, 5, 7}, [][]int{{3, 1, 7}, {5, 1}}, "[3 5 7]", "[[7 0 1] [0 1 0]]"},
		{[]int{3, 1, 5}, [][]int{{3, 1, 5}, {1}}, "[15]", "[[1] [0]]"},
		{[]int{2, 3, 4, 5}, [][]int{{2, 3, 1, 1}, {4, 5}}, "[6 20]", "[[1 0] [0 1]]"},
		{[]int{1, 1}, [][]int{{1}, {}}, "[1]", "[[0] [0]]"},
		{[]int{4, 1, 6}, [][]int{{1, 1, 6}}, "[4 6]", "[[0 1]]"},
	} {
		dims, strides := bcastDims(c.shape, c.operands...)
		if got := fmt.Sprint(dims); got != c.dims {
			t.Errorf("bcastDims(%v, %v): dims %s, want %s", c.shape, c.operands, got, c.dims)
		}
		if got := fmt.Sprint(strides); got != c.strides {
			t.Errorf("bcastDims(%v, %v): strides %s, want %s", c.shape, c.operands, got, c.strides)
		}
	}
}

// TestBcastMode checks that the layouts binaryLoop handles without index
// arithmetic keep their modes, so the MLP's bias and loss ops stay on them.
func TestBcastMode(t *testing.T) {
	for _, c := range []struct {
		a, b []int
		want bcast
	}{
		{[]int{4, 3}, []int{4, 3}, bSame},
		{[]int{4, 3}, []int{}, bScalarB},
		{[]int{1}, []int{4, 3}, bScalarA},
		{[]int{4, 3}, []int{1, 1}, bScalarB},
		{[]int{4, 3}, []int{3}, bVecB},
		{[]int{1, 3}, []int{2, 4, 3}, bVecA},
		{[]int{4, 1}, []int{4, 3}, bGeneral},
		{[]int{3}, []int{3, 1}, bGeneral},
		{[]int{1, 1, 3}, []int{4, 3}, bGeneral},
	} {
		out, _ := tryBroadcast(c.a, c.b)
		if got := bcastMode(c.a, c.b, out); got != c.want {
			t.Errorf("bcastMode(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
