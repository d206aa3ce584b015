package nn_test

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// A small CNN with synchronized batch norm trained on 2 replicas; the last
// global batch (5 of 21 images) is padded and masked.
func Example_cnn() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	x := data.RandomNormal(1, 21, 8, 8, 1)
	y := data.RandomInts(2, 2, 21)
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(8).Repeat(3))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(
			nn.Conv2D(4, 3, nn.WithPadding(nn.Same), nn.WithoutBias()),
			nn.BatchNormalization(nn.SyncBatchStats()),
			nn.Activate(nn.ReLU),
			nn.MaxPool2D(2),
			nn.Flatten(),
			nn.Dropout(0.25),
			nn.Dense(2),
		)
		opt = nn.NewAdam(0.01)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	step := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 0)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
		return loss
	}
	for it := dist.Iter(); it.Next(); {
		fmt.Printf("%.4f\n", s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar())
	}
	fmt.Println(len(model.TrainableVariables()), len(model.Variables()))
	// Output:
	// 1.2222
	// 1.5703
	// 1.2222
	// 0.7858
	// 0.9803
	// 0.6105
	// 0.4282
	// 1.1911
	// 0.6956
	// 5 8
}

func ExampleConv2D() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var c *nn.Conv2DLayer
	s.Scope(func() {
		c = nn.Conv2D(16, 3, nn.WithStrides(2, 2), nn.WithPadding(nn.Same), nn.WithActivation(nn.ReLU))
		c.Build([]int{1, 28, 28, 3}) // or built on the first Call
	})
	fmt.Println(c.Name(), c.Kernel().Shape(), c.Bias().Shape(), c.OutputShape([]int{32, 28, 28, 3}))
	// Output: conv2d [3 3 3 16] [16] [32 14 14 16]
}

func ExampleMaxPool2D() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var pool *nn.MaxPool2DLayer
	s.Scope(func() { pool = nn.MaxPool2D(2) })
	x := data.NewTensor([]int{1, 2, 4, 1}, []float64{1, 5, 2, 0, 3, 4, 8, 7})
	out := s.Run(func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return pool.Call(ctx, x, false) }, x)
	fmt.Println(out.Values()[0].Shape)
	fmt.Printf("%.1f\n", out.Values()[0].Data)
	// Output:
	// [1 1 2 1]
	// [5.0 8.0]
}

func ExampleFlatten() {
	f := nn.Flatten(nn.Named("to_vector"))
	fmt.Println(f.Name(), f.OutputShape([]int{32, 7, 7, 16}))
	// Output: to_vector [32 784]
}

// Dropout is the identity at inference and drops a fraction rate of the
// inputs while training, scaling the rest by 1/(1-rate).
func ExampleDropout() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64), strategy.WithSeed(7))
	defer s.Close()
	var d *nn.DropoutLayer
	s.Scope(func() { d = nn.Dropout(0.5) })
	ones := data.NewTensor([]int{1, 8}, []float64{1, 1, 1, 1, 1, 1, 1, 1})
	for _, training := range []bool{false, true, true} {
		step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return d.Call(ctx, x, training) }
		out := s.Run(step, ones).Values()[0].Data
		fmt.Printf("training %-5v (counter then %d): %.0f\n", training, graph.CounterValue(d.Counter()), out)
	}
	// Output:
	// training false (counter then 0): [1 1 1 1 1 1 1 1]
	// training true  (counter then 1): [0 0 2 0 0 2 0 0]
	// training true  (counter then 2): [2 2 2 0 2 2 2 2]
}

// The moving averages follow the batch statistics, once per step.
func ExampleBatchNormalization() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	var bn *nn.BatchNormalizationLayer
	s.Scope(func() { bn = nn.BatchNormalization(nn.SyncBatchStats(), nn.BatchNormMomentum(0.5)) })
	x := data.NewTensor([]int{4, 1}, []float64{1, 2, 3, 6})
	step := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return bn.Call(ctx, x, true) }
	dist := s.DistributeDataset(data.FromTensorSlices(x).Batch(4))
	for it := dist.Iter(); it.Next(); {
		out := s.Gather(s.Run(step, it.Batch()), 0)
		fmt.Printf("normalized %.3f\n", out.Data)
	}
	fmt.Printf("moving mean %.3f variance %.3f\n", bn.MovingMean().Value(), bn.MovingVariance().Value())
	// Output:
	// normalized [-1.069 -0.534 0.000 1.603]
	// moving mean [1.500] variance [2.250]
}

