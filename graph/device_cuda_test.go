//go:build cuda

package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/gpu/gputest"
	"github.com/gotrain/gotrain/graph"
)

// TestMain points package gpu at the fake CUDA libraries, so that device
// programs run on the host in CI (issue 13).
func TestMain(m *testing.M) { gputest.Main(m) }

var testDev struct {
	once sync.Once
	dev  *gpu.Device
	err  error
}

// device returns device 0, opened once for the package's tests.
func device(t *testing.T) *gpu.Device {
	t.Helper()
	testDev.once.Do(func() { testDev.dev, testDev.err = gpu.Open(0) })
	if testDev.err != nil {
		t.Fatal(testDev.err)
	}
	return testDev.dev
}

// awkwardCases are ops at sizes that fill no launch block evenly and
// leave ragged rows, windows and broadcasts.
func awkwardCases() []opCase {
	one := func(f func(x *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	two := func(f func(a, b *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) }
	}
	counter := func(_ *rand.Rand, i int) float64 { return float64(5 + 3*i) }
	pos := []func(*rand.Rand, int) float64{nil, positive}
	return []opCase{
		{name: "matmul-33x65x17", shapes: [][]int{{33, 65}, {65, 17}}, build: two(graph.MatMul)},
		{name: "dense-relu-37x129x257", shapes: [][]int{{37, 129}, {129, 257}, {257}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], in[2], graph.ReLU) }},
		{name: "dense-gelu-5x7x3", shapes: [][]int{{5, 7}, {7, 3}, {3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], in[2], graph.GELU) }},
		{name: "dense-sigmoid-nobias-9x4x6", shapes: [][]int{{9, 4}, {4, 6}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], nil, graph.Sigmoid) }},
		{name: "add-vec-b-37x257", shapes: [][]int{{37, 257}, {257}}, build: two(graph.Add)},
		{name: "sub-vec-a-257x37", shapes: [][]int{{37}, {257, 37}}, build: two(graph.Sub)},
		{name: "mul-scalar-a-1031", shapes: [][]int{{}, {1031}}, build: two(graph.Mul)},
		{name: "div-same-17x61", shapes: [][]int{{17, 61}, {17, 61}}, gen: pos, build: two(graph.Div)},
		{name: "scale-exp-log-sqrt-square-1031", shapes: [][]int{{1031}}, gen: []func(*rand.Rand, int) float64{positive},
			build: one(func(x *graph.Node) *graph.Node {
				return graph.Add(graph.Sqrt(graph.Square(graph.Log(graph.Exp(graph.Scale(x, 0.7))))), graph.Neg(x))
			})},
		{name: "tanh-sigmoid-gelu-263", shapes: [][]int{{263}}, build: one(func(x *graph.Node) *graph.Node {
			return graph.Add(graph.Activate(x, graph.Tanh), graph.Mul(graph.Activate(x, graph.Sigmoid), graph.Activate(x, graph.GELU)))
		})},
		{name: "softmax-33x17", shapes: [][]int{{33, 17}}, build: one(graph.Softmax)},
		{name: "log-softmax-3x5x129", shapes: [][]int{{3, 5, 129}}, build: one(graph.LogSoftmax)},
		{name: "sparse-xent-65x11", shapes: [][]int{{65}, {65, 11}}, gen: []func(*rand.Rand, int) float64{classes(11), nil},
			diff: []bool{false, true}, build: two(graph.SparseSoftmaxCrossEntropy)},
		{name: "softmax-xent-19x7", shapes: [][]int{{19, 7}, {19, 7}}, gen: []func(*rand.Rand, int) float64{probs(7), nil},
			build: two(graph.SoftmaxCrossEntropy)},
		{name: "sigmoid-xent-13x29", shapes: [][]int{{13, 29}, {13, 29}}, gen: []func(*rand.Rand, int) float64{unif01, nil},
			build: two(graph.SigmoidCrossEntropy)},
		{name: "mean-1031", shapes: [][]int{{1031}}, build: one(graph.Mean)},
		{name: "sum-axis-0-7x33x5", shapes: [][]int{{7, 33, 5}}, build: one(func(x *graph.Node) *graph.Node { return graph.SumAxis(x, 0) })},
		{name: "mean-axis-1-7x33x5", shapes: [][]int{{7, 33, 5}}, build: one(func(x *graph.Node) *graph.Node { return graph.MeanAxis(x, 1) })},
		{name: "conv2d-3x3-s2-same-3x9x11x3", shapes: [][]int{{3, 9, 11, 3}, {3, 3, 3, 5}, {5}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.Conv2D(in[0], in[1], in[2], 2, 2, graph.Same, graph.ReLU)
			}},
		{name: "conv2d-2x3-s1-valid-2x7x6x2", shapes: [][]int{{2, 7, 6, 2}, {2, 3, 2, 3}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.Conv2D(in[0], in[1], nil, 1, 1, graph.Valid, graph.Linear)
			}},
		{name: "max_pool2d-3x3-s2-same-2x9x11x4", shapes: [][]int{{2, 9, 11, 4}}, gen: []func(*rand.Rand, int) float64{distinct(2 * 9 * 11 * 4)},
			build: one(func(x *graph.Node) *graph.Node { return graph.MaxPool2D(x, 3, 3, 2, 2, graph.Same) })},
		{name: "max_pool2d-overlap-2x1-s1-1x5x3x2", shapes: [][]int{{1, 5, 3, 2}}, gen: []func(*rand.Rand, int) float64{distinct(30)},
			build: one(func(x *graph.Node) *graph.Node { return graph.MaxPool2D(x, 2, 1, 1, 1, graph.Valid) })},
		{name: "avg_pool2d-3x3-s2-same-2x9x11x4", shapes: [][]int{{2, 9, 11, 4}},
			build: one(func(x *graph.Node) *graph.Node { return graph.AvgPool2D(x, 3, 3, 2, 2, graph.Same) })},
		{name: "conv2d-3x3-s2-d2-same-2x9x11x3", shapes: [][]int{{2, 9, 11, 3}, {3, 3, 3, 4}, {4}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.Conv2DDilated(in[0], in[1], in[2], 2, 2, 2, 2, graph.Same, graph.Linear)
			}},
		{name: "gather-17x5-3x7", shapes: [][]int{{17, 5}, {3, 7}}, gen: []func(*rand.Rand, int) float64{nil, classes(17)},
			diff: []bool{true, false}, build: two(graph.Gather)},
		{name: "masked_sum-9x5x3", shapes: [][]int{{9, 5, 3}, {9}}, gen: []func(*rand.Rand, int) float64{nil, withZeroAt(4)},
			build: two(graph.MaskedSum)},
		{name: "maximum-263", shapes: [][]int{{263}}, build: one(func(x *graph.Node) *graph.Node { return graph.Maximum(x, x.Graph().Const(0.1)) })},
		{name: "dropout-0.3-37x29", shapes: [][]int{{37, 29}, {2}}, gen: []func(*rand.Rand, int) float64{nil, counter},
			diff: []bool{true, false}, build: func(in []*graph.Node) *graph.Node { return graph.Dropout(in[0], in[1], 0.3, 7, 3) }},
	}
}

