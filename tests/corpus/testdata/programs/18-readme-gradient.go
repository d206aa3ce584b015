package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

const GlobalBatchSize = 64

var model *nn.Sequential

var opt nn.Optimizer

func main() {
	s := strategy.NewMirrored(strategy.WithDType(graph.Float64), strategy.WithReplicas(2))
	features := data.RandomNormal(7, 256, 10)
	labels := data.RandomInts(8, 2, 256)
	dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(GlobalBatchSize))
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
		opt = nn.NewAdam(0.001)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	fmt.Println(s.NumReplicasInSync(), s.Devices(), s.DType())
	onCores := strategy.NewMirrored(strategy.WithDevices("cpu:0", "cpu:0", "cpu:1"))
	fmt.Println(onCores.NumReplicasInSync(), onCores.Devices(), onCores.DType())
	if err := onCores.Close(); err != nil {
		fmt.Println(err)
	}
	trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		logits := model.Call(ctx, x, true)
		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	for it := dist.Iter(); it.Next(); {
		loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
		fmt.Printf("loss %.4f\n", loss.Scalar())
	}
	gradStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) []*nn.Tensor {
		logits := model.Call(ctx, x, true)
		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
		grads := ctx.Gradients(loss, model.TrainableVariables())
		opt.ApplyGradients(ctx, grads)
		return append([]*nn.Tensor{loss}, grads...) // the loss, then one gradient per variable
	}
	it := dist.Iter()
	it.Next()
	out := s.Run(gradStep, it.Batch())
	g := s.Reduce(strategy.Sum, out.Index(1)) // the first variable's gradient: a data.Tensor
	fmt.Println(model.TrainableVariables()[0].Name(), g.Shape, g.Data[:3])
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
}
