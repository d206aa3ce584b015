package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
	"github.com/gotrain/gotrain/internal/memlimit"
)

// panics runs fn and returns what it panicked with, nil if it did not.
func panics(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

func TestShapeErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	a := g.Placeholder("a", 64, 10)
	b := g.Placeholder("b", 12, 16)
	v3 := g.Placeholder("v3", 3)
	s := g.Placeholder("s")
	tests := []struct {
		name  string
		scope string
		fn    func()
		want  string
		kind  error
	}{
		{"matmul", "dense_1", func() { graph.MatMul(a, b) },
			"graph: dense_1: matmul: want inner dimensions equal, got [64 10] x [12 16]", graph.ErrShape},
		{"matmul-vector", "", func() { graph.MatMul(a, v3) },
			"graph: matmul: want two matrices, got [64 10] x [3]", graph.ErrShape},
		{"dense-width", "dense_2", func() { graph.Dense(a, b, nil, graph.ReLU) },
			"graph: dense_2: dense: want input width 12, got 10", graph.ErrShape},
		{"dense-bias", "", func() { graph.Dense(b, g.Placeholder("w", 16, 3), v3.Graph().Placeholder("bb", 4), graph.Linear) },
			"graph: dense: want bias shape [3], got [4]", graph.ErrShape},
		{"add", "loss", func() { graph.Add(a, b) },
			"graph: loss: add: want shapes that broadcast, got [64 10] and [12 16]", graph.ErrShape},
		{"mul-vector", "", func() { graph.Mul(a, v3) },
			"graph: mul: want shapes that broadcast, got [64 10] and [3]", graph.ErrShape},
		{"softmax-scalar", "", func() { graph.Softmax(s) },
			"graph: softmax: want at least one axis, got a scalar", graph.ErrShape},
		{"sparse-xent", "", func() { graph.SparseSoftmaxCrossEntropy(v3, a) },
			"graph: sparse_softmax_cross_entropy: want labels [m] and logits [m,c], got [3] and [64 10]", graph.ErrShape},
		{"softmax-xent", "", func() { graph.SoftmaxCrossEntropy(b, a) },
			"graph: softmax_cross_entropy: want labels and logits [m,c], got [12 16] and [64 10]", graph.ErrShape},
		{"sigmoid-xent", "", func() { graph.SigmoidCrossEntropy(v3, a) },
			"graph: sigmoid_cross_entropy: want labels and logits of equal shape, got [3] and [64 10]", graph.ErrShape},
		{"sum-axis", "", func() { graph.SumAxis(a, 2) },
			"graph: sum_axis: want axis in [-2,2), got 2 for shape [64 10]", graph.ErrShape},
		{"reshape", "", func() { graph.Reshape(a, 7, -1) },
			"graph: reshape: want 640 elements, got shape [7 -1] for [64 10]", graph.ErrShape},
		{"reshape-two-infer", "", func() { graph.Reshape(a, -1, -1) },
			"graph: reshape: want non-negative dimensions and at most one -1, got [-1 -1]", graph.ErrShape},
		{"gradients-not-scalar", "", func() { g.Gradients(a, []*graph.Node{a}) },
			"graph: gradients: want a scalar to differentiate, got shape [64 10]", graph.ErrShape},
		{"negative-dim", "", func() { g.Placeholder("x", 2, -1) },
			`graph: placeholder "x": want non-negative dimensions, got [2 -1]`, graph.ErrShape},
		{"variable-init", "", func() { graph.NewVariable("w", []int{2, 2}, graph.Float32, []float64{1}) },
			`graph: variable "w": want 4 initial values for shape [2 2], got 1`, graph.ErrShape},
		{"var-dtype", "", func() { g.Var(graph.NewVariable("w64", []int{1}, graph.Float64, nil)) },
			`graph: var "w64": want dtype float32, got float64`, graph.ErrDType},
		{"other-graph", "", func() { graph.Add(a, graph.New(graph.Float32).Placeholder("z", 64, 10)) },
			"graph: add: node z[64 10] belongs to another graph", graph.ErrGraph},
		{"nil", "", func() { graph.Neg(nil) },
			"graph: neg: want a node, got nil", graph.ErrGraph},
		{"activation", "", func() { graph.Activate(a, graph.Activation(9)) },
			"graph: activate: want an activation Linear..SoftmaxActivation, got Activation(9)", graph.ErrShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restore := g.SetScope(tt.scope)
			defer restore()
			v := panics(tt.fn)
			err, ok := v.(error)
			if !ok {
				t.Fatalf("panicked with %v (%T), want an error", v, v)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q does not wrap %v", err, tt.kind)
			}
		})
	}
}