// exactOps are the cases whose CPU result depends neither on BLAS nor on
// the math library's transcendental functions: the device gives its bits.
var exactOps = []string{"add", "sub", "mul", "div", "neg", "square", "sqrt", "sum", "mean",
	"max_pool", "avg_pool", "gather", "masked_sum", "maximum", "dropout", "shared-input",
	"minimum", "greater", "less", "equal", "where", "max-axis", "min-axis", "apply-relu",
	"transpose", "slice", "concat", "split", "stack", "layer_norm", "rms_norm"}

func exact(name string) bool {
	for _, p := range exactOps {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestDeviceOps runs every op case, forward and backward, on the CPU and
// on the device from the same inputs and compares every output.
func TestDeviceOps(t *testing.T) {
	checkDeviceOps(t, device(t), append(append(append(opCases(), layerOpCases()...), awkwardCases()...), elemAwkwardCases()...))
}

// checkDeviceOps runs each case as TestDeviceOps does.
func checkDeviceOps(t *testing.T, dev *gpu.Device, cases []opCase) {
	t.Helper()
	for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
		tol := 1e-12
		if dt == graph.Float32 {
			tol = 1e-5
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(3, uint64(len(c.name))))
				g, in, vals, out, y, wvals, wn := setup(t, c, dt, r)
				var xs []*graph.Node
				for i, n := range in {
					if c.diff == nil || c.diff[i] {
						xs = append(xs, n)
					}
				}
				outs := append([]*graph.Node{out, y}, g.Gradients(y, xs)...)
				cpu, gp := compileBoth(t, dev, g, outs)
				for _, p := range []*graph.Program{cpu, gp} {
					p.Feed(wn, wvals)
					for i, n := range in {
						p.Feed(n, vals[i])
					}
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
				}
				tl := tol
				if exact(c.name) {
					tl = 0
				}
				for k, o := range outs {
					compare(t, fmt.Sprintf("output %d (%v)", k, o), gp.Value(o), cpu.Value(o), tl)
				}
			})
		}
	}
}

