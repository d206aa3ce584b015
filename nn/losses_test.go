package nn_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
)

// lossCase is a loss built on placeholders, with a naive per-example
// reference.
type lossCase struct {
	name     string
	label    []int // shape of the labels
	pred     []int // shape of the predictions
	genLabel func(r *rand.Rand, i int) float64
	genPred  func(r *rand.Rand, i int) float64
	loss     nn.Loss
	ref      func(y, p []float64) []float64 // per-example losses
}

func logits(r *rand.Rand, _ int) float64 { return 2 * r.NormFloat64() }
func prob(r *rand.Rand, _ int) float64   { return 0.05 + 0.9*r.Float64() }
func bit(r *rand.Rand, _ int) float64    { return float64(r.IntN(2)) }

func softmaxRow(z []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, v)
	}
	var s float64
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// perRow applies f to each row of width w of y and p.
func perRow(w int, f func(y, p []float64) float64) func(y, p []float64) []float64 {
	return func(y, p []float64) []float64 {
		n := len(p) / w
		out := make([]float64, n)
		for i := range n {
			yr := y
			if len(y) == len(p) {
				yr = y[i*w : (i+1)*w]
			} else {
				yr = y[i : i+1]
			}
			out[i] = f(yr, p[i*w:(i+1)*w])
		}
		return out
	}
}

const eps = 1e-7

func lossCases() []lossCase {
	const batch, classes = 5, 4
	onehotish := func(r *rand.Rand, i int) float64 { return r.Float64() } // soft labels
	bce := func(y, p float64) float64 { return -(y*math.Log(p+eps) + (1-y)*math.Log(1-p+eps)) }
	bceLogit := func(y, x float64) float64 { return math.Max(x, 0) - x*y + math.Log1p(math.Exp(-math.Abs(x))) }
	mean := func(f func(y, p float64) float64) func(y, p []float64) float64 {
		return func(y, p []float64) float64 {
			var s float64
			for i := range p {
				s += f(y[i], p[i])
			}
			return s / float64(len(p))
		}
	}
	return []lossCase{
		{"sparse-logits", []int{batch}, []int{batch, classes}, func(r *rand.Rand, _ int) float64 { return float64(r.IntN(classes)) }, logits,
			nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionSum},
			perRow(classes, func(y, p []float64) float64 { return -math.Log(softmaxRow(p)[int(y[0])]) })},
		{"sparse-probs", []int{batch}, []int{batch, classes}, func(r *rand.Rand, _ int) float64 { return float64(r.IntN(classes)) }, prob,
			nn.SparseCategoricalCrossentropy{Reduction: nn.ReductionSum},
			perRow(classes, func(y, p []float64) float64 {
				var s float64
				for _, v := range p {
					s += v + eps
				}
				return -math.Log((p[int(y[0])] + eps) / s)
			})},
		{"categorical-logits", []int{batch, classes}, []int{batch, classes}, onehotish, logits,
			nn.CategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionSum},
			perRow(classes, func(y, p []float64) float64 {
				sm := softmaxRow(p)
				var l float64
				for j := range y {
					l -= y[j] * math.Log(sm[j])
				}
				return l
			})},
		{"categorical-probs", []int{batch, classes}, []int{batch, classes}, onehotish, prob,
			nn.CategoricalCrossentropy{Reduction: nn.ReductionSum},
			perRow(classes, func(y, p []float64) float64 {
				var s, l float64
				for _, v := range p {
					s += v + eps
				}
				for j := range y {
					l -= y[j] * math.Log((p[j]+eps)/s)
				}
				return l
			})},
		{"binary-logits-vector", []int{batch}, []int{batch}, bit, logits,
			nn.BinaryCrossentropy{FromLogits: true, Reduction: nn.ReductionSum}, perRow(1, mean(bceLogit))},
		{"binary-logits-matrix", []int{batch, 3}, []int{batch, 3}, unitLabel, logits,
			nn.BinaryCrossentropy{FromLogits: true, Reduction: nn.ReductionSum}, perRow(3, mean(bceLogit))},
		{"binary-probs", []int{batch, 3}, []int{batch, 3}, bit, prob,
			nn.BinaryCrossentropy{Reduction: nn.ReductionSum}, perRow(3, mean(bce))},
		{"mse-vector", []int{batch}, []int{batch}, logits, logits,
			nn.MeanSquaredError{Reduction: nn.ReductionSum}, perRow(1, mean(func(y, p float64) float64 { return (y - p) * (y - p) }))},
		{"mse-matrix", []int{batch, 2}, []int{batch, 2}, logits, logits,
			nn.MeanSquaredError{Reduction: nn.ReductionSum}, perRow(2, mean(func(y, p float64) float64 { return (y - p) * (y - p) }))},
	}
}

func unitLabel(r *rand.Rand, _ int) float64 { return r.Float64() }

func fill(r *rand.Rand, shape []int, gen func(*rand.Rand, int) float64) []float64 {
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = gen(r, i)
	}
	return out
}

