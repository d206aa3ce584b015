package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// geom is a sliding window computed the way TensorFlow documents it,
// independently of the package's code.
type geom struct{ oh, ow, padT, padL int }

func geomOf(h, w, kh, kw, sh, sw int, pad graph.Padding) geom {
	return dilatedGeomOf(h, w, kh, kw, sh, sw, 1, 1, pad)
}

// dilatedGeomOf is geomOf for a window whose taps are dh, dw apart: it
// spans (k-1)·d+1 pixels.
func dilatedGeomOf(h, w, kh, kw, sh, sw, dh, dw int, pad graph.Padding) geom {
	kh, kw = (kh-1)*dh+1, (kw-1)*dw+1
	switch pad {
	case graph.Valid:
		return geom{oh: (h-kh)/sh + 1, ow: (w-kw)/sw + 1}
	case graph.Causal:
		// Keras: pad (k-1)·d before, then a valid window.
		return geom{oh: (h+kh-1-kh)/sh + 1, ow: (w+kw-1-kw)/sw + 1, padT: kh - 1, padL: kw - 1}
	}
	oh := int(math.Ceil(float64(h) / float64(sh)))
	ow := int(math.Ceil(float64(w) / float64(sw)))
	return geom{oh: oh, ow: ow,
		padT: max((oh-1)*sh+kh-h, 0) / 2,
		padL: max((ow-1)*sw+kw-w, 0) / 2}
}

// convRef is the direct 7-loop convolution.
func convRef(b, h, w, ci, kh, kw, co, sh, sw int, pad graph.Padding, act graph.Activation) func(in [][]float64) []float64 {
	return dilatedConvRef(b, h, w, ci, kh, kw, co, sh, sw, 1, 1, pad, act)
}

// dilatedConvRef is convRef with the kernel's taps dh rows, dw columns apart.
func dilatedConvRef(b, h, w, ci, kh, kw, co, sh, sw, dh, dw int, pad graph.Padding, act graph.Activation) func(in [][]float64) []float64 {
	f := actRef(act)
	return func(in [][]float64) []float64 {
		g := dilatedGeomOf(h, w, kh, kw, sh, sw, dh, dw, pad)
		out := make([]float64, b*g.oh*g.ow*co)
		for n := 0; n < b; n++ {
			for oy := 0; oy < g.oh; oy++ {
				for ox := 0; ox < g.ow; ox++ {
					for o := 0; o < co; o++ {
						s := 0.0
						if len(in) > 2 {
							s = in[2][o]
						}
						for ki := 0; ki < kh; ki++ {
							for kj := 0; kj < kw; kj++ {
								iy, ix := oy*sh-g.padT+ki*dh, ox*sw-g.padL+kj*dw
								if iy < 0 || iy >= h || ix < 0 || ix >= w {
									continue
								}
								for c := 0; c < ci; c++ {
									s += in[0][((n*h+iy)*w+ix)*ci+c] * in[1][((ki*kw+kj)*ci+c)*co+o]
								}
							}
						}
						out[((n*g.oh+oy)*g.ow+ox)*co+o] = f(s)
					}
				}
			}
		}
		return out
	}
}

// poolRef reduces each window's pixels inside the image with f: the max
// (maxOf) or the mean (meanOf).
func poolRef(b, h, w, c, kh, kw, sh, sw int, pad graph.Padding, f func([]float64) float64) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		g := geomOf(h, w, kh, kw, sh, sw, pad)
		out := make([]float64, b*g.oh*g.ow*c)
		for n := 0; n < b; n++ {
			for oy := 0; oy < g.oh; oy++ {
				for ox := 0; ox < g.ow; ox++ {
					for ch := 0; ch < c; ch++ {
						var px []float64
						for ki := 0; ki < kh; ki++ {
							for kj := 0; kj < kw; kj++ {
								iy, ix := oy*sh-g.padT+ki, ox*sw-g.padL+kj
								if iy >= 0 && iy < h && ix >= 0 && ix < w {
									px = append(px, in[0][((n*h+iy)*w+ix)*c+ch])
								}
							}
						}
						out[((n*g.oh+oy)*g.ow+ox)*c+ch] = f(px)
					}
				}
			}
		}
		return out
	}
}