func TestScopeAndNames(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	outer := g.SetScope("model")
	inner := g.SetScope("dense_1")
	if got := g.Scope(); got != "model/dense_1" {
		t.Errorf("nested scope = %q, want model/dense_1", got)
	}
	n := graph.Neg(x)
	inner()
	if got := g.Scope(); got != "model" {
		t.Errorf("restored scope = %q, want model", got)
	}
	outer()
	if got, want := n.Name(), fmt.Sprintf("model/dense_1/neg_%d", 1); got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got := n.String(); got != "model/dense_1/neg_1[2 3]" {
		t.Errorf("String() = %q", got)
	}
	if x.Name() != "x" || n.Graph() != g || !slices.Equal(n.Shape(), []int{2, 3}) || n.Len() != 6 {
		t.Errorf("x.Name()=%q n.Shape()=%v n.Len()=%d", x.Name(), n.Shape(), n.Len())
	}
}

func TestVariable(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		v := graph.NewVariable("w", []int{2, 3}, dt, []float64{1, 2, 3, 4, 5, 6.5})
		if v.Name() != "w" || !slices.Equal(v.Shape(), []int{2, 3}) || v.DType() != dt || v.Len() != 6 || !v.Trainable() {
			t.Errorf("%v: got %v len %d trainable %v", dt, v, v.Len(), v.Trainable())
		}
		if got := v.Value(); !slices.Equal(got, []float64{1, 2, 3, 4, 5, 6.5}) {
			t.Errorf("%v: Value() = %v", dt, got)
		}
		v.SetTrainable(false)
		if v.Trainable() {
			t.Errorf("%v: SetTrainable(false) ignored", dt)
		}
		v.Assign([]float64{0, 0, 0, 0, 0, 7})
		if (dt == graph.Float32) != (v.F32() != nil) || (dt == graph.Float64) != (v.F64() != nil) {
			t.Errorf("%v: F32 %v F64 %v", dt, v.F32(), v.F64())
		}
		if got := v.Value()[5]; got != 7 {
			t.Errorf("%v: after Assign, Value()[5] = %v", dt, got)
		}
		if err, _ := panics(func() { v.Assign([]float64{1}) }).(error); err == nil || !errors.Is(err, graph.ErrShape) ||
			err.Error() != `graph: assign "w": want 6 values, got 1` {
			t.Errorf("%v: Assign of wrong length panicked with %v", dt, err)
		}
		z := graph.NewVariable("z", nil, dt, nil)
		if z.Len() != 1 || z.Value()[0] != 0 {
			t.Errorf("%v: scalar variable %v = %v", dt, z, z.Value())
		}
	}
}

func TestVarNodeAndVariables(t *testing.T) {
	g := graph.New(graph.Float32)
	a := graph.NewVariable("a", []int{2}, graph.Float32, nil)
	b := graph.NewVariable("b", []int{2}, graph.Float32, nil)
	nb := g.Var(b)
	na := g.Var(a)
	if g.Var(b) != nb || g.Var(a) != na {
		t.Error("repeated Var returned a different node")
	}
	if got := g.Variables(); len(got) != 2 || got[0] != b || got[1] != a {
		t.Errorf("Variables() = %v, want [b a]", got)
	}
	// Var nodes read the storage itself.
	p, err := g.Compile(graph.Add(na, nb))
	if err != nil {
		t.Fatal(err)
	}
	if &p.F32(na)[0] != &a.F32()[0] {
		t.Error("program copies variable storage; want it read in place")
	}
}

