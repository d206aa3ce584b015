package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
)

// conv1DRef is the direct loop: out[b,t,f] = bias[f] + Σ_{j,c}
// x[b, t·s - left + j·d, c]·k[j,c,f], left the padding before the sequence
// as Keras computes it, and n the output length.
func conv1DRef(x, k, bias []float64, b, steps, c, size, f, s, d int, pad nn.Padding) (out []float64, n int) {
	span := (size-1)*d + 1
	left := 0
	switch pad {
	case nn.Valid:
		n = (steps-span)/s + 1
	case nn.Same:
		n = (steps + s - 1) / s
		left = max((n-1)*s+span-steps, 0) / 2
	case nn.Causal:
		n = (steps + s - 1) / s
		left = span - 1
	}
	out = make([]float64, b*n*f)
	for bi := range b {
		for t := range n {
			for o := range f {
				v := bias[o]
				for j := range size {
					ti := t*s - left + j*d
					if ti < 0 || ti >= steps {
						continue
					}
					for ci := range c {
						v += x[(bi*steps+ti)*c+ci] * k[(j*c+ci)*f+o]
					}
				}
				out[(bi*n+t)*f+o] = v
			}
		}
	}
	return out, n
}

// TestConv1D: Conv1D over [batch, time, channels] against the direct loop
// for each padding, stride and dilation, with finite-difference gradients
// of kernel, bias and input.
func TestConv1D(t *testing.T) {
	const b, steps, c, f, size = 2, 7, 3, 2, 3
	for _, pad := range []nn.Padding{nn.Valid, nn.Same, nn.Causal} {
		for _, sd := range [][2]int{{1, 1}, {2, 1}, {1, 2}, {3, 2}} {
			s, d := sd[0], sd[1]
			t.Run(fmt.Sprintf("%v-s%d-d%d", pad, s, d), func(t *testing.T) {
				st := newStrategy(t)
				g := graph.New(graph.Float64)
				x := g.Placeholder("x", b, steps, c)
				xv := data.RandomNormal(3, b, steps, c).Data
				var l *nn.Conv1DLayer
				var out *nn.Tensor
				st.Scope(func() {
					l = nn.Conv1D(f, size, nn.WithPadding(pad), nn.WithStrides(1, s), nn.WithDilation(1, d))
					out = l.Call(nil, x, true)
				})
				l.Bias().Assign([]float64{0.3, -0.2})
				want, n := conv1DRef(xv, l.Kernel().Value(), l.Bias().Value(), b, steps, c, size, f, s, d, pad)
				if got, ws := fmt.Sprint(out.Shape(), l.OutputShape([]int{b, steps, c})), fmt.Sprint([]int{b, n, f}); got != ws+" "+ws {
					t.Fatalf("output shape and OutputShape %s, want %s twice", got, ws)
				}
				p := newGradProgram(t, out, x, xv, l.Kernel(), l.Bias())
				p.eval(t)
				for i, v := range p.prog.Value(out) {
					if math.Abs(v-want[i]) > 1e-12 {
						t.Errorf("out[%d] = %v, want %v", i, v, want[i])
					}
				}
				p.check(t, l.Kernel(), l.Bias())
			})
		}
	}
}

// TestConv2DDilation: a dilated Conv2D layer's output shape for each
// padding and its gradients by finite differences (graph's op cases check
// its values against the direct loop).
func TestConv2DDilation(t *testing.T) {
	for _, c := range []struct {
		pad  nn.Padding
		s    int
		want string
	}{{nn.Valid, 1, "[2 2 3 2]"}, {nn.Same, 2, "[2 3 4 2]"}, {nn.Causal, 3, "[2 2 3 2]"}} {
		t.Run(c.pad.String(), func(t *testing.T) {
			st := newStrategy(t)
			g := graph.New(graph.Float64)
			x := g.Placeholder("x", 2, 6, 7, 2)
			xv := data.RandomNormal(4, 2, 6, 7, 2).Data
			var l *nn.Conv2DLayer
			var out *nn.Tensor
			st.Scope(func() {
				l = nn.Conv2D(2, 3, nn.WithDilation(2, 2), nn.WithStrides(c.s, c.s), nn.WithPadding(c.pad), nn.Tanh)
				out = l.Call(nil, x, true)
			})
			if got := fmt.Sprint(out.Shape(), l.OutputShape([]int{2, 6, 7, 2})); got != c.want+" "+c.want {
				t.Fatalf("output shape and OutputShape %s, want %s twice", got, c.want)
			}
			newGradProgram(t, out, x, xv, l.Kernel(), l.Bias()).check(t, l.Kernel(), l.Bias())
		})
	}
}

