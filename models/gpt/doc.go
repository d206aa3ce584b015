// Package gpt is a small decoder-only transformer (a character-level GPT)
// written with nn and graph the way a user writes one in a notebook: a Go
// struct of its parts with a Call method, residual connections as ordinary
// Go. It is the model of gotrain bench gpt and of the equivalence tests, and
// the reference for notebooks/06-gpt.ipynb, which writes the same model in
// cells.
//
// The architecture is GPT-2's: token and position embeddings, Layers blocks
// of pre-LayerNorm causal self-attention and a GELU MLP (4·Width wide), each
// added back to its input, a final LayerNorm and an output layer tied to the
// token embedding. Weights start normal with σ = 0.02, but for the two
// projections that add into the residual stream (attention's output and the
// MLP's down projection), whose σ is 0.02/√(2·Layers) so that the stream's
// variance does not grow with depth (GPT-2's, and torch_gpt.py's).
//
// Train trains one on a text's character ids with a Schedule, nanoGPT's
// recipe as shared/bench/torch_gpt.py runs it (Bench gives the benchmark's),
// estimating the training and validation losses as that script does.
//
// # Use
//
//	s.Scope(func() { model, err = gpt.New("gpt", gpt.Small(vocab.Size())) })
//	logits := model.Call(ctx, ids, true) // in a step function: [batch, steps, vocab]
//
// New refuses a configuration whose heads do not divide the width, naming
// both; Call refuses a sequence longer than the context, naming both
// lengths.
package gpt
