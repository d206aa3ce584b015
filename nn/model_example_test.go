package nn_test

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// ResidualMLP is a model of one's own: a struct of its parts, with Call and
// Variables.
type ResidualMLP struct {
	d1, d2 *nn.DenseLayer
}

// Call returns x + d2(d1(x)): a residual is ordinary Go.
func (m *ResidualMLP) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	return graph.Add(x, m.d2.Call(ctx, m.d1.Call(ctx, x, training), training))
}

// Variables lists the parts' variables, each once.
func (m *ResidualMLP) Variables() []*nn.Variable { return nn.VariablesOf(m.d1, m.d2) }

// A two-layer residual MLP of one's own, trained with Adam on 2 replicas;
// its variables are named by the paths given to its layers.
func ExampleModel() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(1))
	defer s.Close()
	x := data.RandomNormal(1, 64, 4)
	y := x.Scale(-1) // the residual must learn -2x
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(16))

	var model *ResidualMLP
	var opt nn.Optimizer
	s.Scope(func() {
		model = &ResidualMLP{
			d1: nn.Dense(16, nn.ReLU, nn.Named("block_0/up")),
			d2: nn.Dense(4, nn.Named("block_0/down")),
		}
		opt = nn.NewAdam(0.01)
	})
	lossObj := nn.MeanSquaredError{Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
	for epoch := range 3 {
		total := 0.0
		for it := dist.Iter(); it.Next(); {
			total += s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar()
		}
		fmt.Printf("epoch %d: loss %.4f\n", epoch, total/4)
	}
	for _, v := range nn.TrainableVariables(model) {
		fmt.Println(v.Name(), v.Shape())
	}
	// Output:
	// epoch 0: loss 4.5107
	// epoch 1: loss 3.8056
	// epoch 2: loss 3.2338
	// block_0/up/kernel [4 16]
	// block_0/up/bias [16]
	// block_0/down/kernel [16 4]
	// block_0/down/bias [4]
}

func ExampleSequential_Predict() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() { model = nn.NewSequential(nn.Dense(4, nn.ReLU), nn.Dense(2)) })
	probs := model.Predict(data.RandomNormal(1, 5, 3))
	fmt.Println(probs.Shape)
	// Output:
	// [5 2]
}

func ExampleSequential_Evaluate() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(2))
		model.Build([]int{1, 1})
	})
	// Class 1 when x > 0: logits -x and x.
	model.Layers()[0].(*nn.DenseLayer).Kernel().Assign([]float64{-1, 1})
	x := data.NewTensor([]int{5, 1}, []float64{-2, -1, 1, 2, 3})
	y := data.NewTensor([]int{5}, []float64{0, 0, 1, 1, 0})
	acc := &nn.SparseCategoricalAccuracy{}
	res := model.Evaluate(data.FromTensorSlices(x, y).Batch(3), acc)
	fmt.Printf("%.2f\n%v\n", res["accuracy"], acc)
	// Output:
	// 0.80
	// accuracy: 0.8000 (4 of 5 examples)
}
