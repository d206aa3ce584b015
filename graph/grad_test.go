package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// opCase is one row of the op table: the op built on placeholders of the
// given shapes, a naive reference for its forward value, and which inputs
// are differentiated.
type opCase struct {
	name   string
	shapes [][]int
	gen    []func(r *rand.Rand, i int) float64 // per input; nil: normal away from 0
	diff   []bool                              // per input; nil: all
	build  func(in []*graph.Node) *graph.Node
	ref    func(in [][]float64) []float64
}

func normal(r *rand.Rand, _ int) float64 {
	// Away from 0 so ReLU's kink and |x| stay off the finite-difference stencil.
	v := r.NormFloat64()
	if math.Abs(v) < 0.1 {
		v = math.Copysign(0.1+math.Abs(v), v)
	}
	return v
}

func positive(r *rand.Rand, _ int) float64 { return 0.5 + r.Float64()*2 }

func classes(c int) func(r *rand.Rand, i int) float64 {
	return func(r *rand.Rand, _ int) float64 { return float64(r.IntN(c)) }
}

func probs(c int) func(r *rand.Rand, i int) float64 {
	return func(r *rand.Rand, _ int) float64 { return r.Float64() / float64(c) }
}

func unif01(r *rand.Rand, _ int) float64 { return r.Float64() }

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func elementwise(f func(x float64) float64) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		out := make([]float64, len(in[0]))
		for i, v := range in[0] {
			out[i] = f(v)
		}
		return out
	}
}

// bin is the reference of a broadcast binary op for a [4,3]-shaped result.
func bin(f func(a, b float64) float64, la, lb int) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		n := max(la, lb)
		out := make([]float64, n)
		for i := range out {
			out[i] = f(in[0][i%la], in[1][i%lb])
		}
		return out
	}
}

func matmulRef(m, k, n int, ta, tb bool) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		out := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				for p := 0; p < k; p++ {
					a := in[0][i*k+p]
					if ta {
						a = in[0][p*m+i]
					}
					b := in[1][p*n+j]
					if tb {
						b = in[1][j*k+p]
					}
					out[i*n+j] += a * b
				}
			}
		}
		return out
	}
}

func actRef(act graph.Activation) func(float64) float64 {
	switch act {
	case graph.ReLU:
		return func(x float64) float64 { return math.Max(x, 0) }
	case graph.Tanh:
		return math.Tanh
	case graph.Sigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case graph.GELU:
		return func(x float64) float64 { return x * 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	case graph.GELUTanh:
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*math.Pow(x, 3))))
		}
	case graph.SiLU:
		return func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	}
	return func(x float64) float64 { return x }
}

func denseRef(m, k, n int, bias bool, act graph.Activation) func(in [][]float64) []float64 {
	f := actRef(act)
	return func(in [][]float64) []float64 {
		z := matmulRef(m, k, n, false, false)(in)
		for i := range z {
			if bias {
				z[i] += in[2][i%n]
			}
			z[i] = f(z[i])
		}
		return z
	}
}

func rowsRef(c int, f func(row []float64, out []float64)) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		out := make([]float64, len(in[0]))
		for r := 0; r < len(out); r += c {
			f(in[0][r:r+c], out[r:r+c])
		}
		return out
	}
}

func lse(row []float64) float64 {
	var s float64
	for _, v := range row {
		s += math.Exp(v)
	}
	return math.Log(s)
}

func sumAxisRef(shape []int, axis int, mean bool) func(in [][]float64) []float64 {
	outer, d, inner := splitRef(shape, axis)
	return func(in [][]float64) []float64 {
		out := make([]float64, outer*inner)
		for o := 0; o < outer; o++ {
			for k := 0; k < d; k++ {
				for i := 0; i < inner; i++ {
					out[o*inner+i] += in[0][(o*d+k)*inner+i]
				}
			}
		}
		if mean {
			for i := range out {
				out[i] /= float64(d)
			}
		}
		return out
	}
}