func maxOf(px []float64) float64 {
	m := math.Inf(-1)
	for _, v := range px {
		m = math.Max(m, v)
	}
	return m
}

func meanOf(px []float64) float64 {
	s := 0.0
	for _, v := range px {
		s += v
	}
	return s / float64(len(px))
}

// distinct draws values with gaps of at least 0.01 between any two, so a
// max-pool has no near-ties for the finite-difference stencil to cross.
func distinct(n int) func(r *rand.Rand, i int) float64 {
	var perm []int
	return func(r *rand.Rand, i int) float64 {
		if perm == nil || i == 0 {
			perm = r.Perm(n)
		}
		return float64(perm[i]-n/2) * 0.05
	}
}

func withZeroAt(k int) func(r *rand.Rand, i int) float64 {
	return func(r *rand.Rand, i int) float64 {
		if i == k {
			return 0
		}
		return 0.5 + r.Float64()
	}
}

type convCase struct {
	b, h, w, ci, kh, kw, co, sh, sw int
	pad                             graph.Padding
	act                             graph.Activation
}

func layerOpCases() []opCase {
	var cases []opCase
	for _, cc := range []convCase{
		{2, 5, 5, 3, 3, 3, 4, 1, 1, graph.Valid, graph.Linear},
		{1, 5, 4, 2, 3, 3, 2, 1, 1, graph.Same, graph.Tanh},
		{2, 6, 5, 2, 3, 2, 3, 2, 2, graph.Same, graph.Linear},
		{2, 7, 6, 3, 3, 3, 2, 2, 1, graph.Valid, graph.Sigmoid},
		{2, 3, 3, 4, 1, 1, 2, 1, 1, graph.Same, graph.Linear},
		{1, 4, 4, 1, 4, 4, 2, 3, 3, graph.Same, graph.GELU},
	} {
		cases = append(cases, opCase{
			name:   fmt.Sprintf("conv2d-%dx%d-s%dx%d-%v-%v", cc.kh, cc.kw, cc.sh, cc.sw, cc.pad, cc.act),
			shapes: [][]int{{cc.b, cc.h, cc.w, cc.ci}, {cc.kh, cc.kw, cc.ci, cc.co}, {cc.co}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.Conv2D(in[0], in[1], in[2], cc.sh, cc.sw, cc.pad, cc.act)
			},
			ref: convRef(cc.b, cc.h, cc.w, cc.ci, cc.kh, cc.kw, cc.co, cc.sh, cc.sw, cc.pad, cc.act),
		})
	}
	// Same padding for strides 1, 2 and 3 and dilations 1 and 2, on sizes
	// that divide by neither stride, so the padding is odd, even or none.
	for _, s := range []int{1, 2, 3} {
		for _, d := range []int{1, 2} {
			for _, pad := range []graph.Padding{graph.Same, graph.Valid, graph.Causal} {
				h, w := 7, 8
				cases = append(cases, opCase{
					name:   fmt.Sprintf("conv2d-dilated-3x2-s%d-d%d-%v", s, d, pad),
					shapes: [][]int{{2, h, w, 2}, {3, 2, 2, 3}, {3}},
					build: func(in []*graph.Node) *graph.Node {
						return graph.Conv2DDilated(in[0], in[1], in[2], s, s, d, d, pad, graph.Linear)
					},
					ref: dilatedConvRef(2, h, w, 2, 3, 2, 3, s, s, d, d, pad, graph.Linear),
				})
			}
		}
	}
	cases = append(cases, opCase{name: "conv2d-dilated-rect-s2x1-d1x3-same", shapes: [][]int{{1, 6, 9, 2}, {2, 3, 2, 2}},
		build: func(in []*graph.Node) *graph.Node {
			return graph.Conv2DDilated(in[0], in[1], nil, 2, 1, 1, 3, graph.Same, graph.ReLU)
		},
		ref: dilatedConvRef(1, 6, 9, 2, 2, 3, 2, 2, 1, 1, 3, graph.Same, graph.ReLU)})
	for _, pc := range []convCase{
		{b: 2, h: 4, w: 4, ci: 3, kh: 2, kw: 2, sh: 2, sw: 2, pad: graph.Valid},
		{b: 1, h: 5, w: 5, ci: 2, kh: 3, kw: 3, sh: 2, sw: 2, pad: graph.Same},
		{b: 2, h: 5, w: 4, ci: 2, kh: 2, kw: 2, sh: 1, sw: 1, pad: graph.Valid},
		{b: 1, h: 3, w: 5, ci: 1, kh: 2, kw: 3, sh: 2, sw: 1, pad: graph.Same},
		{b: 1, h: 7, w: 8, ci: 2, kh: 3, kw: 3, sh: 3, sw: 3, pad: graph.Same},
	} {
		cases = append(cases, opCase{
			name:   fmt.Sprintf("avg_pool2d-%dx%d-s%dx%d-%v", pc.kh, pc.kw, pc.sh, pc.sw, pc.pad),
			shapes: [][]int{{pc.b, pc.h, pc.w, pc.ci}},
			build: func(in []*graph.Node) *graph.Node {
				return graph.AvgPool2D(in[0], pc.kh, pc.kw, pc.sh, pc.sw, pc.pad)
			},
			ref: poolRef(pc.b, pc.h, pc.w, pc.ci, pc.kh, pc.kw, pc.sh, pc.sw, pc.pad, meanOf),
		})
	}
	cases = append(cases, opCase{name: "conv2d-no-bias", shapes: [][]int{{1, 4, 4, 2}, {2, 2, 2, 3}},
		build: func(in []*graph.Node) *graph.Node {
			return graph.Conv2D(in[0], in[1], nil, 1, 1, graph.Valid, graph.Linear)
		},
		ref: convRef(1, 4, 4, 2, 2, 2, 3, 1, 1, graph.Valid, graph.Linear)})
	for _, pc := range []convCase{
		{b: 2, h: 4, w: 4, ci: 3, kh: 2, kw: 2, sh: 2, sw: 2, pad: graph.Valid},
		{b: 1, h: 5, w: 5, ci: 2, kh: 3, kw: 3, sh: 2, sw: 2, pad: graph.Same},
		{b: 2, h: 5, w: 4, ci: 2, kh: 2, kw: 2, sh: 1, sw: 1, pad: graph.Valid},
		{b: 1, h: 3, w: 5, ci: 1, kh: 2, kw: 3, sh: 2, sw: 1, pad: graph.Same},
	} {
		n := pc.b * pc.h * pc.w * pc.ci
		cases = append(cases, opCase{
			name:   fmt.Sprintf("max_pool2d-%dx%d-s%dx%d-%v", pc.kh, pc.kw, pc.sh, pc.sw, pc.pad),
			shapes: [][]int{{pc.b, pc.h, pc.w, pc.ci}},
			gen:    []func(*rand.Rand, int) float64{distinct(n)},
			build: func(in []*graph.Node) *graph.Node {
				return graph.MaxPool2D(in[0], pc.kh, pc.kw, pc.sh, pc.sw, pc.pad)
			},
			ref: poolRef(pc.b, pc.h, pc.w, pc.ci, pc.kh, pc.kw, pc.sh, pc.sw, pc.pad, maxOf),
		})
	}
	cases = append(cases,
		opCase{name: "gather", shapes: [][]int{{5, 3}, {2, 4}},
			gen:   []func(*rand.Rand, int) float64{nil, classes(5)},
			diff:  []bool{true, false},
			build: func(in []*graph.Node) *graph.Node { return graph.Gather(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				var out []float64
				for _, id := range in[1] {
					out = append(out, in[0][int(id)*3:int(id)*3+3]...)
				}
				return out
			}},
		opCase{name: "masked_sum-rank3", shapes: [][]int{{4, 3, 2}, {4}},
			gen:   []func(*rand.Rand, int) float64{nil, withZeroAt(1)},
			build: func(in []*graph.Node) *graph.Node { return graph.MaskedSum(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 2)
				for b := 0; b < 4; b++ {
					for k := 0; k < 3; k++ {
						for c := 0; c < 2; c++ {
							out[c] += in[1][b] * in[0][(b*3+k)*2+c]
						}
					}
				}
				return out
			}},
		// 4 channels take loops.AccRowsTo's vector loop in float32, and 5
		// positions a partial last copy in masked_sum_grad.
		opCase{name: "masked_sum-rank4", shapes: [][]int{{3, 5, 1, 4}, {3}},
			gen:   []func(*rand.Rand, int) float64{nil, withZeroAt(1)},
			build: func(in []*graph.Node) *graph.Node { return graph.MaskedSum(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 4)
				for i, v := range in[0] {
					out[i%4] += in[1][i/20] * v
				}
				return out
			}},
		opCase{name: "masked_sum-rank2", shapes: [][]int{{3, 5}, {3}},
			gen:   []func(*rand.Rand, int) float64{nil, withZeroAt(2)},
			build: func(in []*graph.Node) *graph.Node { return graph.MaskedSum(in[0], in[1]) },
			ref: func(in [][]float64) []float64 {
				out := make([]float64, 5)
				for b := 0; b < 3; b++ {
					for c := 0; c < 5; c++ {
						out[c] += in[1][b] * in[0][b*5+c]
					}
				}
				return out
			}},
		opCase{name: "dropout-rate0", shapes: [][]int{{3, 4}, {2}},
			gen:   []func(*rand.Rand, int) float64{nil, func(*rand.Rand, int) float64 { return 0 }},
			diff:  []bool{true, false},
			build: func(in []*graph.Node) *graph.Node { return graph.Dropout(in[0], in[1], 0, 1, 2) },
			ref:   elementwise(func(x float64) float64 { return x })},
	)
	return cases
}

// TestDropoutGradient: the gradient of Σ w·Dropout(x) is w times the mask.
func TestDropoutGradient(t *testing.T) {
	g := graph.New(graph.Float64)
	x, w := g.Placeholder("x", 50), g.Placeholder("w", 50)
	ctr := graph.NewVariable("ctr", []int{2}, graph.Float64, []float64{5, 1})
	step := g.Var(ctr)
	y := graph.Dropout(x, step, 0.3, 7, 9)
	mask := graph.DropoutMask(step, []int{50}, 0.3, 7, 9)
	loss := graph.Sum(graph.Mul(y, w))
	dx := g.Gradients(loss, []*graph.Node{x})[0]
	p, err := g.Compile(loss, dx, mask, y)
	if err != nil {
		t.Fatal(err)
	}
	xv, wv := make([]float64, 50), make([]float64, 50)
	for i := range xv {
		xv[i], wv[i] = float64(i)-20, 0.5+float64(i%3)
	}
	p.Feed(x, xv)
	p.Feed(w, wv)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	m, got, out := p.Value(mask), p.Value(dx), p.Value(y)
	for i := range m {
		if want := wv[i] * m[i]; got[i] != want {
			t.Errorf("dx[%d] = %v, want %v", i, got[i], want)
		}
		if want := xv[i] * m[i]; out[i] != want {
			t.Errorf("y[%d] = %v, want %v", i, out[i], want)
		}
	}
}

// TestLayerOpShapes checks the output shapes of the layer ops.
func TestLayerOpShapes(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 3, 28, 28, 1)
	cases := []struct {
		name string
		n    *graph.Node
		want string
	}{
		{"conv same", graph.Conv2D(x, g.Placeholder("w", 3, 3, 1, 8), nil, 1, 1, graph.Same, graph.ReLU), "[3 28 28 8]"},
		{"conv valid", graph.Conv2D(x, g.Placeholder("w2", 5, 5, 1, 4), nil, 1, 1, graph.Valid, graph.Linear), "[3 24 24 4]"},
		{"conv stride", graph.Conv2D(x, g.Placeholder("w3", 3, 3, 1, 2), nil, 2, 2, graph.Same, graph.Linear), "[3 14 14 2]"},
		{"pool", graph.MaxPool2D(x, 2, 2, 2, 2, graph.Valid), "[3 14 14 1]"},
		{"pool odd same", graph.MaxPool2D(g.Placeholder("o", 1, 5, 5, 2), 2, 2, 2, 2, graph.Same), "[1 3 3 2]"},
		{"avg pool stride 3 same", graph.AvgPool2D(x, 3, 3, 3, 3, graph.Same), "[3 10 10 1]"},
		{"conv dilated valid", graph.Conv2DDilated(x, g.Placeholder("w4", 3, 3, 1, 2), nil, 1, 1, 2, 2, graph.Valid, graph.Linear), "[3 24 24 2]"},
		{"conv dilated same stride 3", graph.Conv2DDilated(x, g.Placeholder("w5", 3, 3, 1, 2), nil, 3, 3, 2, 2, graph.Same, graph.Linear), "[3 10 10 2]"},
		{"gather", graph.Gather(g.Placeholder("t", 10, 4), g.Placeholder("ids", 3, 7)), "[3 7 4]"},
		{"masked sum", graph.MaskedSum(x, g.Placeholder("m", 3)), "[1]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(c.n.Shape()); got != c.want {
			t.Errorf("%s: shape %s, want %s", c.name, got, c.want)
		}
	}
}

