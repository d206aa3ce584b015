package main

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

var model *nn.Sequential

func main() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithSeed(3))
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(4, nn.ReLU), nn.Dense(3))
		model.Build([]int{-1, 5})
	})
	fmt.Println(len(model.Layers()), len(model.TrainableVariables()), model.Built())
	x := data.RandomNormal(11, 7, 5)
	pred := model.Predict(x)
	pred2 := model.Predict(x)
	fmt.Println(pred.Shape, fmt.Sprint(pred.Data) == fmt.Sprint(pred2.Data))
	fmt.Printf("%.4f\n", pred.Row(0).Data)
	labels := data.RandomInts(12, 3, 7)
	acc := &nn.SparseCategoricalAccuracy{}
	res := model.Evaluate(data.FromTensorSlices(x, labels).Batch(4), acc)
	fmt.Printf("%s %.4f\n", acc.Name(), res[acc.Name()])
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
}
