package gpt

import (
	"fmt"
	"math"
	"strings"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// Config is a GPT's size.
type Config struct {
	Vocab   int     // tokens (characters)
	Context int     // the longest sequence, and the position table's rows
	Layers  int     // blocks
	Heads   int     // attention heads; they divide Width
	Width   int     // the embedding width
	Dropout float64 // on the attention weights while training
	Bias    bool    // biases in the projections and LayerNorms (nanoGPT's bias=True)
}

// Small is the configuration of the benchmark and the notebook: 4 layers of
// 4 heads, 128 wide, 64 characters of context, no biases.
func Small(vocab int) Config {
	return Config{Vocab: vocab, Context: 64, Layers: 4, Heads: 4, Width: 128}
}

// Validate reports what is wrong with c, naming the fields.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 1 || c.Context < 1 || c.Layers < 1 || c.Heads < 1 || c.Width < 1:
		return fmt.Errorf("gpt: want Vocab, Context, Layers, Heads and Width ≥ 1, got %d, %d, %d, %d and %d", c.Vocab, c.Context, c.Layers, c.Heads, c.Width)
	case c.Width%c.Heads != 0:
		return fmt.Errorf("gpt: want Heads dividing Width, got %d heads for a width of %d", c.Heads, c.Width)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("gpt: want Dropout in [0, 1), got %v", c.Dropout)
	}
	return nil
}

// Block is one transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)).
type Block struct {
	ln1, ln2 *nn.NormLayer
	attn     *nn.MultiHeadAttentionLayer
	up, down *nn.DenseLayer
}

// Call implements nn.Model.
func (b *Block) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	x = graph.AddSameShape(x, b.attn.Call(ctx, b.ln1.Call(ctx, x, training), training))
	return graph.AddSameShape(x, b.down.Call(ctx, b.up.Call(ctx, b.ln2.Call(ctx, x, training), training), training))
}

// Variables implements nn.Model.
func (b *Block) Variables() []*nn.Variable { return nn.VariablesOf(b.ln1, b.attn, b.ln2, b.up, b.down) }

// GPT is the model: Call maps token ids [batch, steps] to logits [batch,
// steps, vocab].
type GPT struct {
	cfg    Config
	tok    *nn.EmbeddingLayer
	pos    *nn.PositionEmbeddingLayer
	blocks []*Block
	lnF    *nn.NormLayer
}

// New returns a GPT of configuration c, its variables made at its first
// Call: create it inside a strategy's Scope. Its variables are named
// name/tok/embeddings, name/block_0/attn/query/kernel, and so on. It
// returns the error of c.Validate.
func New(name string, c Config) (*GPT, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	init := nn.KernelInitializer(nn.RandomNormal{Stddev: 0.02})
	residualSD := 0.02 / math.Sqrt(2*float64(c.Layers))
	attnInit := nn.KernelInitializer(residualInit{sd: 0.02, residual: residualSD})
	opt := func(parts ...nn.LayerOption) []nn.LayerOption {
		if !c.Bias {
			parts = append(parts, nn.WithoutBias())
		}
		return parts
	}
	norm := func(path string) *nn.NormLayer {
		return nn.LayerNormalization(opt(nn.Named(path), nn.NormEpsilon(1e-5))...)
	}
	m := &GPT{
		cfg: c,
		tok: nn.Embedding(c.Vocab, c.Width, nn.Named(name+"/tok"), init),
		pos: nn.PositionEmbedding(c.Context, c.Width, nn.Named(name+"/pos"), init),
		lnF: norm(name + "/ln_f"),
	}
	for i := range c.Layers {
		p := fmt.Sprintf("%s/block_%d/", name, i)
		attn := []nn.LayerOption{nn.Named(p + "attn"), nn.WithCausalMask(), attnInit}
		if c.Dropout > 0 {
			attn = append(attn, nn.AttentionDropout(c.Dropout))
		}
		m.blocks = append(m.blocks, &Block{
			ln1:  norm(p + "ln_1"),
			attn: nn.MultiHeadAttention(c.Heads, c.Width/c.Heads, opt(attn...)...),
			ln2:  norm(p + "ln_2"),
			up:   nn.Dense(4*c.Width, opt(nn.GELU, nn.Named(p+"mlp/up"), init)...),
			down: nn.Dense(c.Width, opt(nn.Named(p+"mlp/down"), nn.KernelInitializer(nn.RandomNormal{Stddev: residualSD}))...),
		})
	}
	return m, nil
}

// Config returns the model's configuration.
func (m *GPT) Config() Config { return m.cfg }

// Call returns the logits [batch, steps, vocab] of the next token after each
// position of ids [batch, steps]. It panics with an error wrapping
// nn.ErrShape if steps exceeds the context (naming both lengths).
func (m *GPT) Call(ctx *strategy.ReplicaContext, ids *nn.Tensor, training bool) *nn.Tensor {
	x := graph.Add(m.tok.Call(ctx, ids, training), m.pos.Call(ctx, ids, training))
	for _, b := range m.blocks {
		x = b.Call(ctx, x, training)
	}
	return m.tok.Attend(ctx, m.lnF.Call(ctx, x, training))
}

// Variables implements nn.Model; the tied token table is listed once.
func (m *GPT) Variables() []*nn.Variable {
	parts := []nn.VariableSource{m.tok, m.pos}
	for _, b := range m.blocks {
		parts = append(parts, b)
	}
	return nn.VariablesOf(append(parts, m.lnF)...)
}

// residualInit initializes attention's kernels: normal with σ sd, and σ
// residual for the output projection, which adds into the residual stream.
type residualInit struct{ sd, residual float64 }

// Initial implements nn.Initializer.
func (r residualInit) Initial(name string, shape []int) []float64 {
	sd := r.sd
	if strings.HasSuffix(name, "/output/kernel") {
		sd = r.residual
	}
	return nn.RandomNormal{Stddev: sd}.Initial(name, shape)
}
