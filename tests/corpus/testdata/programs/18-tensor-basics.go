package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
)

func main() {
	t := data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	fmt.Println(t.Shape, t.Rank(), t.Len(), t.Dim(1))
	fmt.Println(t)
	row := t.Row(1)
	fmt.Println(row.Shape, row.Data)
	r := t.Reshape(3, 2)
	fmt.Println(r.Shape, r.Row(2).Data)
	fmt.Println(t.Scale(0.5).Data, t.Slice(0, 1).Shape)
	z := data.Zeros(2, 2)
	c := t.Clone()
	c.Data[0] = 100
	fmt.Println(z.Data, t.Data[0], c.Data[0])
	s := data.NewTensor(nil, []float64{3.5})
	fmt.Println(s.Scalar(), s.Rank())
	u := data.RandomUniform(1, 0, 1, 2, 2)
	u2 := data.RandomUniform(1, 0, 1, 2, 2)
	fmt.Println(u.Shape, fmt.Sprint(u.Data) == fmt.Sprint(u2.Data))
}
