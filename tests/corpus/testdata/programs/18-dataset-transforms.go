package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
)

func firsts(ds *data.Dataset) []float64 {
	var out []float64
	it := ds.Iter()
	defer it.Close()
	for it.Next() {
		out = append(out, it.Value()[0].Data...)
	}
	return out
}

func main() {
	vals := data.NewTensor([]int{6}, []float64{10, 20, 30, 40, 50, 60})
	ds := data.FromTensorSlices(vals)
	fmt.Println(firsts(ds.Take(2)), firsts(ds.Skip(4)), firsts(ds.Take(2).Repeat(3)))
	fmt.Println(firsts(ds.Shard(2, 0)), firsts(ds.Shard(2, 1)))
	doubled := ds.Map(func(ts []data.Tensor) []data.Tensor { return []data.Tensor{ts[0].Scale(2)} })
	fmt.Println(firsts(doubled.Batch(4)))
	sh := ds.Shuffle(6, 42)
	a, b := firsts(sh), firsts(sh)
	fmt.Println(a, b, len(a) == len(b))
	fmt.Println(firsts(data.FromFunc(4, func(i int) []data.Tensor {
		return []data.Tensor{data.NewTensor(nil, []float64{float64(i * i)})}
	})))
}