func opCases() []opCase {
	add := func(a, b float64) float64 { return a + b }
	sub := func(a, b float64) float64 { return a - b }
	mul := func(a, b float64) float64 { return a * b }
	div := func(a, b float64) float64 { return a / b }
	cases := []opCase{
		{name: "matmul", shapes: [][]int{{3, 4}, {4, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.MatMul(in[0], in[1]) },
			ref:   matmulRef(3, 4, 5, false, false)},
		{name: "matmul-tn", shapes: [][]int{{4, 3}, {4, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.MatMulT(in[0], in[1], true, false) },
			ref:   matmulRef(3, 4, 5, true, false)},
		{name: "matmul-nt", shapes: [][]int{{3, 4}, {5, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.MatMulT(in[0], in[1], false, true) },
			ref:   matmulRef(3, 4, 5, false, true)},
		{name: "matmul-tt", shapes: [][]int{{4, 3}, {5, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.MatMulT(in[0], in[1], true, true) },
			ref:   matmulRef(3, 4, 5, true, true)},
		{name: "dense-no-bias", shapes: [][]int{{3, 4}, {4, 2}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], nil, graph.Linear) },
			ref:   denseRef(3, 4, 2, false, graph.Linear)},
		{name: "dense-no-bias-tanh", shapes: [][]int{{3, 4}, {4, 2}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], nil, graph.Tanh) },
			ref:   denseRef(3, 4, 2, false, graph.Tanh)},
		{name: "add-same", shapes: [][]int{{4, 3}, {4, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Add(in[0], in[1]) }, ref: bin(add, 12, 12)},
		{name: "add-scalar-a", shapes: [][]int{{}, {4, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Add(in[0], in[1]) }, ref: bin(add, 1, 12)},
		{name: "add-scalar-b-[1]", shapes: [][]int{{4, 3}, {1}},
			build: func(in []*graph.Node) *graph.Node { return graph.Add(in[0], in[1]) }, ref: bin(add, 12, 1)},
		{name: "add-vec-b", shapes: [][]int{{4, 3}, {3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Add(in[0], in[1]) }, ref: bin(add, 12, 3)},
		{name: "sub-vec-a", shapes: [][]int{{3}, {4, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Sub(in[0], in[1]) }, ref: bin(sub, 3, 12)},
		{name: "sub-scalar-b", shapes: [][]int{{4, 3}, {}},
			build: func(in []*graph.Node) *graph.Node { return graph.Sub(in[0], in[1]) }, ref: bin(sub, 12, 1)},
		{name: "mul-same", shapes: [][]int{{4, 3}, {4, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Mul(in[0], in[1]) }, ref: bin(mul, 12, 12)},
		{name: "mul-vec-b", shapes: [][]int{{4, 3}, {3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Mul(in[0], in[1]) }, ref: bin(mul, 12, 3)},
		{name: "mul-scalar-a", shapes: [][]int{{}, {4, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Mul(in[0], in[1]) }, ref: bin(mul, 1, 12)},
		{name: "div-same", shapes: [][]int{{4, 3}, {4, 3}}, gen: []func(*rand.Rand, int) float64{normal, positive},
			build: func(in []*graph.Node) *graph.Node { return graph.Div(in[0], in[1]) }, ref: bin(div, 12, 12)},
		{name: "div-vec-a", shapes: [][]int{{3}, {4, 3}}, gen: []func(*rand.Rand, int) float64{normal, positive},
			build: func(in []*graph.Node) *graph.Node { return graph.Div(in[0], in[1]) }, ref: bin(div, 3, 12)},
		{name: "div-scalar-b", shapes: [][]int{{4, 3}, {}}, gen: []func(*rand.Rand, int) float64{normal, positive},
			build: func(in []*graph.Node) *graph.Node { return graph.Div(in[0], in[1]) }, ref: bin(div, 12, 1)},
		{name: "add-rank3-vec", shapes: [][]int{{2, 2, 3}, {3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Add(in[0], in[1]) }, ref: bin(add, 12, 3)},
		{name: "scale", shapes: [][]int{{5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Scale(in[0], -2.5) },
			ref:   elementwise(func(x float64) float64 { return -2.5 * x })},
		{name: "neg", shapes: [][]int{{5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Neg(in[0]) },
			ref:   elementwise(func(x float64) float64 { return -x })},
		{name: "exp", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Exp(in[0]) }, ref: elementwise(math.Exp)},
		{name: "log", shapes: [][]int{{2, 3}}, gen: []func(*rand.Rand, int) float64{positive},
			build: func(in []*graph.Node) *graph.Node { return graph.Log(in[0]) }, ref: elementwise(math.Log)},
		{name: "square", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Square(in[0]) },
			ref:   elementwise(func(x float64) float64 { return x * x })},
		{name: "sqrt", shapes: [][]int{{2, 3}}, gen: []func(*rand.Rand, int) float64{positive},
			build: func(in []*graph.Node) *graph.Node { return graph.Sqrt(in[0]) }, ref: elementwise(math.Sqrt)},
		{name: "softmax", shapes: [][]int{{3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.Softmax(in[0]) },
			ref: rowsRef(4, func(row, out []float64) {
				l := lse(row)
				for j, v := range row {
					out[j] = math.Exp(v - l)
				}
			})},
		{name: "log-softmax", shapes: [][]int{{3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.LogSoftmax(in[0]) },
			ref: rowsRef(4, func(row, out []float64) {
				l := lse(row)
				for j, v := range row {
					out[j] = v - l
				}
			})},
		{name: "log-softmax-vector", shapes: [][]int{{5}},
			build: func(in []*graph.Node) *graph.Node { return graph.LogSoftmax(in[0]) },
			ref: rowsRef(5, func(row, out []float64) {
				l := lse(row)
				for j, v := range row {
					out[j] = v - l
				}
			})},
		{name: "sparse-xent", shapes: [][]int{{4}, {4, 3}},
			gen: []func(*rand.Rand, int) float64{classes(3), normal}, diff: []bool{false, true},
			build: func(in []*graph.Node) *graph.Node { return graph.SparseSoftmaxCrossEntropy(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 4)
				for i := range out {
					row := in[1][i*3 : i*3+3]
					out[i] = lse(row) - row[int(in[0][i])]
				}
				return out
			}},
		{name: "softmax-xent", shapes: [][]int{{4, 3}, {4, 3}},
			gen:   []func(*rand.Rand, int) float64{probs(3), normal},
			build: func(in []*graph.Node) *graph.Node { return graph.SoftmaxCrossEntropy(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 4)
				for i := range out {
					row := in[1][i*3 : i*3+3]
					for j, v := range row {
						out[i] -= in[0][i*3+j] * (v - lse(row))
					}
				}
				return out
			}},
		{name: "sigmoid-xent", shapes: [][]int{{2, 3}, {2, 3}},
			gen:   []func(*rand.Rand, int) float64{unif01, normal},
			build: func(in []*graph.Node) *graph.Node { return graph.SigmoidCrossEntropy(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, len(in[0]))
				for i, x := range in[1] {
					p := 1 / (1 + math.Exp(-x))
					z := in[0][i]
					out[i] = -z*math.Log(p) - (1-z)*math.Log(1-p)
				}
				return out
			}},
		{name: "sum", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Sum(in[0]) },
			ref:   sumAxisRef([]int{6}, 0, false)},
		{name: "mean", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Mean(in[0]) },
			ref:   sumAxisRef([]int{6}, 0, true)},
		{name: "sum-axis-0", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.SumAxis(in[0], 0) },
			ref:   sumAxisRef([]int{2, 3, 4}, 0, false)},
		{name: "sum-axis-1", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.SumAxis(in[0], 1) },
			ref:   sumAxisRef([]int{2, 3, 4}, 1, false)},
		{name: "sum-axis-last", shapes: [][]int{{2, 3, 4}},
			build: func(in []*graph.Node) *graph.Node { return graph.SumAxis(in[0], -1) },
			ref:   sumAxisRef([]int{2, 3, 4}, 2, false)},
		{name: "mean-axis-1", shapes: [][]int{{3, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.MeanAxis(in[0], 1) },
			ref:   sumAxisRef([]int{3, 5}, 1, true)},
		{name: "reshape", shapes: [][]int{{2, 6}},
			build: func(in []*graph.Node) *graph.Node { return graph.Exp(graph.Reshape(in[0], 3, -1)) },
			ref:   elementwise(math.Exp)},
		{name: "shared-input", shapes: [][]int{{2, 3}},
			// x feeds three consumers: the gradient sums their contributions.
			build: func(in []*graph.Node) *graph.Node {
				return graph.Add(graph.Mul(in[0], in[0]), graph.Exp(in[0]))
			},
			ref: elementwise(func(x float64) float64 { return x*x + math.Exp(x) })},
		{name: "mlp", shapes: [][]int{{3, 4}, {4, 5}, {5}, {5, 2}, {3}},
			gen:  []func(*rand.Rand, int) float64{normal, normal, normal, normal, classes(2)},
			diff: []bool{true, true, true, true, false},
			build: func(in []*graph.Node) *graph.Node {
				h := graph.Dense(in[0], in[1], in[2], graph.Tanh)
				return graph.SparseSoftmaxCrossEntropy(in[4], graph.Dense(h, in[3], nil, graph.Linear))
			},
			ref: func(in [][]float64) []float64 {
				h := denseRef(3, 4, 5, true, graph.Tanh)(in[:3])
				z := matmulRef(3, 5, 2, false, false)([][]float64{h, in[3]})
				out := make([]float64, 3)
				for i := range out {
					out[i] = lse(z[i*2:i*2+2]) - z[i*2+int(in[4][i])]
				}
				return out
			}},
	}
	for _, act := range []graph.Activation{graph.Linear, graph.ReLU, graph.Tanh, graph.Sigmoid, graph.GELU, graph.GELUTanh, graph.SiLU} {
		cases = append(cases,
			opCase{name: "dense-" + act.String(), shapes: [][]int{{3, 4}, {4, 5}, {5}},
				build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], in[2], act) },
				ref:   denseRef(3, 4, 5, true, act)},
			opCase{name: "activate-" + act.String(), shapes: [][]int{{2, 3}},
				build: func(in []*graph.Node) *graph.Node { return graph.Activate(in[0], act) },
				ref:   elementwise(actRef(act))},
		)
	}
	// The softmax spans a row, so Dense follows the product with it.
	cases = append(cases,
		opCase{name: "dense-softmax", shapes: [][]int{{3, 4}, {4, 5}, {5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], in[2], graph.SoftmaxActivation) },
			ref: func(in [][]float64) []float64 {
				return alongRef([]int{3, 5}, 1, lineSoftmax(false))([][]float64{denseRef(3, 4, 5, true, graph.Linear)(in)})
			}},
		opCase{name: "activate-softmax", shapes: [][]int{{2, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Activate(in[0], graph.SoftmaxActivation) },
			ref:   alongRef([]int{2, 3}, 1, lineSoftmax(false))})
	cases = append(cases, layerOpCases()...)
	cases = append(cases, elemOpCases()...)
	cases = append(cases, batchNormOpCases()...)
	return append(cases, issue22OpCases()...)
}

// setup builds c on dt placeholders fed with random values, and y, a random
// weighting of the op's output summed to a scalar, so every output element
// matters to the gradient.
func setup(t *testing.T, c opCase, dt graph.DType, r *rand.Rand) (g *graph.Graph, in []*graph.Node, vals [][]float64, out, y *graph.Node, wvals []float64, wn *graph.Node) {
	t.Helper()
	g = graph.New(dt)
	for i, s := range c.shapes {
		in = append(in, g.Placeholder(fmt.Sprintf("in%d", i), s...))
		gen := normal
		if c.gen != nil && c.gen[i] != nil {
			gen = c.gen[i]
		}
		v := make([]float64, size(s))
		for j := range v {
			v[j] = gen(r, j)
		}
		vals = append(vals, v)
	}
	out = c.build(in)
	wn = g.Placeholder("weights", out.Shape()...)
	wvals = make([]float64, out.Len())
	for j := range wvals {
		wvals[j] = r.Float64() + 0.5
	}
	y = graph.Sum(graph.Mul(out, wn))
	return
}

func TestOpForward(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
		tol := 1e-12
		if dt == graph.Float32 {
			tol = 1e-5
		}
		for _, c := range opCases() {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
				_, in, vals, out, _, _, _ := setup(t, c, dt, r)
				g := out.Graph()
				p, err := g.Compile(out)
				if err != nil {
					t.Fatal(err)
				}
				if dt == graph.Float32 {
					// The reference sees the values float32 holds.
					for _, v := range vals {
						for j := range v {
							v[j] = float64(float32(v[j]))
						}
					}
				}
				for i, n := range in {
					p.Feed(n, vals[i])
				}
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				got, want := p.Value(out), c.ref(vals)
				if len(got) != len(want) {
					t.Fatalf("got %d values, want %d", len(got), len(want))
				}
				for i := range want {
					if !near(got[i], want[i], tol) {
						t.Errorf("out[%d] = %.10g, want %.10g (inputs %v)", i, got[i], want[i], vals)
					}
				}
			})
		}
	}
}

func near(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestOpGradients checks every op's gradient against central finite
// differences in float64.
func TestOpGradients(t *testing.T) {
	const h = 1e-5
	for _, c := range opCases() {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, uint64(len(c.name))))
			g, in, vals, _, y, wvals, wn := setup(t, c, graph.Float64, r)
			var xs []*graph.Node
			var xi []int
			for i, n := range in {
				if c.diff == nil || c.diff[i] {
					xs = append(xs, n)
					xi = append(xi, i)
				}
			}
			grads := g.Gradients(y, xs)
			p, err := g.Compile(append([]*graph.Node{y}, grads...)...)
			if err != nil {
				t.Fatal(err)
			}
			p.Feed(wn, wvals)
			eval := func() float64 {
				for i, n := range in {
					p.Feed(n, vals[i])
				}
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				return p.Scalar(y)
			}
			eval()
			analytics := make([][]float64, len(grads))
			for k, gn := range grads {
				analytics[k] = p.Value(gn)
			}
			for k, gn := range grads {
				if got, want := gn.Shape(), in[xi[k]].Shape(); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("gradient %d has shape %v, want %v", k, got, want)
				}
				analytic := analytics[k]
				v := vals[xi[k]]
				for j := range v {
					orig := v[j]
					v[j] = orig + h
					fp := eval()
					v[j] = orig - h
					fm := eval()
					v[j] = orig
					fd := (fp - fm) / (2 * h)
					if err := math.Abs(analytic[j]-fd) / math.Max(math.Max(math.Abs(fd), math.Abs(analytic[j])), 1e-2); err > 1e-6 {
						t.Errorf("d y/d in%d[%d] = %.10g, finite difference %.10g (rel err %.2g)", xi[k], j, analytic[j], fd, err)
					}
				}
			}
		})
	}
}

// TestInputGradientNotComputed checks that a program asked for the
// weights' gradients of a dense layer runs no product for the input's
// gradient: the gotrain bench counts the training step's FLOPs that way.
func TestInputGradientNotComputed(t *testing.T) {
	steps := func(withInput bool) int {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 4, 3)
		w := graph.NewVariable("w", []int{3, 2}, graph.Float32, nil)
		b := graph.NewVariable("b", []int{2}, graph.Float32, nil)
		loss := graph.Sum(graph.Dense(x, g.Var(w), g.Var(b), graph.ReLU))
		wrt := []*graph.Node{g.Var(w), g.Var(b)}
		if withInput {
			wrt = append(wrt, x)
		}
		p, err := g.Compile(append(g.Gradients(loss, wrt), loss)...)
		if err != nil {
			t.Fatal(err)
		}
		return p.NumSteps()
	}
	without, with := steps(false), steps(true)
	if with != without+1 {
		t.Errorf("program steps: %d with the input's gradient, %d without; want exactly one more (the product dy·Wᵀ)", with, without)
	}
}