func TestLayerOpShapeErrors(t *testing.T) {
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", 2, 4, 4, 3)
	checkShapeErrors(t, []shapeErrCase{
		{"conv rank", func() {
			graph.Conv2D(g.Placeholder("v", 2, 3), g.Placeholder("w", 1, 1, 3, 1), nil, 1, 1, graph.Valid, graph.Linear)
		},
			"graph: conv2d: want an NHWC input [batch, height, width, channels], got [2 3]"},
		{"conv channels", func() { graph.Conv2D(x, g.Placeholder("w", 3, 3, 2, 1), nil, 1, 1, graph.Same, graph.Linear) },
			"graph: conv2d: want an input of 2 channels for kernel [3 3 2 1], got input [2 4 4 3]"},
		{"conv too small", func() { graph.Conv2D(x, g.Placeholder("w", 5, 5, 3, 1), nil, 1, 1, graph.Valid, graph.Linear) },
			"graph: conv2d: want an input at least as large as kernel [5 5 3 1] (dilations 1x1) for valid padding, got input [2 4 4 3]"},
		{"pool stride", func() { graph.MaxPool2D(x, 2, 2, 0, 1, graph.Valid) },
			"graph: max_pool2d: want window, strides and dilations ≥ 1, got window 2x2, strides 0x1, dilations 1x1"},
		{"conv dilation", func() {
			graph.Conv2DDilated(x, g.Placeholder("w", 3, 3, 3, 1), nil, 1, 1, 0, 1, graph.Same, graph.Linear)
		},
			"graph: conv2d: want window, strides and dilations ≥ 1, got window 3x3, strides 1x1, dilations 0x1"},
		{"conv dilated too small", func() {
			graph.Conv2DDilated(x, g.Placeholder("w", 2, 2, 3, 1), nil, 1, 1, 4, 1, graph.Valid, graph.Linear)
		},
			"graph: conv2d: want an input at least as large as kernel [2 2 3 1] (dilations 4x1) for valid padding, got input [2 4 4 3]"},
		{"avg pool rank", func() { graph.AvgPool2D(g.Placeholder("v", 2, 3), 2, 2, 2, 2, graph.Valid) },
			"graph: avg_pool2d: want an NHWC input [batch, height, width, channels], got [2 3]"},
		{"pool padding", func() { graph.MaxPool2D(x, 2, 2, 1, 1, graph.Padding(7)) },
			"graph: max_pool2d: want padding Valid, Same or Causal, got Padding(7)"},
		{"gather table", func() { graph.Gather(x, g.Placeholder("ids", 2)) },
			"graph: gather: want a table [rows, width], got [2 4 4 3]"},
		{"dropout rate", func() { graph.DropoutMask(g.Placeholder("s", 2), []int{3}, 1, 0, 0) },
			"graph: dropout_mask: want a rate in [0,1), got 1"},
		{"dropout counter", func() { graph.DropoutMask(g.Placeholder("s", 3), []int{3}, 0.5, 0, 0) },
			"graph: dropout_mask: want a counter of 2 elements, got [3]"},
		{"masked sum", func() { graph.MaskedSum(x, g.Placeholder("m", 3)) },
			"graph: masked_sum: want x [batch, …, channels] and weights [batch], got [2 4 4 3] and [3]"},
	})
}