// TestDeviceOpsUnevenSizes runs the shape, product, normalization and
// attention ops at sizes that fill no launch block evenly, forward and
// backward, on the CPU and the device.
func TestDeviceOpsUnevenSizes(t *testing.T) {
	bmm := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return graph.BatchMatMul(in[0], in[1], ta, tb) }
	}
	checkDeviceOps(t, device(t), []opCase{
		{name: "transpose-heads-3x17x5x33", shapes: [][]int{{3, 17, 5, 33}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0], 0, 2, 1, 3) }},
		{name: "transpose-7x5x3x9-2031", shapes: [][]int{{7, 5, 3, 9}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0], 2, 0, 3, 1) }},
		{name: "transpose-matrix-65x37", shapes: [][]int{{65, 37}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0]) }},
		{name: "slice-37x65-3to50", shapes: [][]int{{37, 65}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], 1, 3, 50) }},
		{name: "concat-axis1-5x(7,1,9)x3", shapes: [][]int{{5, 7, 3}, {5, 1, 3}, {5, 9, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(1, in...) }},
		{name: "split-stack-9x33", shapes: [][]int{{9, 33}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 1, 11, 11, 11)
				return graph.Stack(1, p[2], p[0], p[1])
			}},
		{name: "batch_matmul-nt-2x3x17x33", shapes: [][]int{{2, 3, 17, 33}, {2, 3, 19, 33}}, build: bmm(false, true)},
		{name: "batch_matmul-nn-2x3x17x19", shapes: [][]int{{2, 3, 17, 19}, {2, 3, 19, 33}}, build: bmm(false, false)},
		{name: "batch_matmul-broadcast-tt", shapes: [][]int{{1, 3, 5, 9}, {4, 1, 7, 5}}, build: bmm(true, true)},
		{name: "batch_matmul-repeated-b-tn", shapes: [][]int{{3, 5, 9}, {5, 7}}, build: bmm(true, false)},
		{name: "batch_matmul-stacked-6x17x33x65", shapes: [][]int{{6, 17, 33}, {33, 65}}, build: bmm(false, false)},
		{name: "layer_norm-37x129", shapes: [][]int{{37, 129}, {129}, {129}},
			build: func(in []*graph.Node) *graph.Node { return graph.LayerNorm(in[0], in[1], in[2], 1e-5) }},
		{name: "rms_norm-3x5x257", shapes: [][]int{{3, 5, 257}, {257}},
			build: func(in []*graph.Node) *graph.Node { return graph.RMSNorm(in[0], in[1], 1e-6) }},
		{name: "causal_mask-softmax-3x17x33", shapes: [][]int{{3, 17, 33}},
			build: func(in []*graph.Node) *graph.Node { return graph.Softmax(graph.CausalMask(in[0])) }},
		{name: "attention-causal-2x3x17x9", shapes: [][]int{{2, 3, 17, 9}, {2, 3, 17, 9}, {2, 3, 17, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Attention(in[0], in[1], in[2], true) }},
		{name: "attention-causal-fewer-queries-2x3x5x9", shapes: [][]int{{2, 3, 5, 9}, {2, 3, 17, 9}, {2, 3, 17, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Attention(in[0], in[1], in[2], true) }},
		{name: "self_attention-causal-2x17x(3x3x5)", shapes: [][]int{{2, 17, 45}},
			build: func(in []*graph.Node) *graph.Node { return graph.SelfAttention(in[0], 3, true) }},
		{name: "self_attention-3x9x(3x2x7)", shapes: [][]int{{3, 9, 42}},
			build: func(in []*graph.Node) *graph.Node { return graph.SelfAttention(in[0], 2, false) }},
	})
}

