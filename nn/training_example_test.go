package nn_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// TestRegularizedTrainingIsReplicaIndependent: with the L2 penalty scaled by
// ScaleRegularizationLoss and sample-weighted losses averaged by
// ComputeAverageLoss, 1, 2 and 4 replicas train to the same weights on a
// dataset whose last batch is padded.
func TestRegularizedTrainingIsReplicaIndependent(t *testing.T) {
	train := func(replicas int, scale bool) []float64 {
		s := newStrategy(t, strategy.WithReplicas(replicas))
		x := data.RandomNormal(31, 18, 3)
		y := data.RandomNormal(32, 18, 2)
		w := data.Zeros(18)
		for i := range w.Data {
			w.Data[i] = float64(1 + i%3)
		}
		var model *nn.Sequential
		var opt nn.Optimizer
		s.Scope(func() {
			model = nn.NewSequential(nn.Dense(2))
			opt = nn.NewSGD(0.1)
		})
		mse := nn.MeanSquaredError{Reduction: nn.ReductionNone}
		step := func(ctx *strategy.ReplicaContext, x, y, w *nn.Tensor) *nn.Tensor {
			loss := nn.ComputeAverageLoss(mse.Call(y, model.Call(ctx, x, true)), 8, w)
			reg := nn.L2(0.5, model.TrainableVariables())
			if scale {
				reg = nn.ScaleRegularizationLoss(reg)
			}
			loss = graph.Add(loss, reg)
			opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
			return loss
		}
		for it := s.DistributeDataset(data.FromTensorSlices(x, y, w).Batch(8)).Iter(); it.Next(); {
			s.Run(step, it.Batch())
		}
		var out []float64
		for _, v := range model.Variables() {
			out = append(out, v.Value()...)
		}
		return out
	}
	want := train(1, true)
	for _, replicas := range []int{2, 4} {
		got := train(replicas, true)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("%d replicas: weight %d = %.15g, 1 replica %.15g", replicas, i, got[i], want[i])
			}
		}
		// Unscaled, the penalty counts once per replica: the weights differ.
		bad := train(replicas, false)
		differ := false
		for i := range want {
			differ = differ || math.Abs(bad[i]-want[i]) > 1e-6
		}
		if !differ {
			t.Errorf("%d replicas: an unscaled penalty trained the same weights; the test cannot see scaling", replicas)
		}
	}
}

func TestComputeAverageLossSampleWeights(t *testing.T) {
	s := newStrategy(t, strategy.WithReplicas(2))
	// 3 examples on 2 replicas: replica 1 has one padded row.
	losses := data.NewTensor([]int{3}, []float64{1, 2, 6})
	weights := data.NewTensor([]int{3}, []float64{0.5, 2, 1})
	tests := []struct {
		name string
		gbs  int
		want float64
	}{
		{"global-batch", 4, (0.5 + 4 + 6) / 4.0},
		{"true-count", 0, (0.5 + 4 + 6) / 3.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := s.DistributeDataset(data.FromTensorSlices(losses, weights).Batch(3)).Iter()
			defer it.Close()
			it.Next()
			step := func(l, w *nn.Tensor) *nn.Tensor { return nn.ComputeAverageLoss(l, tt.gbs, w) }
			if got := s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar(); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("loss %.12f, want %.12f", got, tt.want)
			}
		})
	}
}

func ExampleCategoricalCrossentropy() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	labels := data.NewTensor([]int{2, 3}, []float64{0, 1, 0, 0.5, 0.5, 0})
	probs := data.NewTensor([]int{2, 3}, []float64{0.2, 0.7, 0.1, 0.25, 0.25, 0.5})
	cce := nn.CategoricalCrossentropy{Reduction: nn.ReductionNone}
	out := s.Run(func(y, p *nn.Tensor) *nn.Tensor { return cce.Call(y, p) }, labels, probs)
	fmt.Printf("%.4f\n", out.Values()[0].Data)
	// Output: [0.3567 1.3863]
}

func ExampleBinaryCrossentropy() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	labels := data.NewTensor([]int{3}, []float64{1, 0, 1})
	logits := data.NewTensor([]int{3}, []float64{2, -1, -50})
	bce := nn.BinaryCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	out := s.Run(func(y, p *nn.Tensor) *nn.Tensor { return bce.Call(y, p) }, labels, logits)
	fmt.Printf("%.4f\n", out.Values()[0].Data)
	// Output: [0.1269 0.3133 50.0000]
}

func ExampleMeanSquaredError() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
	defer s.Close()
	y := data.NewTensor([]int{2, 2}, []float64{0, 1, 2, 3})
	p := data.NewTensor([]int{2, 2}, []float64{1, 1, 2, 5})
	w := data.NewTensor([]int{2}, []float64{1, 0.5})
	mse := nn.MeanSquaredError{Reduction: nn.ReductionSum}
	out := s.Run(func(y, p, w *nn.Tensor) *nn.Tensor { return mse.Call(y, p, w) }, y, p, w)
	// Per example: (1+0)/2 = 0.5 and (0+4)/2 = 2, weighted 1 and 0.5.
	fmt.Printf("%.4f\n", out.Values()[0].Scalar())
	// Output: 1.5000
}

func ExampleL2() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	var w *nn.Variable
	s.Scope(func() { w = strategy.CreateVariable("w", []int{2}, []float64{1, 2}) })
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		return nn.ScaleRegularizationLoss(nn.L2(0.1, []*nn.Variable{w}))
	}
	out := s.Run(step)
	// Each replica holds half of 0.1·(1²+2²); summed over replicas it counts once.
	fmt.Printf("replica 0: %.2f, sum: %.2f\n", out.Values()[0].Scalar(), s.Reduce(strategy.Sum, out).Scalar())
	// Output: replica 0: 0.25, sum: 0.50
}

func ExampleScaleRegularizationLoss() {
	s := strategy.NewMirrored(strategy.WithReplicas(4), strategy.WithDType(graph.Float64))
	defer s.Close()
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		return nn.ScaleRegularizationLoss(ctx.Graph().Const(2))
	}
	fmt.Printf("%.2f\n", s.Run(step).Values()[0].Scalar())
	// Output: 0.50
}

// Weights saved from a model alone restore into a strategy that also has
// optimizer state: PartialRestore keeps what the file lacks.
func ExamplePartialRestore() {
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.ckpt")
	s := strategy.NewOneDevice()
	defer s.Close()
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(2))
		model.Build([]int{1, 3})
		nn.BuildOptimizer(nn.NewSGD(0.1, nn.WithMomentum(0.9)), model.TrainableVariables())
	})
	if err := nn.SaveCheckpoint(path, model); err != nil { // weights only
		fmt.Println(err)
	}
	err := nn.RestoreCheckpoint(path, s)
	fmt.Println(err != nil)
	err = nn.RestoreCheckpoint(path, s, nn.PartialRestore())
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}