func TestGatherIndexError(t *testing.T) {
	g := graph.New(graph.Float64)
	table, ids := g.Placeholder("t", 3, 2), g.Placeholder("ids", 2)
	p, err := g.Compile(graph.Gather(table, ids))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{3, -1, 1.5} {
		p.Feed(ids, []float64{0, bad})
		err := p.Run()
		var ie *graph.IndexError
		if !errors.As(err, &ie) || ie.Pos != 1 || ie.Value != bad || ie.Rows != 3 {
			t.Errorf("id %v: Run = %v, want an IndexError at position 1", bad, err)
		}
	}
}

// TestDropoutMask: the same counter gives the same mask, another counter or
// stream another mask, the rate holds statistically and kept elements are
// scaled by 1/(1-rate).
func TestDropoutMask(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		for _, rate := range []float64{0.1, 0.5, 0.8} {
			t.Run(fmt.Sprintf("%v/rate=%v", dt, rate), func(t *testing.T) {
				const n = 20000
				ctr := graph.NewVariable("counter", []int{2}, dt, nil)
				g := graph.New(dt)
				step := g.Var(ctr)
				a := graph.DropoutMask(step, []int{n}, rate, 1, 0)
				b := graph.DropoutMask(step, []int{n}, rate, 1, 1)
				p, err := g.Compile(a, b)
				if err != nil {
					t.Fatal(err)
				}
				run := func() ([]float64, []float64) {
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
					return p.Value(a), p.Value(b)
				}
				a0, b0 := run()
				a0again, _ := run()
				graph.AdvanceCounter(ctr)
				a1, _ := run()
				dropped := 0
				for i, v := range a0 {
					switch {
					case v == 0:
						dropped++
					case math.Abs(v-1/(1-rate)) > 1e-6:
						t.Fatalf("element %d = %v, want 0 or %v", i, v, 1/(1-rate))
					}
				}
				// Binomial: 5 standard deviations.
				if sd := math.Sqrt(n * rate * (1 - rate)); math.Abs(float64(dropped)-n*rate) > 5*sd {
					t.Errorf("dropped %d of %d, want about %.0f", dropped, n, n*rate)
				}
				if !slices.Equal(a0, a0again) {
					t.Error("same counter: masks differ")
				}
				if slices.Equal(a0, a1) {
					t.Error("next counter: same mask")
				}
				if slices.Equal(a0, b0) {
					t.Error("other stream: same mask")
				}
				if got := graph.CounterValue(ctr); got != 1 {
					t.Errorf("CounterValue = %d, want 1", got)
				}
			})
		}
	}
}

