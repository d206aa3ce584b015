package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

var model *nn.Sequential

var opt nn.Optimizer

func main() {
	xs := make([]float64, 32)
	ys := make([]float64, 32)
	for i := range xs {
		xs[i] = float64(i)/16 - 1
		ys[i] = 3*xs[i] + 1
	}
	x := data.NewTensor([]int{32, 1}, xs)
	y := data.NewTensor([]int{32, 1}, ys)
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(5))
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(8))
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(1))
		opt = nn.NewAdam(0.1)
	})
	mse := nn.MeanSquaredError{Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, xb, yb *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(mse.Call(yb, model.Call(ctx, xb, true)), 8)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	for epoch := 1; epoch <= 30; epoch++ {
		var last float64
		for it := dist.Iter(); it.Next(); {
			last = s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar()
		}
		if epoch%10 == 0 {
			fmt.Printf("epoch %2d loss %.4f\n", epoch, last)
		}
	}
	dense := model.Layers()[0].(*nn.DenseLayer)
	fmt.Printf("kernel %.2f bias %.2f\n", dense.Kernel().Value(), dense.Bias().Value())
	fmt.Printf("%.2f\n", model.Predict(data.NewTensor([]int{2, 1}, []float64{0, 2})).Data)
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
}