// compileBoth compiles outs on the CPU and on dev; the device program is
// closed when the test ends.
func compileBoth(t *testing.T, dev *gpu.Device, g *graph.Graph, outs []*graph.Node) (cpu, onDev *graph.Program) {
	t.Helper()
	cpu, err := g.Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	onDev, err = g.CompileOn(dev, outs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { onDev.Close() })
	return cpu, onDev
}

// compare reports the elements of got that are not within tol (absolute
// below 1, relative above; NaN equal to NaN) of want.
func compare(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !near(got[i], want[i], tol) {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %.17g on the device, %.17g on the CPU", what, i, got[i], want[i])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// model is a training step built on a graph: its inputs, its variables
// and the nodes to compare.
type model struct {
	g      *graph.Graph
	inputs []*graph.Node
	feeds  [][]float64
	vars   []*graph.Variable
	loss   *graph.Node
	grads  []*graph.Node
}

func newVar(r *rand.Rand, name string, dt graph.DType, shape ...int) *graph.Variable {
	n := 1
	for _, d := range shape {
		n *= d
	}
	init := make([]float64, n)
	for i := range init {
		init[i] = r.NormFloat64() / math.Sqrt(float64(shape[0]))
	}
	return graph.NewVariable(name, shape, dt, init)
}

func randoms(r *rand.Rand, n int, f func(r *rand.Rand) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(r)
	}
	return out
}

// smallMLP is the MLP 784-512-512-10 of the benchmarks at smaller widths, with
// a ragged batch: Dense ReLU, Dense ReLU, Dense, sparse cross-entropy, mean.
func smallMLP(dt graph.DType, r *rand.Rand) *model {
	const batch, in, h1, h2, classes = 37, 49, 33, 31, 10
	g := graph.New(dt)
	m := &model{g: g}
	x := g.Placeholder("x", batch, in)
	y := g.Placeholder("y", batch)
	m.inputs = []*graph.Node{x, y}
	m.feeds = [][]float64{randoms(r, batch*in, (*rand.Rand).NormFloat64),
		randoms(r, batch, func(r *rand.Rand) float64 { return float64(r.IntN(classes)) })}
	dims := []int{in, h1, h2, classes}
	h := x
	for i := 0; i+1 < len(dims); i++ {
		w := newVar(r, fmt.Sprintf("w%d", i), dt, dims[i], dims[i+1])
		b := newVar(r, fmt.Sprintf("b%d", i), dt, dims[i+1])
		m.vars = append(m.vars, w, b)
		act := graph.ReLU
		if i+2 == len(dims) {
			act = graph.Linear
		}
		h = graph.Dense(h, g.Var(w), g.Var(b), act)
	}
	m.loss = graph.Mean(graph.SparseSoftmaxCrossEntropy(y, h))
	m.finish()
	return m
}

// smallCNN is a small convolutional net: conv 3x3x4 ReLU (same), max-pool 2,
// flatten, dropout 0.25, dense 16 ReLU, dense 10.
func smallCNN(dt graph.DType, r *rand.Rand) *model {
	const batch, hw, cin, classes = 6, 9, 2, 10
	g := graph.New(dt)
	m := &model{g: g}
	x := g.Placeholder("x", batch, hw, hw, cin)
	y := g.Placeholder("y", batch)
	m.inputs = []*graph.Node{x, y}
	m.feeds = [][]float64{randoms(r, batch*hw*hw*cin, (*rand.Rand).NormFloat64),
		randoms(r, batch, func(r *rand.Rand) float64 { return float64(r.IntN(classes)) })}
	k := newVar(r, "kernel", dt, 3, 3, cin, 4)
	kb := newVar(r, "kernel_bias", dt, 4)
	ctr := graph.NewVariable("counter", []int{2}, dt, []float64{3, 0})
	h := graph.Conv2D(x, g.Var(k), g.Var(kb), 1, 1, graph.Same, graph.ReLU)
	h = graph.MaxPool2D(h, 2, 2, 2, 2, graph.Valid)
	flat := 4 * 4 * 4
	h = graph.Reshape(h, batch, flat)
	h = graph.Dropout(h, g.Var(ctr), 0.25, 11, 0)
	w1, b1 := newVar(r, "w1", dt, flat, 16), newVar(r, "b1", dt, 16)
	w2, b2 := newVar(r, "w2", dt, 16, classes), newVar(r, "b2", dt, classes)
	m.vars = []*graph.Variable{k, kb, w1, b1, w2, b2}
	h = graph.Dense(h, g.Var(w1), g.Var(b1), graph.ReLU)
	h = graph.Dense(h, g.Var(w2), g.Var(b2), graph.Linear)
	m.loss = graph.Mean(graph.SparseSoftmaxCrossEntropy(y, h))
	m.finish()
	graph.AdvanceCounter(ctr) // a host write the device mirror must follow
	return m
}

func (m *model) finish() {
	xs := make([]*graph.Node, len(m.vars))
	for i, v := range m.vars {
		xs[i] = m.g.Var(v)
	}
	m.grads = m.g.Gradients(m.loss, xs)
}

// TestDeviceModels trains the MLP and the CNN for a few SGD steps on the
// CPU and on the device, from the same weights, updating on the host (so
// every step refreshes the device mirrors), and compares the losses and
// gradients of every step.
func TestDeviceModels(t *testing.T) {
	dev := device(t)
	for _, build := range []struct {
		name string
		f    func(graph.DType, *rand.Rand) *model
	}{{"mlp", smallMLP}, {"cnn", smallCNN}} {
		for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
			t.Run(build.name+"/"+dt.String(), func(t *testing.T) {
				tol := 1e-12
				if dt == graph.Float32 {
					tol = 1e-5
				}
				m := build.f(dt, rand.New(rand.NewPCG(4, 5)))
				outs := append([]*graph.Node{m.loss}, m.grads...)
				cpu, gp := compileBoth(t, dev, m.g, outs)
				for _, gn := range m.grads {
					if gp.Deferrable(gn) {
						t.Errorf("%v is deferrable on the device", gn)
					}
				}
				for i, n := range m.inputs {
					cpu.Feed(n, m.feeds[i])
					gp.Feed(n, m.feeds[i])
				}
				for step := 0; step < 3; step++ {
					if err := cpu.Run(); err != nil {
						t.Fatal(err)
					}
					if err := gp.Run(); err != nil {
						t.Fatal(err)
					}
					compare(t, fmt.Sprintf("step %d loss", step), []float64{gp.Scalar(m.loss)}, []float64{cpu.Scalar(m.loss)}, tol)
					for k, gn := range m.grads {
						compare(t, fmt.Sprintf("step %d d%s", step, m.vars[k].Name()), gp.Value(gn), cpu.Value(gn), tol)
					}
					// SGD on the host from the CPU's gradients.
					for k, v := range m.vars {
						w, dw := v.Value(), cpu.Value(m.grads[k])
						for j := range w {
							w[j] -= 0.1 * dw[j]
						}
						v.Assign(w)
					}
				}
			})
		}
	}
}

