package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gotrain/gotrain/graph"
)

// Generator samples continuations from a language model outside any step
// function, one token at a time (keras_nlp's samplers, nanoGPT's
// generate): the model maps token ids [1, steps] to logits [1, steps,
// vocab], the last context tokens of the text so far go in, and the next
// token is drawn from the logits at the last real position. It reads the
// model's variables where they are, the strategy's mirrored weights, and
// is compiled once for a context of fixed length: a text shorter than the
// context is padded at the end, which a causal model's outputs at the
// real positions do not see. So no token retraces. Create it with
// NewGenerator.
//
// A Generator is not safe for concurrent use; generate between steps, not
// while Run trains the same model.
type Generator struct {
	model   Model
	context int
	prog    *graph.Program // nil until the first Generate
	ids     *Tensor
	logits  *Tensor
	vocab   int
	feed    []float64
	row     []float64 // one position's logits, read from the program's buffer
}

// NewGenerator returns a generator for model over a context of the given
// length (the longest sequence the model takes). It panics with an error
// wrapping ErrUsage if context < 1.
func NewGenerator(model Model, context int) *Generator {
	if model == nil || context < 1 {
		panic(usageError("NewGenerator: want a model and a context ≥ 1, got %v and %d", model, context))
	}
	return &Generator{model: model, context: context}
}

// GenerateOption sets how Generate samples.
type GenerateOption func(*sampling)

type sampling struct {
	temperature float64
	topK        int
	seed        uint64
}

// Temperature divides the logits before sampling (default 1): below 1 the
// text is more predictable, above 1 more varied, and 0 takes the most
// likely token every time. It panics if t < 0 or is not finite.
func Temperature(t float64) GenerateOption {
	if !(t >= 0) || math.IsInf(t, 0) {
		panic(usageError("Temperature: want a finite temperature ≥ 0, got %v", t))
	}
	return func(s *sampling) { s.temperature = t }
}

// TopK samples among the k most likely tokens only (default: all). It
// panics if k < 1.
func TopK(k int) GenerateOption {
	if k < 1 {
		panic(usageError("TopK: want k ≥ 1, got %d", k))
	}
	return func(s *sampling) { s.topK = k }
}

// SampleSeed seeds the sampling (default 0): the same seed, model and prompt
// give the same text.
func SampleSeed(seed uint64) GenerateOption { return func(s *sampling) { s.seed = seed } }

// Generate returns n tokens that continue prompt. It returns an error,
// changing nothing, if the prompt is empty or holds an id outside the
// model's vocabulary, naming it.
func (gen *Generator) Generate(prompt []int, n int, opts ...GenerateOption) ([]int, error) {
	s := sampling{temperature: 1}
	for _, o := range opts {
		o(&s)
	}
	if len(prompt) == 0 {
		return nil, usageError("Generate: want a prompt of at least one token, got none")
	}
	if n < 0 {
		return nil, usageError("Generate: want n ≥ 0 tokens, got %d", n)
	}
	if err := gen.compile(); err != nil {
		return nil, err
	}
	for i, id := range prompt {
		if id < 0 || id >= gen.vocab {
			return nil, usageError("Generate: prompt token %d is %d, outside the model's vocabulary [0, %d)", i, id, gen.vocab)
		}
	}
	rng := rand.New(rand.NewPCG(s.seed, 0x9e3779b97f4a7c15))
	text := slices.Clone(prompt)
	out := make([]int, 0, n)
	probs := make([]float64, gen.vocab)
	order := make([]int, gen.vocab)
	for range n {
		window := text[max(0, len(text)-gen.context):]
		clear(gen.feed)
		for i, id := range window {
			gen.feed[i] = float64(id)
		}
		gen.prog.Feed(gen.ids, gen.feed)
		if err := gen.prog.Run(); err != nil {
			return out, fmt.Errorf("nn: Generate: %w", err)
		}
		next := sample(gen.lastRow(len(window)-1), s, rng, probs, order)
		text = append(text, next)
		out = append(out, next)
	}
	return out, nil
}

// compile traces the model once on [1, context] ids.
func (gen *Generator) compile() (err error) {
	if gen.prog != nil {
		return nil
	}
	dt := graph.Float32
	if vs := gen.model.Variables(); len(vs) > 0 {
		dt = vs[0].DType()
	}
	g := graph.New(dt)
	ids := g.Placeholder("ids", 1, gen.context)
	defer func() {
		// A model that refuses the shape panics as it would in Run.
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	logits := gen.model.Call(nil, ids, false)
	sh := logits.Shape()
	if len(sh) != 3 || sh[0] != 1 || sh[1] != gen.context {
		return shapeError("Generate: want logits [1, %d, vocab] from the model, got %v", gen.context, sh)
	}
	prog, err := g.Compile(logits)
	if err != nil {
		return err
	}
	gen.prog, gen.ids, gen.logits, gen.vocab = prog, ids, logits, sh[2]
	gen.feed = make([]float64, gen.context)
	gen.row = make([]float64, gen.vocab)
	return nil
}

// lastRow returns the logits at position pos, read in place from the
// program's buffer rather than copying every position's.
func (gen *Generator) lastRow(pos int) []float64 {
	lo, hi := pos*gen.vocab, (pos+1)*gen.vocab
	if f := gen.prog.F32(gen.logits); f != nil {
		for i, v := range f[lo:hi] {
			gen.row[i] = float64(v)
		}
		return gen.row
	}
	if f := gen.prog.F64(gen.logits); f != nil {
		return f[lo:hi]
	}
	return gen.prog.Value(gen.logits)[lo:hi] // a device program's buffer is on the device
}

// sample draws a token from logits as s says; probs and order are scratch
// of the vocabulary's length.
func sample(logits []float64, s sampling, rng *rand.Rand, probs []float64, order []int) int {
	if s.temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best
	}
	for i := range order {
		order[i] = i
	}
	k := len(logits)
	if s.topK > 0 && s.topK < k {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case logits[a] > logits[b]:
				return -1
			case logits[a] < logits[b]:
				return 1
			}
			return 0
		})
		k = s.topK
	}
	top := math.Inf(-1)
	for _, i := range order[:k] {
		top = math.Max(top, logits[i])
	}
	var sum float64
	for j, i := range order[:k] {
		probs[j] = math.Exp((logits[i] - top) / s.temperature)
		sum += probs[j]
	}
	u := rng.Float64() * sum
	for j, i := range order[:k] {
		u -= probs[j]
		if u < 0 {
			return i
		}
	}
	return order[k-1]
}
