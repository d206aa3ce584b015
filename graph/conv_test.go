package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/dnnl"
	"github.com/gotrain/gotrain/models/resnet"
)

type onednnCase struct {
	b, h, w, ci, kh, kw, co int
	sh, sw, dh, dw          int
	pad                     graph.Padding
	act                     graph.Activation
	bias                    bool
}

func (c onednnCase) String() string {
	return fmt.Sprintf("b%d-%dx%dx%d-k%dx%dx%d-s%dx%d-d%dx%d-%v-%v-bias=%v", c.b, c.h, c.w, c.ci, c.kh, c.kw, c.co,
		c.sh, c.sw, c.dh, c.dw, c.pad, c.act, c.bias)
}

// convRun builds act(x ⋆ w + b) for c in float32, and the gradients of
// Σ y·r for a random r, so dy is not uniform; it returns y and the
// gradients of x, w (and b) after one Run on the inputs in.
func convRun(t *testing.T, c onednnCase, in [][]float64) [][]float32 {
	t.Helper()
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", c.b, c.h, c.w, c.ci)
	w := g.Placeholder("w", c.kh, c.kw, c.ci, c.co)
	var b *graph.Node
	wrt := []*graph.Node{x, w}
	if c.bias {
		b = g.Placeholder("b", c.co)
		wrt = append(wrt, b)
	}
	y := graph.Conv2DDilated(x, w, b, c.sh, c.sw, c.dh, c.dw, c.pad, c.act)
	r := g.Placeholder("r", y.Shape()...)
	grads := g.Gradients(graph.Sum(graph.Mul(y, r)), wrt)
	p, err := g.Compile(append([]*graph.Node{y}, grads...)...)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	feeds := append([]*graph.Node{x, w, r}, wrt[2:]...)
	for i, n := range feeds {
		if len(in) <= i {
			in = append(in, randValues(n.Len(), int64(i)))
		}
		p.Feed(n, in[i])
	}
	if err := p.Run(); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	var out [][]float32
	for _, n := range append([]*graph.Node{y}, grads...) {
		out = append(out, append([]float32(nil), p.F32(n)...))
	}
	return out
}

func randValues(n int, seed int64) []float64 {
	r := rand.New(rand.NewPCG(uint64(seed), 36))
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// TestIssue36OneDNNMatchesIm2col checks oneDNN's forward, input gradient and
// weight gradient against the im2col and gemm path, in float32, within 1e-5
// of the reference's largest magnitude.
func TestIssue36OneDNNMatchesIm2col(t *testing.T) {
	if !graph.ConvOneDNNBuilt {
		t.Skip("this build has no oneDNN convolutions")
	}
	cases := []onednnCase{
		{b: 7, h: 9, w: 11, ci: 3, kh: 3, kw: 3, co: 16, sh: 1, sw: 1, dh: 1, dw: 1, pad: graph.Same, act: graph.ReLU, bias: true},
		{b: 1, h: 28, w: 28, ci: 16, kh: 3, kw: 3, co: 16, sh: 1, sw: 1, dh: 1, dw: 1, pad: graph.Same, act: graph.Linear},
		{b: 7, h: 13, w: 13, ci: 16, kh: 3, kw: 3, co: 32, sh: 2, sw: 2, dh: 1, dw: 1, pad: graph.Same, act: graph.Linear},
		{b: 7, h: 9, w: 9, ci: 67, kh: 3, kw: 3, co: 3, sh: 2, sw: 2, dh: 1, dw: 1, pad: graph.Valid, act: graph.Linear, bias: true},
		// Tanh is its own node after the conv; its output is compared on the
		// pre-activation's scale only where that is near 1 (few channels).
		{b: 7, h: 8, w: 9, ci: 3, kh: 3, kw: 3, co: 4, sh: 1, sw: 2, dh: 1, dw: 1, pad: graph.Same, act: graph.Tanh, bias: true},
		{b: 1, h: 7, w: 5, ci: 1, kh: 3, kw: 3, co: 16, sh: 1, sw: 1, dh: 1, dw: 1, pad: graph.Causal, act: graph.Linear, bias: true},
		{b: 7, h: 11, w: 9, ci: 16, kh: 3, kw: 3, co: 67, sh: 1, sw: 1, dh: 2, dw: 2, pad: graph.Same, act: graph.ReLU},
		{b: 1, h: 11, w: 10, ci: 3, kh: 3, kw: 2, co: 5, sh: 2, sw: 1, dh: 2, dw: 1, pad: graph.Valid, act: graph.Linear},
		{b: 7, h: 9, w: 7, ci: 3, kh: 3, kw: 3, co: 16, sh: 2, sw: 2, dh: 2, dw: 2, pad: graph.Causal, act: graph.Sigmoid, bias: true},
		{b: 7, h: 5, w: 5, ci: 67, kh: 1, kw: 1, co: 16, sh: 1, sw: 1, dh: 1, dw: 1, pad: graph.Same, act: graph.Linear},
		{b: 7, h: 7, w: 7, ci: 16, kh: 1, kw: 1, co: 32, sh: 2, sw: 2, dh: 1, dw: 1, pad: graph.Same, act: graph.Linear},
		{b: 1, h: 9, w: 9, ci: 1, kh: 5, kw: 5, co: 1, sh: 2, sw: 2, dh: 1, dw: 1, pad: graph.Causal, act: graph.ReLU, bias: true},
		// Conv1D's shape: [batch, 1, time, channels].
		{b: 7, h: 1, w: 19, ci: 3, kh: 1, kw: 3, co: 16, sh: 1, sw: 2, dh: 1, dw: 2, pad: graph.Causal, act: graph.Linear, bias: true},
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			impls := map[string]string{}
			restore := graph.ObserveConvs(func(name string, c *dnnl.Conv) { impls[name] = implName(c) })
			got := convRun(t, c, nil)
			restore()
			if len(impls) != 3 {
				t.Fatalf("oneDNN built %d conv kernels (%v), want 3: forward and both gradients", len(impls), impls)
			}
			for name, impl := range impls {
				if impl == "im2col" {
					t.Errorf("%s: oneDNN refused the shape", name)
				}
			}
			defer graph.SetConvOneDNN(false)()
			want := convRun(t, c, nil)
			what := []string{"y", "dx", "dw", "db"}
			for i := range want {
				if j, ok := within(got[i], want[i], 1e-5); !ok {
					t.Errorf("%s[%d] = %v, im2col gives %v (impls %v)", what[i], j, got[i][j], want[i][j], impls)
				}
			}
		})
	}
}