func TestCounterCarries(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		v := graph.NewVariable("c", []int{2}, dt, []float64{1<<24 - 1, 2})
		graph.AdvanceCounter(v)
		if got, want := graph.CounterValue(v), uint64(3<<24); got != want {
			t.Errorf("%v: counter %d, want %d", dt, got, want)
		}
	}
}

// group is a Collective for participants in one process: the last to arrive
// sums every buffer in participant order.
type group struct {
	n    int
	mu   sync.Mutex
	cond *sync.Cond
	bufs [][]float64
	gen  int
	in   int
}

func newGroup(n int) *group {
	g := &group{n: n, bufs: make([][]float64, n)}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// participant is group's Collective for one participant.
type participant struct {
	g  *group
	id int
}

// AllReduceF32 reduces in float64 through a copy: the test group holds
// float64 buffers only.
func (p participant) AllReduceF32(buf []float32) {
	b := make([]float64, len(buf))
	for i, v := range buf {
		b[i] = float64(v)
	}
	p.AllReduceF64(b)
	for i, v := range b {
		buf[i] = float32(v)
	}
}

func (p participant) AllReduceF64(buf []float64) {
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bufs[p.id] = buf
	g.in++
	gen := g.gen
	if g.in == g.n {
		sum := make([]float64, len(buf))
		for _, b := range g.bufs {
			for i, v := range b {
				sum[i] += v
			}
		}
		for _, b := range g.bufs {
			copy(b, sum)
		}
		g.in = 0
		g.gen++
		g.cond.Broadcast()
		return
	}
	for g.gen == gen {
		g.cond.Wait()
	}
}

// TestAllReduceGradient checks the differentiable all-reduce: n participants
// each compute loss_r = Σ w_r·tanh(x_r · mean_over_participants(x)); the sum
// of their gradients must equal the finite-difference gradient of Σ_r loss_r.
func TestAllReduceGradient(t *testing.T) {
	const n, d = 3, 4
	r := rand.New(rand.NewPCG(5, 6))
	xs := make([][]float64, n)
	ws := make([][]float64, n)
	for p := range xs {
		xs[p] = make([]float64, d)
		ws[p] = make([]float64, d)
		for i := range xs[p] {
			xs[p][i], ws[p][i] = r.NormFloat64(), r.NormFloat64()
		}
	}
	grp := newGroup(n)
	type part struct {
		p          *graph.Program
		x, w, loss *graph.Node
		grad       *graph.Node
	}
	parts := make([]part, n)
	for p := range parts {
		g := graph.New(graph.Float64)
		x, w := g.Placeholder("x", d), g.Placeholder("w", d)
		m := graph.AllReduce(x, participant{grp, p}, 1.0/n)
		loss := graph.Sum(graph.Mul(w, graph.Activate(graph.Mul(x, m), graph.Tanh)))
		grad := g.Gradients(loss, []*graph.Node{x})[0]
		prog, err := g.Compile(loss, grad)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(prog.Collectives()); got != 2 {
			t.Fatalf("program runs %d collectives, want 2 (forward and backward)", got)
		}
		parts[p] = part{p: prog, x: x, w: w, loss: loss, grad: grad}
	}
	runAll := func() float64 {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for p := range parts {
			parts[p].p.Feed(parts[p].x, xs[p])
			parts[p].p.Feed(parts[p].w, ws[p])
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[p] = parts[p].p.Run()
			}()
		}
		wg.Wait()
		total := 0.0
		for p := range parts {
			if errs[p] != nil {
				t.Fatal(errs[p])
			}
			total += parts[p].p.Scalar(parts[p].loss)
		}
		return total
	}
	runAll()
	analytic := make([][]float64, n)
	for p := range parts {
		analytic[p] = parts[p].p.Value(parts[p].grad)
	}
	const h = 1e-6
	for p := range xs {
		for i := range xs[p] {
			orig := xs[p][i]
			xs[p][i] = orig + h
			fp := runAll()
			xs[p][i] = orig - h
			fm := runAll()
			xs[p][i] = orig
			fd := (fp - fm) / (2 * h)
			if e := math.Abs(analytic[p][i]-fd) / math.Max(math.Abs(fd), 1e-2); e > 1e-6 {
				t.Errorf("participant %d: d total/d x[%d] = %.10g, finite difference %.10g (rel err %.2g)", p, i, analytic[p][i], fd, e)
			}
		}
	}
}