// TestLossValuesAndGradients checks each loss's value against a naive
// reference, with and without sample weights, and its gradient with respect
// to the predictions against central finite differences, as graph's op
// table does.
func TestLossValuesAndGradients(t *testing.T) {
	const h = 1e-6
	for _, c := range lossCases() {
		for _, weighted := range []bool{false, true} {
			name := c.name
			if weighted {
				name += "-weighted"
			}
			t.Run(name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(3, uint64(len(name))))
				g := graph.New(graph.Float64)
				y := g.Placeholder("y", c.label...)
				p := g.Placeholder("p", c.pred...)
				yv, pv := fill(r, c.label, c.genLabel), fill(r, c.pred, c.genPred)
				var wv []float64
				var loss *nn.Tensor
				if weighted {
					w := g.Placeholder("w", c.pred[0])
					wv = fill(r, []int{c.pred[0]}, func(r *rand.Rand, _ int) float64 { return r.Float64() * 2 })
					loss = c.loss.Call(y, p, w)
					prog, grads := compileLoss(t, g, loss, p)
					prog.Feed(w, wv)
					checkLoss(t, c, prog, loss, grads, y, p, yv, pv, wv, h)
					return
				}
				loss = c.loss.Call(y, p)
				prog, grads := compileLoss(t, g, loss, p)
				checkLoss(t, c, prog, loss, grads, y, p, yv, pv, nil, h)
			})
		}
	}
}

func compileLoss(t *testing.T, g *graph.Graph, loss, p *nn.Tensor) (*graph.Program, *nn.Tensor) {
	t.Helper()
	grads := g.Gradients(loss, []*graph.Node{p})
	prog, err := g.Compile(loss, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	return prog, grads[0]
}

func checkLoss(t *testing.T, c lossCase, prog *graph.Program, loss, grad, y, p *nn.Tensor, yv, pv, wv []float64, h float64) {
	t.Helper()
	eval := func() float64 {
		prog.Feed(y, yv)
		prog.Feed(p, pv)
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		return prog.Scalar(loss)
	}
	got := eval()
	analytic := prog.Value(grad)
	var want float64
	for i, l := range c.ref(yv, pv) {
		if wv != nil {
			l *= wv[i]
		}
		want += l
	}
	if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
		t.Errorf("loss %.12g, reference %.12g", got, want)
	}
	checkFiniteDiff(t, "p", eval, pv, analytic, h)
}

// checkFiniteDiff compares analytic, the gradient of eval() with respect to
// vals (values eval reads: a fed input, a variable's storage), with central
// finite differences of step h, to a relative error of 1e-6, as graph's op
// table does.
func checkFiniteDiff(t *testing.T, what string, eval func() float64, vals, analytic []float64, h float64) {
	t.Helper()
	if len(analytic) != len(vals) {
		t.Fatalf("%s: %d gradient values for %d values", what, len(analytic), len(vals))
	}
	for j := range vals {
		orig := vals[j]
		vals[j] = orig + h
		fp := eval()
		vals[j] = orig - h
		fm := eval()
		vals[j] = orig
		fd := (fp - fm) / (2 * h)
		if e := math.Abs(analytic[j]-fd) / math.Max(math.Max(math.Abs(fd), math.Abs(analytic[j])), 1e-2); e > 1e-6 {
			t.Errorf("d loss/d %s[%d] = %.10g, finite difference %.10g (rel err %.2g)", what, j, analytic[j], fd, e)
		}
	}
}

func TestBinaryCrossentropyFromLogitsIsStable(t *testing.T) {
	g := graph.New(graph.Float64)
	y := g.Placeholder("y", 4)
	p := g.Placeholder("p", 4)
	loss := nn.BinaryCrossentropy{FromLogits: true, Reduction: nn.ReductionSum}.Call(y, p)
	prog, grad := compileLoss(t, g, loss, p)
	prog.Feed(y, []float64{1, 0, 0, 1})
	prog.Feed(p, []float64{800, -800, 800, -800})
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	// Two confident right answers cost 0, two confident wrong ones 800 each.
	if got := prog.Scalar(loss); math.Abs(got-1600) > 1e-9 {
		t.Errorf("loss %v, want 1600", got)
	}
	for i, v := range prog.Value(grad) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("gradient %d is %v", i, v)
		}
	}
}

func TestLossMisuse(t *testing.T) {
	g := graph.New(graph.Float64)
	m := g.Placeholder("m", 3, 2)
	v := g.Placeholder("v", 3)
	w4 := g.Placeholder("w", 4)
	tests := []struct {
		name string
		fn   func()
		kind error
	}{
		{"categorical-shapes", func() { nn.CategoricalCrossentropy{}.Call(v, m) }, nn.ErrShape},
		{"binary-shapes", func() { nn.BinaryCrossentropy{}.Call(v, m) }, nn.ErrShape},
		{"mse-shapes", func() { nn.MeanSquaredError{}.Call(m, v) }, nn.ErrShape},
		{"nil", func() { nn.MeanSquaredError{}.Call(nil, v) }, nn.ErrUsage},
		{"weight-shape", func() { nn.MeanSquaredError{}.Call(v, v, w4) }, nn.ErrShape},
		{"two-weights", func() { nn.ComputeAverageLoss(v, 3, v, v) }, nn.ErrUsage},
		{"l2-outside-run", func() { nn.L2(0.1, nil) }, nn.ErrUsage},
		{"scale-nil", func() { nn.ScaleRegularizationLoss(nil) }, nn.ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := panics(tt.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, tt.kind) {
				t.Fatalf("panic %v, want an error wrapping %v", v, tt.kind)
			}
			if msg := err.Error(); len(msg) < 4 || msg[:4] != "nn: " {
				t.Errorf("error %q does not start with the package name", msg)
			}
		})
	}
}
