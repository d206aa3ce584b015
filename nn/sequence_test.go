package nn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// gradProgram compiles a float64 graph's weighted sum of out (random
// weights, so every output element matters) with its gradients with
// respect to the variables and the placeholder x, and returns an evaluator
// that feeds xv.
type gradProgram struct {
	prog  *graph.Program
	loss  *nn.Tensor
	grads []*nn.Tensor
	x     *nn.Tensor
	xv    []float64
}

func newGradProgram(t *testing.T, out, x *nn.Tensor, xv []float64, vars ...*nn.Variable) *gradProgram {
	t.Helper()
	g := out.Graph()
	r := rand.New(rand.NewPCG(7, 8))
	w := make([]float64, out.Len())
	for i := range w {
		w[i] = 0.5 + r.Float64()
	}
	wn := g.Placeholder("weights", out.Shape()...)
	loss := graph.Sum(graph.Mul(out, wn))
	var xs []*nn.Tensor
	for _, v := range vars {
		xs = append(xs, g.Var(v))
	}
	if x != nil {
		xs = append(xs, x)
	}
	grads := g.Gradients(loss, xs)
	prog, err := g.Compile(append([]*nn.Tensor{loss, out}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	prog.Feed(wn, w)
	return &gradProgram{prog: prog, loss: loss, grads: grads, x: x, xv: xv}
}

func (p *gradProgram) eval(t *testing.T) float64 {
	t.Helper()
	if p.x != nil {
		p.prog.Feed(p.x, p.xv)
	}
	if err := p.prog.Run(); err != nil {
		t.Fatal(err)
	}
	return p.prog.Scalar(p.loss)
}

// check compares every gradient with finite differences: the variables'
// through their storage, then x's.
func (p *gradProgram) check(t *testing.T, vars ...*nn.Variable) {
	t.Helper()
	p.eval(t)
	analytic := make([][]float64, len(p.grads))
	for i, gn := range p.grads {
		analytic[i] = p.prog.Value(gn)
	}
	eval := func() float64 { return p.eval(t) }
	for i, v := range vars {
		checkFiniteDiff(t, v.Name(), eval, v.F64(), analytic[i], 1e-6)
	}
	if p.x != nil {
		checkFiniteDiff(t, "x", eval, p.xv, analytic[len(vars)], 1e-6)
	}
}

// TestDenseRank3: Dense acts on the last axis of [batch, time, in], as on
// the rows of [batch·time, in], with finite-difference gradients.
func TestDenseRank3(t *testing.T) {
	for _, act := range []nn.Activation{nn.Linear, nn.Tanh, nn.Softmax} {
		t.Run(act.String(), func(t *testing.T) {
			s := newStrategy(t)
			g := graph.New(graph.Float64)
			x := g.Placeholder("x", 2, 3, 4)
			xv := data.RandomNormal(5, 2, 3, 4).Data
			var d *nn.DenseLayer
			var out *nn.Tensor
			s.Scope(func() {
				d = nn.Dense(5, act)
				out = d.Call(nil, x, true)
			})
			if got := fmt.Sprint(out.Shape(), d.OutputShape([]int{2, 3, 4})); got != "[2 3 5] [2 3 5]" {
				t.Fatalf("output shape and OutputShape %s, want [2 3 5] [2 3 5]", got)
			}
			p := newGradProgram(t, out, x, xv, d.Kernel(), d.Bias())
			p.eval(t)
			got := p.prog.Value(out)
			k, b := d.Kernel().Value(), d.Bias().Value()
			for row := range 6 {
				z := make([]float64, 5)
				for j := range z {
					z[j] = b[j]
					for i := range 4 {
						z[j] += xv[row*4+i] * k[i*5+j]
					}
				}
				switch act {
				case nn.Tanh:
					z = apply(z, math.Tanh)
				case nn.Softmax:
					z = softmaxRow(z)
				}
				for j := range z {
					if math.Abs(got[row*5+j]-z[j]) > 1e-12 {
						t.Errorf("out[%d,%d] = %v, want %v", row, j, got[row*5+j], z[j])
					}
				}
			}
			p.check(t, d.Kernel(), d.Bias())
		})
	}
}

// TestPositionEmbedding: token plus position embeddings as a GPT's input,
// the rows read and the rows trained, and the lengths refused.
func TestPositionEmbedding(t *testing.T) {
	s := newStrategy(t)
	var tok *nn.EmbeddingLayer
	var pos *nn.PositionEmbeddingLayer
	var opt nn.Optimizer
	s.Scope(func() {
		tok = nn.Embedding(10, 3)
		pos = nn.PositionEmbedding(8, 3)
		opt = nn.NewSGD(1)
	})
	// [batch, T, 3] + [T, 3]: the position rows broadcast over the batch.
	step := func(ctx *strategy.ReplicaContext, ids *nn.Tensor) *nn.Tensor {
		h := tok.Call(ctx, ids, true)
		out := graph.Add(h, pos.Call(ctx, h, true))
		vars := nn.VariablesOf(tok, pos)
		opt.ApplyGradients(ctx, ctx.Gradients(graph.Sum(out), vars))
		return out
	}
	for _, steps := range []int{4, 8, 2, 1, 5} {
		t.Run(fmt.Sprint(steps), func(t *testing.T) {
			ids := data.RandomInts(uint64(steps), 10, 2, steps)
			var tab0, pos0 []float64
			if tok.Built() {
				tab0, pos0 = tok.Table().Value(), pos.Table().Value()
			}
			res, err := s.TryRun(step, ids)
			if err != nil {
				t.Fatal(err)
			}
			if tab0 == nil {
				// Only now built; the update of lr 1 and gradient 2 (the
				// batch) took rows 0..T-1 of the position table down by 2.
				pos0 = pos.Table().Value()
				for i := range steps * 3 {
					pos0[i] += 2
				}
				tab0 = tok.Table().Value()
				for _, id := range ids.Data {
					for j := range 3 {
						tab0[int(id)*3+j]++
					}
				}
			}
			out := res.Values()[0]
			if fmt.Sprint(out.Shape) != fmt.Sprint([]int{2, steps, 3}) {
				t.Fatalf("output shape %v, want [2 %d 3]", out.Shape, steps)
			}
			for i, id := range ids.Data {
				step := i % steps
				for j := range 3 {
					if want := tab0[int(id)*3+j] + pos0[step*3+j]; math.Abs(out.Data[i*3+j]-want) > 1e-12 {
						t.Errorf("out[%d,%d] = %v, want table[%v] + position[%d] = %v", i, j, out.Data[i*3+j], id, step, want)
					}
				}
			}
			after := pos.Table().Value()
			for i := range after {
				want := pos0[i]
				if i < steps*3 {
					want -= 2
				}
				if math.Abs(after[i]-want) > 1e-12 {
					t.Errorf("position table[%d,%d] = %v after the step, want %v (rows 0..%d train)", i/3, i%3, after[i], want, steps-1)
				}
			}
		})
	}
	for _, c := range []struct {
		name   string
		maxLen int
		shape  []int
		kind   error
		want   string
	}{
		{"longer", 64, []int{2, 80}, nn.ErrShape, "nn: position_embedding_1: sequence of 80 longer than the table's 64 positions"},
		{"width", 8, []int{2, 4, 5}, nn.ErrShape, "nn: position_embedding_2: want input shape [batch, steps] or [batch, steps, 3], got [2 4 5]"},
		{"rank", 8, []int{4}, nn.ErrShape, "nn: position_embedding_3: want input shape [batch, steps] or [batch, steps, 3], got [4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New(graph.Float64)
			err, _ := panics(func() {
				s.Scope(func() { nn.PositionEmbedding(c.maxLen, 3).Call(nil, g.Placeholder("x", c.shape...), true) })
			}).(error)
			if !errors.Is(err, c.kind) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("panic %v, want %q… wrapping %v", err, c.want, c.kind)
			}
		})
	}
}