// TestDeviceLabelError checks that a label out of range on the device
// returns the CPU's error: the same text, a *LabelError with the first bad
// row, and for Gather an *IndexError.
func TestDeviceLabelError(t *testing.T) {
	dev := device(t)
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		lab := g.Placeholder("labels", 6)
		x := g.Placeholder("logits", 6, 5)
		ids := g.Placeholder("ids", 4)
		table := g.Placeholder("table", 3, 2)
		loss := graph.Sum(graph.SparseSoftmaxCrossEntropy(lab, x))
		grads := g.Gradients(loss, []*graph.Node{x})
		gathered := graph.Sum(graph.Gather(table, ids))
		for _, tc := range []struct {
			name   string
			labels []float64
			ids    []float64
			label  *graph.LabelError
			index  *graph.IndexError
		}{
			{"label", []float64{0, 1, 4, 7, 2, -1}, []float64{0, 1, 2, 0}, &graph.LabelError{Row: 3, Label: 7, Class: 5}, nil},
			{"fraction", []float64{0, 1.5, 4, 9, 2, 1}, []float64{0, 1, 2, 0}, &graph.LabelError{Row: 1, Label: 1.5, Class: 5}, nil},
			{"id", []float64{0, 1, 2, 3, 4, 0}, []float64{0, 2, 3, -2}, nil, &graph.IndexError{Pos: 2, Value: 3, Rows: 3}},
			{"none", []float64{0, 1, 2, 3, 4, 0}, []float64{0, 2, 1, 1}, nil, nil},
		} {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				outs := []*graph.Node{loss, grads[0], gathered}
				cpu, gp := compileBoth(t, dev, g, outs)
				var errs [2]error
				for i, p := range []*graph.Program{cpu, gp} {
					p.Feed(lab, tc.labels)
					p.Feed(ids, tc.ids)
					errs[i] = p.Run()
				}
				if fmt.Sprint(errs[1]) != fmt.Sprint(errs[0]) {
					t.Errorf("device: %v\nCPU:    %v", errs[1], errs[0])
				}
				var le *graph.LabelError
				var ie *graph.IndexError
				switch {
				case tc.label != nil && (!errors.As(errs[1], &le) || *le != *tc.label):
					t.Errorf("got %v, want a LabelError %+v", errs[1], *tc.label)
				case tc.index != nil && (!errors.As(errs[1], &ie) || *ie != *tc.index):
					t.Errorf("got %v, want an IndexError %+v", errs[1], *tc.index)
				case tc.label == nil && tc.index == nil && errs[1] != nil:
					t.Errorf("got %v, want no error", errs[1])
				}
			})
		}
	}
}

