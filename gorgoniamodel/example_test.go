package gorgoniamodel_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/gorgoniamodel"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// A softmax regression written in gorgonia, trained on 2 replicas: the
// batch of 64 is split 32 and 32, the replicas' gradients are summed and
// Adam updates the one copy of the weights.
func Example() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	x := data.RandomNormal(1, 640, 4)
	y := data.Zeros(640) // class 1 where the first feature is positive
	for i := range 640 {
		if x.Data[i*4] > 0 {
			y.Data[i] = 1
		}
	}
	dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(64))

	var model *gorgoniamodel.Model
	var opt nn.Optimizer
	s.Scope(func() {
		model = gorgoniamodel.New(func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{4, 2}, gorgoniamodel.GlorotU(1))
			logits := G.Must(G.Mul(x, w))
			perExample := G.Must(G.Neg(G.Must(G.Sum(G.Must(G.HadamardProd(r.OneHot(y, 2), G.Must(G.LogSoftMax(logits)))), 1))))
			return r.AverageLoss(perExample)
		})
		opt = nn.NewAdam(0.05)
	})
	for epoch := 1; epoch <= 3; epoch++ {
		var loss float64
		for it := dist.Iter(); it.Next(); {
			loss = s.Reduce(strategy.Sum, model.Step(opt, it.Batch())).Scalar()
		}
		fmt.Printf("epoch %d: loss %.2f\n", epoch, loss)
	}
	fmt.Println(model.Variables()[0])
	// Output:
	// epoch 1: loss 0.62
	// epoch 2: loss 0.42
	// epoch 3: loss 0.34
	// gorgonia/w[4 2] float64
}