// within reports the first index where got and want differ by more than
// tol times want's largest magnitude.
func within(got, want []float32, tol float64) (int, bool) {
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		if math.Abs(float64(got[i])-float64(want[i])) > tol*scale {
			return i, false
		}
	}
	return -1, true
}

// TestIssue36ResNetNotOnGemm builds the convolutions of models/resnet's
// Small network at the benchmark's per-replica batches and fails if oneDNN
// runs any of them, or their gradients, on its gemm fallback (about 3x
// slower, and silent).
func TestIssue36ResNetNotOnGemm(t *testing.T) {
	if !graph.ConvOneDNNBuilt {
		t.Skip("this build has no oneDNN convolutions")
	}
	cfg := resnet.Small(10)
	for _, batch := range []int{64, 128} {
		g := graph.New(graph.Float32)
		type conv struct {
			h, ci, co, k, s int
		}
		h := 28
		convs := []conv{{h, 1, cfg.Widths[0], 3, cfg.StemStride}}
		h = (h + cfg.StemStride - 1) / cfg.StemStride
		in := cfg.Widths[0]
		for s, w := range cfg.Widths {
			for i := range cfg.Blocks {
				stride := 1
				if s > 0 && i == 0 {
					stride = 2
				}
				convs = append(convs, conv{h, in, w, 3, stride})
				if stride != 1 || in != w {
					convs = append(convs, conv{h, in, w, 1, stride})
				}
				h = (h + stride - 1) / stride
				convs = append(convs, conv{h, w, w, 3, 1})
				in = w
			}
		}
		var outs []*graph.Node
		for i, c := range convs {
			x := g.Placeholder(fmt.Sprintf("x%d", i), batch, c.h, c.h, c.ci)
			w := g.Placeholder(fmt.Sprintf("w%d", i), c.k, c.k, c.ci, c.co)
			y := graph.Conv2D(x, w, nil, c.s, c.s, graph.Same, graph.Linear)
			outs = append(append(outs, y), g.Gradients(graph.Sum(y), []*graph.Node{x, w})...)
		}
		impls := map[string]string{}
		restore := graph.ObserveConvs(func(name string, c *dnnl.Conv) { impls[name] = implName(c) })
		_, err := g.Compile(outs...)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if len(impls) != 3*len(convs) {
			t.Errorf("batch %d: %d conv kernels, want %d", batch, len(impls), 3*len(convs))
		}
		for name, impl := range impls {
			if strings.HasPrefix(impl, "gemm") || impl == "im2col" {
				t.Errorf("batch %d: %s runs on %q, want one of oneDNN's direct kernels", batch, name, impl)
			}
		}
	}
}

// TestIssue36BadConvNamesLayerAndShapes: a convolution that cannot be built
// is an error naming its layer (scope) and both shapes, with or without
// oneDNN.
func TestIssue36BadConvNamesLayerAndShapes(t *testing.T) {
	for _, onednn := range []bool{true, false} {
		restore := graph.SetConvOneDNN(onednn)
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 2, 4, 4, 3)
		for _, tc := range []struct {
			name string
			w    []int
			pad  graph.Padding
		}{
			{"channels", []int{3, 3, 2, 8}, graph.Same},
			{"kernel larger than valid input", []int{5, 3, 3, 8}, graph.Valid},
		} {
			w := g.Placeholder("w_"+tc.name, tc.w...)
			undo := g.SetScope("block_3/conv_1")
			err := func() (err error) {
				defer func() { err, _ = recover().(error) }()
				graph.Conv2D(x, w, nil, 1, 1, tc.pad, graph.Linear)
				return nil
			}()
			undo()
			if err == nil || !errors.Is(err, graph.ErrShape) {
				t.Errorf("oneDNN %v, %s: got %v, want an error wrapping ErrShape", onednn, tc.name, err)
				continue
			}
			for _, part := range []string{"block_3/conv_1", "[2 4 4 3]", fmt.Sprint(tc.w)} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("oneDNN %v, %s: %q does not name %s", onednn, tc.name, err, part)
				}
			}
		}
		restore()
	}
}

// TestIssue36ConvBackend: `gotrain version` says whether convolutions use
// oneDNN, from ConvBackend.
func TestIssue36ConvBackend(t *testing.T) {
	got, oneDNN := graph.ConvBackend()
	if oneDNN != graph.ConvOneDNNBuilt || strings.HasPrefix(got, "oneDNN ") != oneDNN {
		t.Errorf("ConvBackend() = %q, %v in a build where oneDNN convolutions are %v", got, oneDNN, graph.ConvOneDNNBuilt)
	}
}

// implName is the implementation oneDNN picked for c, or "im2col" where it
// refused the shape (c nil).
func implName(c *dnnl.Conv) string {
	if c == nil {
		return "im2col"
	}
	return c.Impl()
}