func TestMask(t *testing.T) {
	g := graph.New(graph.Float32)
	if g.Mask() != nil {
		t.Error("new graph has a mask")
	}
	m := g.Placeholder("mask", 8)
	g.SetMask(m)
	if g.Mask() != m {
		t.Error("Mask() is not the node given to SetMask")
	}
	if err, _ := panics(func() { g.SetMask(g.Placeholder("m2", 2, 2)) }).(error); !errors.Is(err, graph.ErrShape) {
		t.Errorf("SetMask(matrix) panicked with %v, want ErrShape", err)
	}
}

func TestStopGradient(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 3)
	y := graph.Sum(graph.Mul(graph.StopGradient(x), x)) // d/dx = x, not 2x
	other := g.Placeholder("unused", 2)
	grads := g.Gradients(y, []*graph.Node{x, other})
	p, err := g.Compile(grads...)
	if err != nil {
		t.Fatal(err)
	}
	p.Feed(x, []float64{1, -2, 3})
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if got := p.Value(grads[0]); !slices.Equal(got, []float64{1, -2, 3}) {
		t.Errorf("gradient through StopGradient = %v, want [1 -2 3]", got)
	}
	if got := p.Value(grads[1]); !slices.Equal(got, []float64{0, 0}) || !slices.Equal(grads[1].Shape(), []int{2}) {
		t.Errorf("gradient of a node not reaching y = %v %v, want zeros [2]", got, grads[1].Shape())
	}
}

func TestGradientOfOutputItself(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x")
	gr := g.Gradients(x, []*graph.Node{x})
	p, _ := g.Compile(gr[0])
	if err := p.Run(); err != nil || p.Scalar(gr[0]) != 1 {
		t.Errorf("dx/dx = %v (err %v), want 1", p.Scalar(gr[0]), err)
	}
}

func TestCompileAndProgramErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 2)
	y := graph.Neg(x)
	if _, err := g.Compile(); err == nil || err.Error() != "graph: compile: want at least one output, got none" {
		t.Errorf("Compile() error = %v", err)
	}
	other := graph.New(graph.Float32).Placeholder("o", 1)
	if _, err := g.Compile(other); !errors.Is(err, graph.ErrGraph) {
		t.Errorf("Compile(other graph) error = %v, want ErrGraph", err)
	}
	if _, err := g.Compile(nil); !errors.Is(err, graph.ErrGraph) {
		t.Errorf("Compile(nil) error = %v, want ErrGraph", err)
	}
	p, err := g.Compile(y)
	if err != nil {
		t.Fatal(err)
	}
	later := graph.Exp(x) // built after Compile: not in p
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"feed-length", func() { p.Feed(x, []float64{1}) }, "graph: feed: x[2]: want 2 values, got 1"},
		{"feed-not-placeholder", func() { p.Feed(y, []float64{1, 2}) }, "graph: feed: want a placeholder, got neg_1[2]"},
		{"value-not-held", func() { p.Value(later) }, "graph: value: node exp_2[2] is not computed by this program"},
		{"f32-nil", func() { p.F32(nil) }, "graph: f32: want a node, got nil"},
	}
	for _, tt := range tests {
		err, _ := panics(tt.fn).(error)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: panicked with %v, want %q", tt.name, err, tt.want)
		}
	}
	if p.F64(y) != nil {
		t.Error("F64 of a float32 program is not nil")
	}
}

