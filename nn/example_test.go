package nn_test

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// The seed notebook's training loop: a two-layer classifier trained with
// Adam on 2 replicas, printing the mean loss of each of the 4 global batches.
func Example() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	const GlobalBatchSize = 64
	features := data.RandomNormal(7, 256, 10)
	labels := data.RandomInts(8, 2, 256)
	dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(GlobalBatchSize))

	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
		opt = nn.NewAdam(0.001)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		logits := model.Call(ctx, x, true)
		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	for it := dist.Iter(); it.Next(); {
		loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
		fmt.Printf("%.4f\n", loss.Scalar())
	}
	// Output:
	// 1.1868
	// 0.9937
	// 0.9710
	// 1.0023
}

func ExampleDense() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var d *nn.DenseLayer
	s.Scope(func() {
		d = nn.Dense(3, nn.ReLU)
		d.Build([]int{8, 4}) // or built on the first Call
	})
	fmt.Println(d.Name(), d.Kernel().Shape(), d.Bias().Shape(), d.Activation(), d.OutputShape([]int{8, 4}))
	// Output:
	// dense [4 3] [3] relu [8 3]
}

func ExampleNewSequential() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
	})
	x := data.RandomNormal(1, 6, 10)
	forward := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return model.Call(ctx, x, false) }
	out := s.Run(forward, s.Broadcast(x)) // builds the model on its first call
	fmt.Println(model.Name(), len(model.TrainableVariables()), out.Values()[0].Shape)
	// Output:
	// sequential 4 [6 2]
}

func ExampleSparseCategoricalCrossentropy() {
	s := strategy.NewOneDevice()
	defer s.Close()
	logits := data.NewTensor([]int{2, 3}, []float64{2, 0, 0, 0, 0, 0})
	labels := data.NewTensor([]int{2}, []float64{0, 2})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	perExample := s.Run(func(y, p *nn.Tensor) *nn.Tensor { return lossObj.Call(y, p) }, labels, logits)
	for _, v := range perExample.Values()[0].Data {
		fmt.Printf("%.4f\n", v)
	}
	// Output:
	// 0.2395
	// 1.0986
}
