package gpt_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/models/gpt"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// torchGPT is testdata/torch_gpt.json, written with torch_gpt.safetensors
// by scripts/torch_safetensors.py: nanoGPT's outputs, in float64, for
// fixed token ids.
type torchGPT struct {
	Config struct {
		Vocab, Context, Layers, Heads, Width int
	}
	IDs         []float64 `json:"ids"`
	IDsShape    []int     `json:"ids_shape"`
	Logits      []float64 `json:"logits"`
	LogitsShape []int     `json:"logits_shape"`
}

func readTorchGPT(t *testing.T) (torchGPT, gpt.Config) {
	t.Helper()
	b, err := os.ReadFile("testdata/torch_gpt.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchGPT
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	c := ref.Config
	return ref, gpt.Config{Vocab: c.Vocab, Context: c.Context, Layers: c.Layers, Heads: c.Heads, Width: c.Width, Bias: true}
}

// TestIssue33LoadsNanoGPT loads nanoGPT's weights (testdata/torch_gpt.safetensors,
// its state_dict names, fused q/k/v, lm_head tied) through TorchNames and
// wants nanoGPT's logits: within 1e-5 in float32 and 1e-12 in float64, on 1
// and 2 replicas. Then it saves the model through the same map and wants
// every tensor of the file back, bit for bit.
func TestIssue33LoadsNanoGPT(t *testing.T) {
	ref, cfg := readTorchGPT(t)
	const file = "testdata/torch_gpt.safetensors"
	for _, tc := range []struct {
		dt       graph.DType
		replicas int
		tol      float64
	}{{graph.Float32, 1, 1e-5}, {graph.Float32, 2, 1e-5}, {graph.Float64, 1, 1e-12}, {graph.Float64, 2, 1e-12}} {
		t.Run(fmt.Sprintf("%v/%d_replicas", tc.dt, tc.replicas), func(t *testing.T) {
			s := strategy.NewMirrored(strategy.WithDType(tc.dt), strategy.WithReplicas(tc.replicas))
			defer s.Close()
			var model *gpt.GPT
			var err error
			ids := data.NewTensor(ref.IDsShape, ref.IDs)
			s.Scope(func() {
				model, err = gpt.New("gpt", cfg)
				if err == nil {
					nn.Predict(model, ids) // builds the variables
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := nn.LoadSafetensors(file, model, nn.WithTensorMap(gpt.TorchNames("gpt", cfg))); err != nil {
				t.Fatal(err)
			}
			var logits data.Tensor
			s.Scope(func() { logits = nn.Predict(model, ids) })
			if !slices.Equal(logits.Shape, ref.LogitsShape) {
				t.Fatalf("logits of shape %v, want %v", logits.Shape, ref.LogitsShape)
			}
			worst := 0.0
			for i, w := range ref.Logits {
				g := logits.Data[i]
				d := math.Abs(g-w) / max(1, math.Abs(w))
				if !(d <= tc.tol) {
					t.Fatalf("logit %d = %v, nanoGPT's %v (difference %.3g, want ≤ %g)", i, g, w, d, tc.tol)
				}
				worst = max(worst, d)
			}
			t.Logf("largest difference from nanoGPT's logits: %.3g", worst)

			back := filepath.Join(t.TempDir(), "back.safetensors")
			if err := nn.SaveSafetensors(back, model, nn.WithTensorMap(gpt.TorchNames("gpt", cfg))); err != nil {
				t.Fatal(err)
			}
			compareFiles(t, back, file)
		})
	}
}

// compareFiles wants the tensors of got and want equal in name, shape and
// value (dtypes may differ: a float64 model writes F64).
func compareFiles(t *testing.T, got, want string) {
	t.Helper()
	g, _, err := nn.ReadSafetensors(got)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := nn.ReadSafetensors(want)
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]nn.SafetensorsEntry)
	for _, e := range g {
		byName[e.Name] = e
	}
	for _, e := range w {
		ge, ok := byName[e.Name]
		if !ok {
			t.Errorf("%s has no tensor %q", got, e.Name)
			continue
		}
		delete(byName, e.Name)
		if !slices.Equal(ge.Shape, e.Shape) || !slices.Equal(ge.Values(), e.Values()) {
			t.Errorf("tensor %q: saved %v %v, want %v %v", e.Name, ge.Shape, ge.Values(), e.Shape, e.Values())
		}
	}
	for name := range byName {
		t.Errorf("%s has a tensor %q the original has not", got, name)
	}
}

// TestTorchNamesRefusesAnotherConfig loads the nanoGPT file into a model of
// another depth and wants the error to list what does not fit.
func TestTorchNamesRefusesAnotherConfig(t *testing.T) {
	ref, cfg := readTorchGPT(t)
	cfg.Layers = 1
	s := strategy.NewMirrored()
	defer s.Close()
	var model *gpt.GPT
	s.Scope(func() {
		model, _ = gpt.New("gpt", cfg)
		nn.Predict(model, data.NewTensor(ref.IDsShape, ref.IDs))
	})
	before := model.Variables()[0].Value()
	err := nn.LoadSafetensors("testdata/torch_gpt.safetensors", model, nn.WithTensorMap(gpt.TorchNames("gpt", cfg)))
	if err == nil {
		t.Fatal("a 2-layer file loaded into a 1-layer model")
	}
	for _, want := range []string{"testdata/torch_gpt.safetensors", `"transformer.h.1.ln_1.weight" F32[16]`, "match no variable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if after := model.Variables()[0].Value(); !slices.Equal(before, after) {
		t.Error("a failed load changed the token table")
	}
}