// TestPoolingLayers: AveragePooling2D and GlobalAveragePooling2D against
// direct means, with finite-difference gradients.
func TestPoolingLayers(t *testing.T) {
	const b, h, w, c = 2, 5, 4, 3
	xv := data.RandomNormal(5, b, h, w, c).Data
	at := func(bi, y, x, ch int) float64 { return xv[((bi*h+y)*w+x)*c+ch] }
	cases := []struct {
		name  string
		layer func() nn.Layer
		shape []int
		want  func(i int) float64
	}{
		{"global", func() nn.Layer { return nn.GlobalAveragePooling2D() }, []int{b, c}, func(i int) float64 {
			s := 0.0
			for y := range h {
				for x := range w {
					s += at(i/c, y, x, i%c)
				}
			}
			return s / (h * w)
		}},
		// 2x2 windows, stride 2, Same: 3x2 outputs, the last row's windows
		// hold the image's last row only.
		{"average-same", func() nn.Layer { return nn.AveragePooling2D(2, nn.WithPadding(nn.Same)) }, []int{b, 3, 2, c}, func(i int) float64 {
			ch, ox, oy, bi := i%c, (i/c)%2, (i/(c*2))%3, i/(c*6)
			s, n := 0.0, 0
			for y := 2 * oy; y < min(h, 2*oy+2); y++ {
				for x := 2 * ox; x < 2*ox+2; x++ {
					s += at(bi, y, x, ch)
					n++
				}
			}
			return s / float64(n)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newStrategy(t)
			g := graph.New(graph.Float64)
			x := g.Placeholder("x", b, h, w, c)
			var l nn.Layer
			var out *nn.Tensor
			st.Scope(func() {
				l = tc.layer()
				out = l.Call(nil, x, true)
			})
			if got, ws := fmt.Sprint(out.Shape(), l.OutputShape([]int{b, h, w, c})), fmt.Sprint(tc.shape); got != ws+" "+ws {
				t.Fatalf("output shape and OutputShape %s, want %s twice", got, ws)
			}
			p := newGradProgram(t, out, x, xv)
			p.eval(t)
			for i, v := range p.prog.Value(out) {
				if want := tc.want(i); math.Abs(v-want) > 1e-12 {
					t.Errorf("out[%d] = %v, want %v", i, v, want)
				}
			}
			p.check(t)
		})
	}
}

// TestAdd: the residual join adds, passes its gradient to both sides, and
// refuses two shapes, naming them and the scope it was called in.
func TestAdd(t *testing.T) {
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 3)
	c := g.Const(0.5, 2, 3)
	xv := []float64{1, 2, 3, 4, 5, 6}
	out := nn.Add(x, graph.Mul(x, c))
	p := newGradProgram(t, out, x, xv)
	p.eval(t)
	if got := fmt.Sprint(p.prog.Value(out)); got != "[1.5 3 4.5 6 7.5 9]" {
		t.Errorf("Add = %s, want [1.5 3 4.5 6 7.5 9]", got)
	}
	p.check(t)

	restore := g.SetScope("block_1")
	defer restore()
	v := panics(func() { nn.Add(x, g.Placeholder("y", 2, 4)) })
	err, ok := v.(error)
	want := "nn: block_1/add: want tensors of one shape for a residual, got [2 3] and [2 4]; project the shortcut to the branch's shape (a 1x1 Conv2D with its strides and filters)"
	if !ok || !errors.Is(err, nn.ErrUsage) || err.Error() != want {
		t.Errorf("panic %v, want %q wrapping ErrUsage", v, want)
	}
}
