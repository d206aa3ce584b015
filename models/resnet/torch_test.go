package resnet_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/models/resnet"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
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
	const file = "testdata/torch_resnet.safetensors"
	for _, tc := range []struct {
		dt       graph.DType
		replicas int
		tol      float64
	}{{graph.Float32, 1, 1e-5}, {graph.Float32, 2, 1e-5}, {graph.Float64, 1, 1e-12}, {graph.Float64, 2, 1e-12}} {
		t.Run(fmt.Sprintf("%v/%d_replicas", tc.dt, tc.replicas), func(t *testing.T) {
			s := strategy.NewMirrored(strategy.WithDType(tc.dt), strategy.WithReplicas(tc.replicas))
			defer s.Close()
			var model *resnet.ResNet
			images := data.NewTensor(ref.ImagesShape, ref.Images)
			s.Scope(func() {
				model, err = resnet.New("resnet", cfg)
				if err == nil {
					nn.Predict(model, images) // builds the variables
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			names := resnet.TorchNames("resnet", cfg)
			if err := nn.LoadSafetensors(file, model, nn.WithTensorMap(names)); err != nil {
				t.Fatal(err)
			}
			var logits data.Tensor
			s.Scope(func() { logits = nn.Predict(model, images) })
			if !slices.Equal(logits.Shape, ref.LogitsShape) {
				t.Fatalf("logits of shape %v, want %v", logits.Shape, ref.LogitsShape)
			}
			worst := 0.0
			for i, w := range ref.Logits {
				d := math.Abs(logits.Data[i]-w) / max(1, math.Abs(w))
				if !(d <= tc.tol) {
					t.Fatalf("logit %d = %v, PyTorch's %v (difference %.3g, want ≤ %g)", i, logits.Data[i], w, d, tc.tol)
				}
				worst = max(worst, d)
			}
			t.Logf("largest difference from PyTorch's logits: %.3g", worst)

			back := filepath.Join(t.TempDir(), "back.safetensors")
			if err := nn.SaveSafetensors(back, model, nn.WithTensorMap(names)); err != nil {
				t.Fatal(err)
			}
			saved, _, err := nn.ReadSafetensors(back)
			if err != nil {
				t.Fatal(err)
			}
			orig, _, err := nn.ReadSafetensors(file)
			if err != nil {
				t.Fatal(err)
			}
			byName := make(map[string]nn.SafetensorsEntry)
			for _, e := range saved {
				byName[e.Name] = e
			}
			n := 0
			for _, e := range orig {
				if e.DType == "I64" { // num_batches_tracked: skipped
					continue
				}
				n++
				g, ok := byName[e.Name]
				if !ok || !slices.Equal(g.Shape, e.Shape) || !slices.Equal(g.Values(), e.Values()) {
					t.Errorf("tensor %q saved as %v (present %v), want %v %v", e.Name, g.Shape, ok, e.Shape, e.Values())
				}
			}
			if n != len(saved) {
				t.Errorf("saved %d tensors, want the original's %d float ones", len(saved), n)
			}
		})
	}
}
