package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
)

func main() {
	xs := data.NewTensor([]int{7, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	ys := data.NewTensor([]int{7}, []float64{0, 1, 0, 1, 0, 1, 0})
	ds := data.FromTensorSlices(xs, ys)
	fmt.Println(ds.Cardinality(), ds.ElementSpec())
	batched := ds.Batch(3)
	fmt.Println(batched.Cardinality(), batched.ElementSpec())
	it := batched.Iter()
	for it.Next() {
		x, y := it.Value()[0], it.Value()[1]
		fmt.Println(x.Shape, x.Data, y.Data)
	}
	fmt.Println(it.Err())
	dropped := ds.Batch(3, data.DropRemainder())
	n := 0
	for it := dropped.Iter(); it.Next(); {
		n++
	}
	fmt.Println(n, dropped.Cardinality(), dropped.ElementSpec())
}