// TestDeviceOutOfMemory injects an allocation failure into the arena and
// into a variable's mirror: CompileOn returns an error naming what it
// allocated, which errors.Is reports as out of memory.
func TestDeviceOutOfMemory(t *testing.T) {
	dev := device(t)
	for _, tc := range []struct {
		nth  int
		want string
	}{{1, "arena of "}, {2, `mirror "w0"`}} {
		t.Run(tc.want, func(t *testing.T) {
			m := smallMLP(graph.Float32, rand.New(rand.NewPCG(1, 1)))
			restore := gputest.FailAlloc(tc.nth)
			p, err := m.g.CompileOn(dev, m.loss)
			restore()
			if err == nil {
				p.Close()
				t.Fatal("CompileOn succeeded, want an out-of-memory error")
			}
			if !errors.Is(err, gpu.ErrOutOfMemory) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "gpu:0") {
				t.Errorf("got %v, want an out-of-memory error naming %q on gpu:0", err, tc.want)
			}
		})
	}
}

// twiceOn returns a variable holding 1..5, a graph computing twice it, its
// program on dev, and a function that runs the program and compares the
// result with want.
func twiceOn(t *testing.T, dev *gpu.Device, dt graph.DType) (*graph.Variable, *graph.Graph, *graph.Node, *graph.Program, func(want ...float64)) {
	t.Helper()
	v := graph.NewVariable("v", []int{5}, dt, []float64{1, 2, 3, 4, 5})
	g := graph.New(dt)
	twice := graph.Scale(g.Var(v), 2)
	p, err := g.CompileOn(dev, twice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	run := func(want ...float64) {
		t.Helper()
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		compare(t, "2v", p.Value(twice), want, 0)
	}
	return v, g, twice, p, run
}

// TestVariableMirror checks the round trips of a variable's device copy:
// made on first use, written on the device and synced back, refreshed
// after a host write, and read by a device program after each.
func TestVariableMirror(t *testing.T) {
	dev := device(t)
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			v, g, twice, p, run := twiceOn(t, dev, dt)
			run(2, 4, 6, 8, 10)
			ptr, err := v.Mirror(dev)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := v.Mirror(dev); again != ptr || p.Buffer(g.Var(v)) != ptr {
				t.Errorf("mirror moved: %#x, then %#x, program reads %#x", ptr, again, p.Buffer(g.Var(v)))
			}
			// A device-side write, then an explicit sync to the host.
			s, err := dev.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Destroy()
			if dt == graph.Float32 {
				err = gpu.CopyHtoD(s, ptr, []float32{10, 20, 30, 40, 50})
			} else {
				err = gpu.CopyHtoD(s, ptr, []float64{10, 20, 30, 40, 50})
			}
			if err == nil {
				err = s.Synchronize()
			}
			if err != nil {
				t.Fatal(err)
			}
			run(20, 40, 60, 80, 100)
			compare(t, "host before sync", v.Value(), []float64{1, 2, 3, 4, 5}, 0)
			if err := v.SyncFrom(dev); err != nil {
				t.Fatal(err)
			}
			compare(t, "host after sync", v.Value(), []float64{10, 20, 30, 40, 50}, 0)
			// Host writes invalidate the mirror.
			v.Assign([]float64{-1, -2, -3, -4, -5})
			run(-2, -4, -6, -8, -10)
			if dt == graph.Float32 {
				v.F32()[0] = 7
			} else {
				v.F64()[0] = 7
			}
			v.Invalidate()
			run(14, -4, -6, -8, -10)
			if p.F32(twice) != nil || p.F64(twice) != nil {
				t.Error("F32 or F64 of a device program is not nil")
			}
			if p.Device() != dev || p.Stream() == nil {
				t.Errorf("Device() = %v, Stream() = %v", p.Device(), p.Stream())
			}
			other := graph.NewVariable("other", []int{1}, dt, nil)
			if err := other.SyncFrom(dev); err == nil || !errors.Is(err, graph.ErrGraph) {
				t.Errorf("SyncFrom without a mirror: got %v, want an ErrGraph error", err)
			}
		})
	}
}