// TestConvNetAllocatesNothing: a conv, pool, batch-moments and dropout step
// with gradients runs without allocating.
func TestConvNetAllocatesNothing(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		g := graph.New(dt)
		// Small enough that pure-Go BLAS (-tags noopenblas) stays serial:
		// its parallel path starts goroutines, which allocate.
		x := g.Placeholder("x", 2, 4, 4, 2)
		mask := g.Placeholder("mask", 2)
		w := g.Var(graph.NewVariable("w", []int{3, 3, 2, 4}, dt, nil))
		emb := g.Var(graph.NewVariable("emb", []int{5, 4}, dt, nil))
		ctr := g.Var(graph.NewVariable("ctr", []int{2}, dt, nil))
		c := graph.Conv2D(x, w, nil, 1, 1, graph.Same, graph.ReLU)
		p := graph.MaxPool2D(c, 2, 2, 2, 2, graph.Valid)
		s := graph.MaskedSum(graph.Maximum(p, g.Const(0.1)), mask)
		e := graph.Gather(emb, g.Placeholder("ids", 3))
		loss := graph.Add(graph.Sum(graph.Dropout(s, ctr, 0.5, 1, 2)), graph.Sum(e))
		grads := g.Gradients(loss, []*graph.Node{w, emb})
		prog, err := g.Compile(append(grads, loss)...)
		if err != nil {
			t.Fatal(err)
		}
		if got := testing.AllocsPerRun(10, func() {
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
		}); got != 0 {
			t.Errorf("%v: Run allocates %v times per call, want 0", dt, got)
		}
	}
}
