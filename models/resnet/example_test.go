package resnet_test

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/resnet"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// ExampleResNet trains the small ResNet with synchronized batch norm on 2
// replicas for a few steps on random 28x28 images and counts its weights.
func ExampleResNet() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(1))
	defer s.Close()
	x, y := data.RandomNormal(1, 32, 28, 28, 1), data.RandomInts(2, 10, 32)
	var model *resnet.ResNet
	var opt nn.Optimizer
	s.Scope(func() {
		model, _ = resnet.New("resnet", resnet.Small(10))
		opt = nn.NewAdam(1e-3)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
	steps := 0
	for it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(16).Repeat(2)).Iter(); it.Next(); steps++ {
		s.Run(step, it.Batch())
	}
	params := 0
	for _, v := range nn.TrainableVariables(model) {
		params += v.Len()
	}
	fmt.Println(steps, "steps;", params, "weights in", len(model.Variables()), "variables")
	// Output: 4 steps; 174970 weights in 77 variables
}