// TestVariableDeviceNewer checks the lazy host copy: after SetDeviceNewer
// device programs read the device copy and nothing is copied to the host
// until a host read (Value, a CPU program, F32 or F64), which copies once,
// also from concurrent readers; Assign copies nothing; Invalidate changes
// nothing while the device copy is newer.
func TestVariableDeviceNewer(t *testing.T) {
	dev := device(t)
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			v, _, _, _, run := twiceOn(t, dev, dt)
			hg := graph.New(dt)
			thrice := graph.Scale(hg.Var(v), 3)
			hp, err := hg.Compile(thrice)
			if err != nil {
				t.Fatal(err)
			}
			copies := func(what string, want int64, f func()) {
				t.Helper()
				before := graph.HostSyncs()
				f()
				if d := graph.HostSyncs() - before; d != want {
					t.Errorf("%s: %d copies to the host, want %d", what, d, want)
				}
			}
			s, err := dev.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Destroy()
			write := func(vals ...float64) {
				t.Helper()
				ptr, err := v.Mirror(dev)
				if err != nil {
					t.Fatal(err)
				}
				if dt == graph.Float32 {
					f := make([]float32, len(vals))
					for i, x := range vals {
						f[i] = float32(x)
					}
					err = gpu.CopyHtoD(s, ptr, f)
				} else {
					err = gpu.CopyHtoD(s, ptr, vals)
				}
				if err == nil {
					err = s.Synchronize()
				}
				if err == nil {
					err = v.SetDeviceNewer(dev)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			run(2, 4, 6, 8, 10)
			copies("device write and device runs", 0, func() {
				write(10, 20, 30, 40, 50)
				run(20, 40, 60, 80, 100)
				v.Invalidate() // no effect: the device copy is newer
				run(20, 40, 60, 80, 100)
			})
			if v.HostCurrent() {
				t.Error("HostCurrent after SetDeviceNewer")
			}
			copies("a CPU program, then Value", 1, func() {
				if err := hp.Run(); err != nil {
					t.Fatal(err)
				}
				compare(t, "3v", hp.Value(thrice), []float64{30, 60, 90, 120, 150}, 0)
				compare(t, "host", v.Value(), []float64{10, 20, 30, 40, 50}, 0)
				run(20, 40, 60, 80, 100) // the mirror stays current
			})
			copies("concurrent Values", 1, func() {
				write(11, 22, 33, 44, 55)
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						compare(t, "host", v.Value(), []float64{11, 22, 33, 44, 55}, 0)
					})
				}
				wg.Wait()
			})
			copies("F32 or F64, a write through it, Assign", 1, func() {
				write(1, 1, 1, 1, 1)
				if dt == graph.Float32 {
					v.F32()[0] = 7
				} else {
					v.F64()[0] = 7
				}
				run(14, 2, 2, 2, 2)
				write(3, 3, 3, 3, 3)
				v.Assign([]float64{-1, -2, -3, -4, -5})
				if !v.HostCurrent() {
					t.Error("not HostCurrent after Assign")
				}
				run(-2, -4, -6, -8, -10)
			})
			if err := v.SetDeviceNewer(); err == nil || !errors.Is(err, graph.ErrGraph) {
				t.Errorf("SetDeviceNewer(): got %v, want an ErrGraph error", err)
			}
			other := graph.NewVariable("other", []int{1}, dt, nil)
			if err := other.SetDeviceNewer(dev); err == nil || !errors.Is(err, graph.ErrGraph) || !other.HostCurrent() {
				t.Errorf("SetDeviceNewer without a mirror: got %v, want an ErrGraph error and the host current", err)
			}
		})
	}
}

