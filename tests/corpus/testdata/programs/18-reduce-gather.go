package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

var layer *nn.DenseLayer

func main() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	xs := data.NewTensor([]int{5, 1}, []float64{1, 2, 3, 4, 5})
	dist := s.DistributeDataset(data.FromTensorSlices(xs).Batch(5))
	s.Scope(func() {
		layer = nn.Dense(1, nn.WithoutBias())
		layer.Build([]int{-1, 1})
	})
	layer.Kernel().Assign([]float64{2})
	double := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return layer.Call(ctx, x, false)
	}
	for it := dist.Iter(); it.Next(); {
		out := s.Run(double, it.Batch())
		fmt.Println(out.NumReplicas(), s.Gather(out, 0).Data)
		fmt.Println(s.ReduceAxis(strategy.Sum, out, 0).Data, s.ReduceAxis(strategy.Mean, out, 0).Data)
		for i, v := range s.LocalResults(out) {
			fmt.Println("replica", i, v.Shape, v.Data)
		}
	}
	fmt.Println(strategy.Sum, strategy.Mean)
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
}