// TestEmbeddingAttendTied: one table as the input lookup and the tied output
// layer; its gradient is the sum of both uses'.
func TestEmbeddingAttendTied(t *testing.T) {
	s := newStrategy(t)
	g := graph.New(graph.Float64)
	ids := g.Placeholder("ids", 2, 3)
	var e *nn.EmbeddingLayer
	s.Scope(func() { e = nn.Embedding(5, 4) })
	bad := g.Placeholder("h", 2, 3, 3)
	err, _ := panics(func() { s.Scope(func() { e.Attend(nil, bad) }) }).(error)
	if !errors.Is(err, nn.ErrShape) || err.Error() != "nn: embedding: Attend: want input shape [batch, ..., 4], got [2 3 3]" {
		t.Errorf("Attend of [2 3 3]: panic %v", err)
	}
	var logits *nn.Tensor
	s.Scope(func() { logits = e.Attend(nil, graph.Activate(e.Call(nil, ids, true), graph.Tanh)) })
	if got := fmt.Sprint(logits.Shape()); got != "[2 3 5]" {
		t.Fatalf("logits shape %s, want [2 3 5]", got)
	}
	p := newGradProgram(t, logits, nil, nil, e.Table())
	p.prog.Feed(ids, []float64{0, 4, 2, 2, 1, 0})
	p.check(t, e.Table())
}

// TestSparseCrossentropySequence: labels [batch, steps] and logits [batch,
// steps, classes] give each example the mean of its steps' losses, with
// gradients by finite differences; a label shape that does not fit is
// refused naming both.
func TestSparseCrossentropySequence(t *testing.T) {
	const b, steps, classes = 2, 3, 4
	g := graph.New(graph.Float64)
	y := g.Placeholder("y", b, steps)
	x := g.Placeholder("logits", b, steps, classes)
	loss := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}.Call(y, x)
	if got := fmt.Sprint(loss.Shape()); got != "[2]" {
		t.Fatalf("per-example loss shape %s, want [2]", got)
	}
	labels := []float64{0, 3, 1, 2, 2, 0}
	xv := randomValues(9, b*steps*classes)
	p := newGradProgram(t, loss, x, xv)
	p.prog.Feed(y, labels)
	p.eval(t)
	got := p.prog.Value(loss)
	for e := range b {
		var want float64
		for s := range steps {
			row := xv[(e*steps+s)*classes : (e*steps+s+1)*classes]
			var z float64
			for _, v := range row {
				z += math.Exp(v)
			}
			want += (math.Log(z) - row[int(labels[e*steps+s])]) / steps
		}
		if math.Abs(got[e]-want) > 1e-12 {
			t.Errorf("loss[%d] = %v, want %v", e, got[e], want)
		}
	}
	p.check(t)
	err, _ := panics(func() {
		nn.SparseCategoricalCrossentropy{FromLogits: true}.Call(g.Placeholder("y2", b, 5), x)
	}).(error)
	if !errors.Is(err, nn.ErrShape) || err.Error() != "nn: sparse_categorical_crossentropy: want labels [2 3] for predictions [2 3 4], got [2 5]" {
		t.Errorf("mismatched labels: panic %v", err)
	}
}