// TestCompileMemory: a program whose buffers would not fit in the machine's
// memory is an error from Compile naming the largest buffer's node and
// shape, not "fatal error: out of memory". The activations are 4 TiB and
// more, so the test holds on any machine whose memory can be read; nothing
// that large is allocated.
func TestCompileMemory(t *testing.T) {
	if memlimit.Bytes() == 0 {
		t.Skip("this machine's memory cannot be read")
	}
	tests := []struct {
		name string
		dt   graph.DType
		want string
	}{
		{"float32", graph.Float32, "graph: compile: not enough memory: wide/dense_2 of shape [1048576 1048576] and 1 other buffers: needs 4.0 TiB, more than this machine's "},
		{"float64", graph.Float64, "graph: compile: not enough memory: wide/dense_2 of shape [1048576 1048576] and 1 other buffers: needs 8.0 TiB, more than this machine's "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := graph.NewVariable("w", []int{1, 1 << 20}, tt.dt, nil)
			g := graph.New(tt.dt)
			x := g.Placeholder("x", 1<<20, 1)
			g.SetScope("wide")
			y := graph.Dense(x, g.Var(w), nil, graph.ReLU)
			p, err := g.Compile(y)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, graph.ErrMemory) || !errors.Is(err, data.ErrMemory) {
				t.Fatalf("Compile error\n got %v\nwant %s... wrapping graph.ErrMemory and data.ErrMemory", err, tt.want)
			}
			if p != nil {
				t.Errorf("Compile returned a program with its error")
			}
		})
	}
	// A program that fits still compiles.
	g := graph.New(graph.Float32)
	if _, err := g.Compile(graph.Sum(g.Placeholder("x", 1024, 1024))); err != nil {
		t.Errorf("Compile of 4 MiB of buffers: %v", err)
	}
}