func ExampleEmbedding() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var e *nn.EmbeddingLayer
	s.Scope(func() { e = nn.Embedding(100, 4) })
	ids := data.NewTensor([]int{2, 3}, []float64{1, 5, 7, 99, 0, 1})
	out := s.Run(func(ctx *strategy.ReplicaContext, ids *nn.Tensor) *nn.Tensor { return e.Call(ctx, ids, false) }, ids)
	fmt.Println(e.Table().Shape(), out.Values()[0].Shape)
	// Output: [100 4] [2 3 4]
}

func ExampleActivate() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var gelu *nn.ActivationLayer
	s.Scope(func() { gelu = nn.Activate(nn.GELU) })
	x := data.NewTensor([]int{1, 3}, []float64{-1, 0, 1})
	out := s.Run(func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return gelu.Call(ctx, x, true) }, x)
	fmt.Println(gelu.Name(), gelu.Activation())
	fmt.Printf("%.4f\n", out.Values()[0].Data)
	// Output:
	// activation gelu
	// [-0.1587 0.0000 0.8413]
}

// Freezing a layer between cells: its weights leave TrainableVariables and
// the next Run retraces.
func ExampleSequential_SetTrainable() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Conv2D(2, 3), nn.BatchNormalization(), nn.Flatten(), nn.Dense(1))
		model.Build([]int{1, 5, 5, 1})
	})
	fmt.Println(len(model.TrainableVariables()))
	model.Layers()[0].SetTrainable(false)
	fmt.Println(len(model.TrainableVariables()), model.Layers()[0].Trainable())
	model.SetTrainable(true)
	fmt.Println(len(model.TrainableVariables()))
	// Output:
	// 6
	// 4 false
	// 6
}

// A causal Conv1D: each output step sees its own input step and the ones
// before it, so the first step only sees itself.
func ExampleConv1D() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var c *nn.Conv1DLayer
	s.Scope(func() {
		c = nn.Conv1D(1, 2, nn.WithPadding(nn.Causal), nn.WithDilation(1, 2), nn.WithoutBias())
		c.Build([]int{1, 5, 1})
	})
	c.Kernel().Assign([]float64{10, 1}) // y[t] = 10·x[t-2] + x[t]
	x := data.NewTensor([]int{1, 5, 1}, []float64{1, 2, 3, 4, 5})
	out := s.Run(func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return c.Call(ctx, x, false) }, x)
	fmt.Println(c.Kernel().Shape(), out.Values()[0].Shape)
	fmt.Printf("%.0f\n", out.Values()[0].Data)
	// Output:
	// [2 1 1] [1 5 1]
	// [1 2 13 24 35]
}

// Average pooling and global average pooling of one 2x4 image.
func ExampleAveragePooling2D() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var avg *nn.AveragePooling2DLayer
	var global *nn.GlobalAveragePooling2DLayer
	s.Scope(func() {
		avg = nn.AveragePooling2D(2)
		global = nn.GlobalAveragePooling2D()
	})
	x := data.NewTensor([]int{1, 2, 4, 1}, []float64{1, 5, 2, 0, 3, 4, 8, 7})
	out := s.Run(func(ctx *strategy.ReplicaContext, x *nn.Tensor) (*nn.Tensor, *nn.Tensor) {
		return avg.Call(ctx, x, false), global.Call(ctx, x, false)
	}, x)
	for i := range 2 {
		v := out.Index(i).Values()[0]
		fmt.Printf("%v %.2f\n", v.Shape, v.Data)
	}
	// Output:
	// [1 1 2 1] [3.25 4.25]
	// [1 1] [3.75]
}

// A residual block: the shortcut is added to the branch's output; a branch
// that changes the shape needs a projection of the shortcut.
func ExampleAdd() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	var conv, proj *nn.Conv2DLayer
	s.Scope(func() {
		conv = nn.Conv2D(4, 3, nn.WithStrides(2, 2), nn.WithPadding(nn.Same), nn.Named("block/conv"))
		proj = nn.Conv2D(4, 1, nn.WithStrides(2, 2), nn.Named("block/proj"))
	})
	x := data.RandomNormal(1, 2, 6, 6, 3)
	block := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return nn.Add(proj.Call(ctx, x, true), conv.Call(ctx, x, true))
	}
	fmt.Println(s.Run(block, x).Values()[0].Shape)
	_, err := s.TryRun(func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor {
		return nn.Add(x, conv.Call(ctx, x, true))
	}, x)
	fmt.Println(err)
	// Output:
	// [2 3 3 4]
	// strategy: replica 0: nn: add: want tensors of one shape for a residual, got [2 6 6 3] and [2 3 3 4]; project the shortcut to the branch's shape (a 1x1 Conv2D with its strides and filters)
}
