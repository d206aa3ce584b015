package gpt_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/gpt"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
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
	tc := strategytest.TorchCase{File: "testdata/torch_gpt.safetensors", Names: gpt.TorchNames("gpt", cfg),
		Input: data.NewTensor(ref.IDsShape, ref.IDs), Logits: data.NewTensor(ref.LogitsShape, ref.Logits), Ref: "nanoGPT's"}
	build := func() (nn.Model, error) { return gpt.New("gpt", cfg) }
	strategytest.CheckTorch(t, tc, build)
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