// TestSame: Same tells the graphs of one step function traced twice from
// graphs that compute something else.
func TestSame(t *testing.T) {
	w := graph.NewVariable("w", []int{3, 2}, graph.Float32, nil)
	other := graph.NewVariable("w", []int{3, 2}, graph.Float32, nil)
	build := func(v *graph.Variable, scale float64, act graph.Activation) *graph.Graph {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 4, 3)
		graph.Scale(graph.Sum(graph.Activate(graph.MatMul(x, g.Var(v)), act)), scale)
		return g
	}
	base := build(w, 2, graph.ReLU)
	tests := []struct {
		name string
		g    *graph.Graph
		want bool
	}{
		{"same-steps", build(w, 2, graph.ReLU), true},
		{"other-constant", build(w, 3, graph.ReLU), false},
		{"other-activation", build(w, 2, graph.Tanh), false},
		{"other-variable", build(other, 2, graph.ReLU), false},
		{"float64", func() *graph.Graph {
			g := graph.New(graph.Float64)
			g.Placeholder("x", 4, 3)
			return g
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := base.Same(tt.g); got != tt.want {
				t.Errorf("Same = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRunError(t *testing.T) {
	g := graph.New(graph.Float32)
	labels := g.Placeholder("labels", 2)
	logits := g.Placeholder("logits", 2, 3)
	restore := g.SetScope("loss")
	l := graph.SparseSoftmaxCrossEntropy(labels, logits)
	restore()
	p, _ := g.Compile(l)
	for _, bad := range []float64{3, -1, 0.5} {
		p.Feed(labels, []float64{0, bad})
		err := p.Run()
		var le *graph.LabelError
		if !errors.As(err, &le) || le.Row != 1 || le.Class != 3 {
			t.Fatalf("label %v: Run() = %v, want a LabelError for row 1", bad, err)
		}
		want := fmt.Sprintf("graph: loss: node loss/sparse_softmax_cross_entropy_2: row 1: want a label in [0,3), got %v", bad)
		if err.Error() != want {
			t.Errorf("Run() = %q\nwant    %q", err, want)
		}
	}
	p.Feed(labels, []float64{0, 2})
	if err := p.Run(); err != nil {
		t.Errorf("Run() after valid labels = %v", err)
	}
	if got := p.Value(l)[0]; math.Abs(got-math.Log(3)) > 1e-6 {
		t.Errorf("uniform logits loss = %v, want log 3", got)
	}
}

// mlp builds a 2-layer perceptron on shared variables and returns the loss,
// the gradients of the variables and the placeholders.
type mlp struct {
	g          *graph.Graph
	x, y, loss *graph.Node
	vars       []*graph.Variable
	grads      []*graph.Node
	p          *graph.Program
}

func newVars(dt graph.DType, in, hidden, out int, seed uint64) []*graph.Variable {
	r := rand.New(rand.NewPCG(seed, 1))
	glorot := func(fanIn, fanOut int) []float64 {
		s := math.Sqrt(6 / float64(fanIn+fanOut))
		v := make([]float64, fanIn*fanOut)
		for i := range v {
			v[i] = (2*r.Float64() - 1) * s
		}
		return v
	}
	return []*graph.Variable{
		graph.NewVariable("dense/kernel", []int{in, hidden}, dt, glorot(in, hidden)),
		graph.NewVariable("dense/bias", []int{hidden}, dt, nil),
		graph.NewVariable("dense_1/kernel", []int{hidden, out}, dt, glorot(hidden, out)),
		graph.NewVariable("dense_1/bias", []int{out}, dt, nil),
	}
}

func buildMLP(t testing.TB, dt graph.DType, vars []*graph.Variable, batch int, act graph.Activation) *mlp {
	m := &mlp{g: graph.New(dt), vars: vars}
	g := m.g
	in, out := vars[0].Shape()[0], vars[3].Shape()[0]
	m.x = g.Placeholder("x", batch, in)
	m.y = g.Placeholder("y", batch)
	r := g.SetScope("dense")
	h := graph.Dense(m.x, g.Var(vars[0]), g.Var(vars[1]), act)
	r()
	r = g.SetScope("dense_1")
	logits := graph.Dense(h, g.Var(vars[2]), g.Var(vars[3]), graph.Linear)
	r()
	_ = out
	m.loss = graph.Mean(graph.SparseSoftmaxCrossEntropy(m.y, logits))
	xs := make([]*graph.Node, len(vars))
	for i, v := range vars {
		xs[i] = g.Var(v)
	}
	m.grads = g.Gradients(m.loss, xs)
	var err error
	m.p, err = g.Compile(append([]*graph.Node{m.loss}, m.grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// blobs returns a separable 2-class problem: the class is the sign of the
// sum of the features.
func blobs(n, d int, seed uint64) (x, y []float64) {
	r := rand.New(rand.NewPCG(seed, 2))
	x = make([]float64, n*d)
	y = make([]float64, n)
	for i := 0; i < n; i++ {
		var s float64
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			x[i*d+j] = v
			s += v
		}
		if s > 0 {
			y[i] = 1
		}
	}
	return x, y
}

func adamStep[T loops.Float](w, g []T, slots map[*T][2][]T, step int) {
	s, ok := slots[&w[0]]
	if !ok {
		s = [2][]T{make([]T, len(w)), make([]T, len(w))}
		slots[&w[0]] = s
	}
	loops.AdamUpdate(w, g, s[0], s[1], 0.01, 0.9, 0.999, 1e-7, step)
}

func TestMLPTrains(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		for _, act := range []graph.Activation{graph.ReLU, graph.Tanh, graph.GELU} {
			t.Run(dt.String()+"/"+act.String(), func(t *testing.T) {
				m := buildMLP(t, dt, newVars(dt, 4, 16, 2, 3), 32, act)
				x, y := blobs(32, 4, 5)
				m.p.Feed(m.x, x)
				m.p.Feed(m.y, y)
				s32 := map[*float32][2][]float32{}
				s64 := map[*float64][2][]float64{}
				var first, last float64
				for step := 1; step <= 60; step++ {
					if err := m.p.Run(); err != nil {
						t.Fatal(err)
					}
					last = m.p.Scalar(m.loss)
					if step == 1 {
						first = last
					}
					for i, v := range m.vars {
						if dt == graph.Float32 {
							adamStep(v.F32(), m.p.F32(m.grads[i]), s32, step)
						} else {
							adamStep(v.F64(), m.p.F64(m.grads[i]), s64, step)
						}
					}
				}
				if !(last < first/4) {
					t.Errorf("loss went from %.4f to %.4f in 60 steps, want it below a quarter", first, last)
				}
			})
		}
	}
}

func TestRunAllocatesNothing(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		m := buildMLP(t, dt, newVars(dt, 8, 16, 3, 4), 16, graph.ReLU)
		x, y := blobs(16, 8, 6)
		m.p.Feed(m.x, x)
		m.p.Feed(m.y, y)
		if got := testing.AllocsPerRun(20, func() {
			if err := m.p.Run(); err != nil {
				t.Fatal(err)
			}
		}); got != 0 {
			t.Errorf("%v: Run allocates %v times per call, want 0", dt, got)
		}
	}
}

// TestConcurrentPrograms runs two replicas' Programs at once on shared
// Variables (run with -race) and checks each matches a serial run.
func TestConcurrentPrograms(t *testing.T) {
	// Big enough for OpenBLAS to take its blocked paths with work buffers.
	vars := newVars(graph.Float32, 96, 160, 3, 7)
	a := buildMLP(t, graph.Float32, vars, 64, graph.Tanh)
	b := buildMLP(t, graph.Float32, vars, 64, graph.Tanh)
	xa, ya := blobs(64, 96, 8)
	xb, yb := blobs(64, 96, 9)
	a.p.Feed(a.x, xa)
	a.p.Feed(a.y, ya)
	b.p.Feed(b.x, xb)
	b.p.Feed(b.y, yb)
	if err := a.p.Run(); err != nil {
		t.Fatal(err)
	}
	if err := b.p.Run(); err != nil {
		t.Fatal(err)
	}
	wantA, wantB := a.p.Value(a.grads[0]), b.p.Value(b.grads[0])
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, m := range []*mlp{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := m.p.Run(); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.p.Value(a.grads[0]), wantA) || !slices.Equal(b.p.Value(b.grads[0]), wantB) {
		t.Error("concurrent runs differ from serial runs")
	}
}

// TestFloat32MatchesFloat64 trains nothing: it checks one gradient step of
// the same MLP in both dtypes agrees to float32 precision.
func TestFloat32MatchesFloat64(t *testing.T) {
	m32 := buildMLP(t, graph.Float32, newVars(graph.Float32, 6, 10, 4, 10), 8, graph.Sigmoid)
	m64 := buildMLP(t, graph.Float64, newVars(graph.Float64, 6, 10, 4, 10), 8, graph.Sigmoid)
	// Start both from the same float32-representable weights.
	for i := range m64.vars {
		m64.vars[i].Assign(m32.vars[i].Value())
	}
	x, y := blobs(8, 6, 11)
	for i := range x {
		x[i] = float64(float32(x[i]))
	}
	for _, m := range []*mlp{m32, m64} {
		m.p.Feed(m.x, x)
		m.p.Feed(m.y, y)
		if err := m.p.Run(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m32.grads {
		g32, g64 := m32.p.Value(m32.grads[i]), m64.p.Value(m64.grads[i])
		for j := range g64 {
			if math.Abs(g32[j]-g64[j]) > 1e-5*(1+math.Abs(g64[j])) {
				t.Fatalf("grad %d[%d]: float32 %v, float64 %v", i, j, g32[j], g64[j])
			}
		}
	}
}

// TestGradientBuffersAreDistinct: a strategy all-reduces gradient buffers in
// place, so no two gradients may share one, and none may be a constant that
// Run would not rewrite.
func TestGradientBuffersAreDistinct(t *testing.T) {
	g := graph.New(graph.Float64)
	a := g.Placeholder("a", 2)
	b := g.Placeholder("b", 2)
	s := g.Placeholder("s")
	unused := g.Placeholder("unused", 3)
	y := graph.Sum(graph.Add(a, b)) // da and db are the same node inside
	grads := g.Gradients(y, []*graph.Node{a, b, unused, a})
	gs := g.Gradients(s, []*graph.Node{s}) // the seed itself
	p, err := g.Compile(append(grads, gs...)...)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		want := [][]float64{{1, 1}, {1, 1}, {0, 0, 0}, {1, 1}, {1}}
		all := append(grads, gs...)
		for i, n := range all {
			if got := p.Value(n); !slices.Equal(got, want[i]) {
				t.Errorf("round %d: gradient %d = %v, want %v", round, i, got, want[i])
			}
			// Scribble over it, as an in-place all-reduce would.
			for j := range p.F64(n) {
				p.F64(n)[j] = 99
			}
		}
		for i := range all {
			for j := i + 1; j < len(all); j++ {
				if &p.F64(all[i])[0] == &p.F64(all[j])[0] {
					t.Fatalf("gradients %d and %d share a buffer", i, j)
				}
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	g := graph.New(graph.Float64)
	if g.DType() != graph.Float64 || g.NumNodes() != 0 {
		t.Errorf("new graph: dtype %v, %d nodes", g.DType(), g.NumNodes())
	}
	x := g.Placeholder("x", 2)
	y := graph.Exp(graph.Neg(x))
	p, err := g.Compile(y)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 3 || p.Graph() != g || p.DType() != graph.Float64 || p.NumSteps() != 2 {
		t.Errorf("NumNodes %d, Program dtype %v, steps %d", g.NumNodes(), p.DType(), p.NumSteps())
	}
	if p.F32(y) != nil {
		t.Error("F32 of a float64 program is not nil")
	}
	if err, _ := panics(func() { graph.New(graph.DType(7)) }).(error); !errors.Is(err, graph.ErrDType) {
		t.Errorf("New(DType(7)) panicked with %v, want ErrDType", err)
	}
	if s := graph.DType(7).String(); s != "DType(7)" {
		t.Errorf("DType(7).String() = %q", s)
	}
	var nilNode *graph.Node
	if s := nilNode.String(); s != "<nil>" {
		t.Errorf("nil node String() = %q", s)
	}
}

// TestEmptyShapes: zero-sized axes compute nothing, and do not hang.
func TestEmptyShapes(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		x := g.Placeholder("x", 3, 4)
		w := g.Var(graph.NewVariable("w", []int{4, 0}, dt, nil))
		b := g.Var(graph.NewVariable("b", []int{0}, dt, nil))
		h := graph.Dense(x, w, b, graph.ReLU)
		e := g.Placeholder("e", 2, 0)
		k := g.Placeholder("k", 0, 5)
		outs := []*graph.Node{
			h, graph.Softmax(h), graph.LogSoftmax(e), graph.Sum(h), graph.Mean(e),
			graph.MatMul(g.Placeholder("a", 3, 0), k), graph.SumAxis(e, 1),
		}
		grads := g.Gradients(graph.Add(graph.Sum(graph.Softmax(h)), graph.Sum(graph.LogSoftmax(e))), []*graph.Node{x, w, b, e})
		p, err := g.Compile(append(outs, grads...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatalf("%v: Run() = %v", dt, err)
		}
		if got := p.Value(outs[5]); !slices.Equal(got, make([]float64, 15)) {
			t.Errorf("%v: [3,0]x[0,5] = %v, want zeros", dt, got)
		}
		if got := p.Value(outs[6]); !slices.Equal(got, []float64{0, 0}) {
			t.Errorf("%v: SumAxis of [2,0] = %v, want [0 0]", dt, got)
		}
	}
}

// TestIssue22AttentionRunAllocatesNothing: a causal attention step on q, k
// and v split from one tensor, forward and backward (causal_softmax, its
// gradient, add_n and the split's concat), allocates nothing per Run.
func TestIssue22AttentionRunAllocatesNothing(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		x := g.Placeholder("qkv", 3, 2, 2, 11, 4)
		p := graph.Split(x, 0, 1, 1, 1)
		for i := range p {
			p[i] = graph.Reshape(p[i], 2, 2, 11, 4)
		}
		y := graph.Attention(p[0], p[1], p[2], true)
		loss := graph.Sum(graph.Mul(y, graph.Add(y, p[0])))
		dx := g.Gradients(loss, []*graph.Node{x})[0]
		prog, err := g.Compile(loss, dx)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, x.Len())
		for i := range vals {
			vals[i] = math.Sin(float64(i))
		}
		prog.Feed(x, vals)
		if got := testing.AllocsPerRun(20, func() {
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
		}); got != 0 {
			t.Errorf("%v: Run allocates %v times per call, want 0", dt, got)
		}
	}
}
