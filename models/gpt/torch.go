package gpt

import (
	"fmt"

	"github.com/gotrain/gotrain/nn"
)

// TorchNames maps the state_dict of nanoGPT's model (github.com/karpathy/nanoGPT
// model.py) onto a GPT of configuration c made by New(name, c), for
// nn.LoadSafetensors and nn.SaveSafetensors (nn.WithTensorMap). It is also
// the example of how a user writes a map for a model of their own.
//
// The two architectures are one: pre-LayerNorm blocks (ε 1e-5), exact GELU,
// causal attention scaled by 1/√headDim, lm_head tied to the token table.
// What differs is layout: nanoGPT's Linear weights are [out, in], Dense's
// kernels [in, out] (Permute {1, 0}); nanoGPT projects q, k and v with one
// fused c_attn [3·width, width], which gives attention's query, key and
// value kernels as Parts 0, 1 and 2. lm_head.weight is a second rule onto
// the token table: a file may hold it (nanoGPT's torch.save does) or not
// (safetensors' save_file drops shared tensors); when both are there they
// must agree. c.Bias must match nanoGPT's bias setting; nanoGPT's causal
// mask buffer (attn.bias, without flash attention) is skipped.
func TorchNames(name string, c Config) nn.TensorMap {
	m := nn.TensorMap{
		{Tensor: "transformer.wte.weight", Variable: name + "/tok/embeddings"},
		{Tensor: "lm_head.weight", Variable: name + "/tok/embeddings"},
		{Tensor: "transformer.wpe.weight", Variable: name + "/pos/embeddings"},
	}
	t := []int{1, 0}
	norm := func(torch, ours string) {
		m = append(m, nn.TensorRule{Tensor: torch + ".weight", Variable: ours + "/gamma"})
		if c.Bias {
			m = append(m, nn.TensorRule{Tensor: torch + ".bias", Variable: ours + "/beta"})
		}
	}
	linear := func(torch, ours string) {
		m = append(m, nn.TensorRule{Tensor: torch + ".weight", Variable: ours + "/kernel", Permute: t})
		if c.Bias {
			m = append(m, nn.TensorRule{Tensor: torch + ".bias", Variable: ours + "/bias"})
		}
	}
	for i := range c.Layers {
		torch, ours := fmt.Sprintf("transformer.h.%d.", i), fmt.Sprintf("%s/block_%d/", name, i)
		norm(torch+"ln_1", ours+"ln_1")
		for part, proj := range []string{"query", "key", "value"} {
			m = append(m, nn.TensorRule{Tensor: torch + "attn.c_attn.weight", Variable: ours + "attn/" + proj + "/kernel", Parts: 3, Part: part, Permute: t})
			if c.Bias {
				m = append(m, nn.TensorRule{Tensor: torch + "attn.c_attn.bias", Variable: ours + "attn/" + proj + "/bias", Parts: 3, Part: part})
			}
		}
		linear(torch+"attn.c_proj", ours+"attn/output")
		m = append(m, nn.TensorRule{Tensor: torch + "attn.bias"}) // the causal mask buffer, not c_attn's bias
		norm(torch+"ln_2", ours+"ln_2")
		linear(torch+"mlp.c_fc", ours+"mlp/up")
		linear(torch+"mlp.c_proj", ours+"mlp/down")
	}
	norm("transformer.ln_f", name+"/ln_f")
	return m
}
