package strategy_test

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

func ExampleNewMirrored() {
	s := strategy.NewMirrored(strategy.WithDevices("cpu:0", "cpu:0", "cpu:1"))
	defer s.Close()
	fmt.Println(s.NumReplicasInSync(), s.Devices(), s.DType())
	// Output:
	// 3 [cpu:0 cpu:0 cpu:1] float32
}

// The seed notebook's loop: build the model inside Scope, run one step per
// global batch and sum the per-replica losses.
func ExampleMirrored_Run() {
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

func ExampleMirrored_Scope() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	s.Scope(func() {
		fmt.Println(strategy.Current() == s, strategy.UniqueName("dense"), strategy.UniqueName("dense"))
		v := strategy.CreateVariable("w", []int{2}, []float64{1, 2})
		fmt.Println(v.Name(), v.DType(), len(s.Variables()))
	})
	fmt.Println(strategy.Current() == nil)
	// Output:
	// true dense dense_1
	// w float32 1
	// true
}

func ExampleReplicaContext_AllReduce() {
	s := strategy.NewMirrored(strategy.WithReplicas(3), strategy.WithDType(graph.Float64))
	defer s.Close()
	// Each replica holds its id; the all-reduce gives every replica the sum.
	ids := strategy.NewPerReplica(data.NewTensor(nil, []float64{0}), data.NewTensor(nil, []float64{1}), data.NewTensor(nil, []float64{2}))
	step := func(ctx *strategy.ReplicaContext, id *graph.Node) *graph.Node {
		return ctx.AllReduce(strategy.Sum, id)
	}
	for r, v := range s.Run(step, ids).Values() {
		fmt.Printf("replica %d sees %.1f\n", r, v.Scalar())
	}
	// Output:
	// replica 0 sees 3.0
	// replica 1 sees 3.0
	// replica 2 sees 3.0
}

// The all-reduce carries gradients: with S = Σ_r x_r and loss_r = x_r·S,
// the total loss Σ_r x_r·S = S² has d/dx_k = 2S on every replica, which is
// what each replica's backward pass computes (S directly, plus the
// all-reduced gradient of S).
func ExampleReplicaContext_AllReduce_gradient() {
	s := strategy.NewMirrored(strategy.WithReplicas(3), strategy.WithDType(graph.Float64))
	defer s.Close()
	xs := strategy.NewPerReplica(data.NewTensor(nil, []float64{0}), data.NewTensor(nil, []float64{1}), data.NewTensor(nil, []float64{2}))
	step := func(ctx *strategy.ReplicaContext, x *graph.Node) *graph.Node {
		loss := graph.Mul(x, ctx.AllReduce(strategy.Sum, x))
		return ctx.Graph().Gradients(loss, []*graph.Node{x})[0]
	}
	for r, v := range s.Run(step, xs).Values() {
		fmt.Printf("replica %d: d total/d x = %.1f\n", r, v.Scalar())
	}
	// Output:
	// replica 0: d total/d x = 6.0
	// replica 1: d total/d x = 6.0
	// replica 2: d total/d x = 6.0
}

func ExampleMirrored_DistributeDatasetsFromFunction() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	x := data.NewTensor([]int{6, 1}, []float64{1, 2, 3, 4, 5, 6})
	dist := s.DistributeDatasetsFromFunction(func(ctx data.InputContext) *data.Dataset {
		perReplica, err := ctx.PerReplicaBatchSize(4)
		if err != nil {
			panic(err)
		}
		return data.FromTensorSlices(x).Batch(perReplica)
	})
	for it := dist.Iter(); it.Next(); {
		b := it.Batch()
		fmt.Println(b.Replica(0)[0].Data, b.Replica(1)[0].Data, b.Count())
	}
	// Output:
	// [1 2] [3 4] 4
	// [5 6] [0 0] 2
}

// Reading a gradient's numbers, for a check or for debugging: the step
// returns the gradients Gradients gave after the loss, and Reduce with
// Sum adds the replicas' parts, giving the gradient the optimizer applied
// (each replica's loss is already divided by the global batch). Here a
// float64 model on two replicas, checked against SGD's update.
func ExampleReplicaContext_Gradients() {
	s := strategy.NewMirrored(strategy.WithDType(graph.Float64), strategy.WithReplicas(2))
	defer s.Close()
	const GlobalBatchSize = 8
	features := data.RandomNormal(7, 8, 3)
	labels := data.RandomInts(8, 2, 8)
	dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(GlobalBatchSize))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(2))
		nn.Build(model, GlobalBatchSize, 3) // its variables, before the first Run
		opt = nn.NewSGD(0.1)
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	gradStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) []*nn.Tensor {
		logits := model.Call(ctx, x, true)
		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
		grads := ctx.Gradients(loss, model.TrainableVariables())
		opt.ApplyGradients(ctx, grads)
		return append([]*nn.Tensor{loss}, grads...) // the loss, then a gradient per variable
	}
	kernel := model.TrainableVariables()[0]
	before := kernel.Value()
	it := dist.Iter()
	it.Next()
	out := s.Run(gradStep, it.Batch())
	g := s.Reduce(strategy.Sum, out.Index(1).Index(0)) // kernel's gradient, summed over replicas
	fmt.Println(kernel.Name(), g.Shape)
	fmt.Printf("%.4f\n", g.Data[:3])
	after := kernel.Value()
	worst := 0.0
	for i := range after {
		worst = max(worst, math.Abs(after[i]-(before[i]-0.1*g.Data[i])))
	}
	fmt.Println("SGD applied it:", worst < 1e-12)
	// Output:
	// dense/kernel [3 2]
	// [0.1593 -0.1593 0.0954]
	// SGD applied it: true
}

// nn.Build calls a model with such a context so that a Call that reads it
// builds outside Run.
func ExampleMirrored_BuildContext() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	g := graph.New(s.DType())
	ctx := s.BuildContext(g)
	fmt.Println(ctx.ReplicaID(), ctx.NumReplicasInSync(), ctx.Device(), ctx.Graph() == g)
	// Output:
	// 0 2 cpu:0 true
}