// TestDeviceAllReduce runs two device programs joined by an AllReduce,
// forward and backward, against two CPU programs.
func TestDeviceAllReduce(t *testing.T) {
	dev := device(t)
	const n = 2
	run := func(onDevice bool) [n][][]float64 {
		grp := newGroup(n)
		var res [n][][]float64
		var wg sync.WaitGroup
		errs := make([]error, n)
		for id := 0; id < n; id++ {
			g := graph.New(graph.Float64)
			x := g.Placeholder("x", 7)
			red := graph.AllReduce(graph.Activate(x, graph.Tanh), participant{grp, id}, 0.5)
			y := graph.Sum(graph.Mul(red, x))
			outs := append([]*graph.Node{red, y}, g.Gradients(y, []*graph.Node{x})...)
			var p *graph.Program
			var err error
			if onDevice {
				p, err = g.CompileOn(dev, outs...)
			} else {
				p, err = g.Compile(outs...)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.Feed(x, randoms(rand.New(rand.NewPCG(9, uint64(id))), 7, (*rand.Rand).NormFloat64))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[id] = p.Run(); errs[id] == nil {
					for _, o := range outs {
						res[id] = append(res[id], p.Value(o))
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return res
	}
	cpu, gpuRes := run(false), run(true)
	for id := range cpu {
		for k := range cpu[id] {
			compare(t, fmt.Sprintf("participant %d output %d", id, k), gpuRes[id][k], cpu[id][k], 1e-12)
		}
	}
}
