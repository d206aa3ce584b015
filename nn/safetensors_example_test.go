package nn_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// A model's weights saved as safetensors, read back with ReadSafetensors,
// and loaded into a fresh model, which then predicts the same.
func ExampleSaveSafetensors() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	build := func(seed uint64) (*strategy.Mirrored, *nn.Sequential) {
		s := strategy.NewMirrored(strategy.WithSeed(seed))
		var m *nn.Sequential
		s.Scope(func() {
			m = nn.NewSequential(nn.Dense(4, nn.ReLU, nn.Named("hidden")), nn.Dense(2, nn.Named("out")))
			m.Build([]int{1, 3})
		})
		return s, m
	}
	s1, trained := build(1)
	defer s1.Close()
	if err := nn.SaveSafetensors(path, trained); err != nil {
		fmt.Println(err)
		return
	}
	entries, meta, _ := nn.ReadSafetensors(path)
	for _, e := range entries {
		fmt.Println(e.Name, e.DType, e.Shape)
	}
	fmt.Println(meta)

	s2, fresh := build(2)
	defer s2.Close()
	if err := nn.LoadSafetensors(path, fresh); err != nil {
		fmt.Println(err)
		return
	}
	x := data.RandomNormal(3, 2, 3)
	var a, b data.Tensor
	s1.Scope(func() { a = trained.Predict(x) })
	s2.Scope(func() { b = fresh.Predict(x) })
	fmt.Println(a.Data[0] == b.Data[0] && a.Data[3] == b.Data[3])
	// Output:
	// hidden/kernel F32 [3 4]
	// hidden/bias F32 [4]
	// out/kernel F32 [4 2]
	// out/bias F32 [2]
	// map[gotrain.dtype:float32 gotrain.format_version:1]
	// true
}

// Loading a PyTorch nn.Linear's state_dict into a Dense layer: the map
// names the tensors and transposes the weight, [out, in] in PyTorch,
// [in, out] in a Dense kernel. A tensor the model does not have is
// listed and refused unless IgnoreExtraTensors.
func ExampleLoadSafetensors() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "linear.safetensors")
	// What PyTorch's nn.Linear(3, 2) would save (written here by gotrain
	// through the same map, read back below).
	weight := graph.NewVariable("fc.weight", []int{2, 3}, graph.Float32, []float64{1, 2, 3, 4, 5, 6})
	bias := graph.NewVariable("fc.bias", []int{2}, graph.Float32, []float64{0.5, -0.5})
	extra := graph.NewVariable("fc.step", []int{}, graph.Float32, []float64{7})
	if err := nn.SaveSafetensors(path, nn.VariableList{weight, bias, extra}); err != nil {
		fmt.Println(err)
		return
	}

	s := strategy.NewMirrored()
	defer s.Close()
	var dense *nn.DenseLayer
	s.Scope(func() {
		dense = nn.Dense(2, nn.Named("fc"))
		dense.Build([]int{1, 3})
	})
	torchNames := nn.TensorMap{
		{Tensor: "fc.weight", Variable: "fc/kernel", Permute: []int{1, 0}},
		{Tensor: "fc.bias", Variable: "fc/bias"},
	}
	err := nn.LoadSafetensors(path, dense, nn.WithTensorMap(torchNames))
	fmt.Println(err != nil)
	if err := nn.LoadSafetensors(path, dense, nn.WithTensorMap(torchNames), nn.IgnoreExtraTensors()); err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range dense.Variables() {
		fmt.Println(v.Name(), v.Shape(), v.Value())
	}
	// Output:
	// true
	// fc/kernel [3 2] [1 4 2 5 3 6]
	// fc/bias [2] [0.5 -0.5]
}
