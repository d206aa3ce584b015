package resnet_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/resnet"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// torchResNet is testdata/torch_resnet.json, written with
// torch_resnet.safetensors by scripts/torch_safetensors.py: the PyTorch
// ResNet's outputs in eval mode, in float64, for fixed 9x9 images.
type torchResNet struct {
	Config struct {
		Widths          []int
		Blocks, Classes int
	}
	Images      []float64 `json:"images"`
	ImagesShape []int     `json:"images_shape"`
	Logits      []float64 `json:"logits"`
	LogitsShape []int     `json:"logits_shape"`
}

// TestIssue33LoadsTorchResNet loads the PyTorch ResNet's state_dict
// (Conv2d weights [out, in, kh, kw], batch norms with running statistics
// and num_batches_tracked) through TorchNames and wants its logits: within
// 1e-5 in float32 and 1e-12 in float64, on 1 and 2 replicas; then saves
// through the same map and wants every float tensor of the file back.
func TestIssue33LoadsTorchResNet(t *testing.T) {
	b, err := os.ReadFile("testdata/torch_resnet.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchResNet
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	cfg := resnet.Config{Classes: ref.Config.Classes, Widths: ref.Config.Widths, Blocks: ref.Config.Blocks, StemStride: 1}
	tc := strategytest.TorchCase{File: "testdata/torch_resnet.safetensors", Names: resnet.TorchNames("resnet", cfg),
		Input: data.NewTensor(ref.ImagesShape, ref.Images), Logits: data.NewTensor(ref.LogitsShape, ref.Logits), Ref: "PyTorch's"}
	build := func() (nn.Model, error) { return resnet.New("resnet", cfg) }
	strategytest.CheckTorch(t, tc, build)
}
