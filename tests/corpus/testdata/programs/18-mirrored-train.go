package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

const globalBatch = 16

var model *nn.Sequential

var opt nn.Optimizer

func main() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(1))
	features := data.RandomNormal(7, 64, 4)
	labels := data.RandomInts(8, 2, 64)
	dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(globalBatch))
	fmt.Println(s.NumReplicasInSync(), s.Devices())
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(8, nn.ReLU), nn.Dense(2))
		opt = nn.NewSGD(0.1)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		logits := model.Call(ctx, x, true)
		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), globalBatch)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	for epoch := 1; epoch <= 3; epoch++ {
		total := 0.0
		steps := 0
		for it := dist.Iter(); it.Next(); {
			loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
			total += loss.Scalar()
			steps++
		}
		fmt.Printf("epoch %d: %d steps, mean loss %.4f\n", epoch, steps, total/float64(steps))
	}
	fmt.Println(opt.Iterations(), s.Traces())
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
}
