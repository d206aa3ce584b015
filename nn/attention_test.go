package nn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
)

// randomValues returns n seeded values in [-1, 1).
func randomValues(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return v
}

// TestNormLayers checks LayerNormalization and RMSNormalization against a
// loop over the rows, and their gradients (x, gamma, beta) by finite
// differences, on inputs of rank 2 and 3 with gamma and beta moved off
// their initial ones and zeros.
func TestNormLayers(t *testing.T) {
	for _, c := range []struct {
		name  string
		layer func() *nn.NormLayer
		shape []int
	}{
		{"layer-2d", func() *nn.NormLayer { return nn.LayerNormalization(nn.NormEpsilon(1e-5)) }, []int{3, 5}},
		{"layer-3d", func() *nn.NormLayer { return nn.LayerNormalization() }, []int{2, 3, 7}},
		{"layer-nobias", func() *nn.NormLayer { return nn.LayerNormalization(nn.WithoutBias()) }, []int{2, 3, 4}},
		{"rms-3d", func() *nn.NormLayer { return nn.RMSNormalization() }, []int{2, 4, 6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStrategy(t)
			g := graph.New(graph.Float64)
			x := g.Placeholder("x", c.shape...)
			var l *nn.NormLayer
			var y *nn.Tensor
			s.Scope(func() { l = c.layer(); y = l.Call(nil, x, true) })
			vars := l.Variables()
			for i, v := range vars {
				vals := randomValues(uint64(10+i), v.Len())
				for j := range vals {
					vals[j] += 1 - float64(i) // gamma near 1, beta near 0
				}
				v.Assign(vals)
			}
			xv := randomValues(3, y.Len())
			p := newGradProgram(t, y, x, xv, vars...)
			p.eval(t)
			got := p.prog.Value(y)
			w := c.shape[len(c.shape)-1]
			gamma := vars[0].Value()
			var beta []float64
			if len(vars) > 1 {
				beta = vars[1].Value()
			}
			for r := 0; r < len(xv); r += w {
				row := xv[r : r+w]
				var mean, sq float64
				for _, v := range row {
					mean += v / float64(w)
					sq += v * v / float64(w)
				}
				center, variance := mean, sq-mean*mean
				if c.name == "rms-3d" {
					center, variance = 0, sq
				}
				for j, v := range row {
					want := (v - center) / math.Sqrt(variance+l.Epsilon()) * gamma[j]
					if beta != nil {
						want += beta[j]
					}
					if math.Abs(got[r+j]-want) > 1e-10 {
						t.Fatalf("y[%d] = %v, want %v", r+j, got[r+j], want)
					}
				}
			}
			p.check(t, vars...)
		})
	}
}

// TestMultiHeadAttention checks the layer against attention written out
// with a loop (per batch, head and query: scores, causal mask, softmax,
// weighted values, then the output projection), with and without the
// causal mask and biases, and its gradients (every kernel and bias, and x)
// by finite differences; Attend with key and value of another length.
func TestMultiHeadAttention(t *testing.T) {
	const b, tt, c, heads, kd = 2, 4, 6, 2, 3
	// selfAttention builds the layer with opts, calls it on x, compares
	// its gradients with finite differences and returns how many outputs
	// differ from attentionRef.
	selfAttention := func(t *testing.T, training, causal, bias bool, opts ...nn.LayerOption) int {
		t.Helper()
		s := newStrategy(t)
		g := graph.New(graph.Float64)
		x := g.Placeholder("x", b, tt, c)
		if causal {
			opts = append(opts, nn.WithCausalMask())
		}
		if !bias {
			opts = append(opts, nn.WithoutBias())
		}
		var l *nn.MultiHeadAttentionLayer
		var y *nn.Tensor
		s.Scope(func() { l = nn.MultiHeadAttention(heads, kd, opts...); y = l.Call(nil, x, training) })
		vars := l.TrainableVariables() // without dropout's step counter
		for i, v := range vars {
			v.Assign(randomValues(uint64(20+i), v.Len()))
		}
		xv := randomValues(4, b*tt*c)
		p := newGradProgram(t, y, x, xv, vars...)
		p.eval(t)
		want := attentionRef(xv, vars, b, tt, c, heads, kd, causal, bias)
		differ := 0
		for i, v := range p.prog.Value(y) {
			if math.Abs(v-want[i]) > 1e-10 {
				differ++
			}
		}
		p.check(t, vars...)
		return differ
	}
	for _, causal := range []bool{false, true} {
		for _, bias := range []bool{false, true} {
			t.Run(fmt.Sprintf("causal=%v,bias=%v", causal, bias), func(t *testing.T) {
				if n := selfAttention(t, true, causal, bias); n > 0 {
					t.Errorf("%d outputs differ from attention by loops", n)
				}
			})
		}
	}
	t.Run("dropout", func(t *testing.T) {
		// With attention dropout, Call attends through the composed ops
		// while training (the weights are dropped) and through
		// graph.SelfAttention otherwise; both are checked.
		for _, training := range []bool{false, true} {
			n := selfAttention(t, training, true, true, nn.AttentionDropout(0.5), nn.WithSeed(3))
			if training != (n > 0) {
				t.Errorf("training=%v: %d outputs differ from attention without dropout", training, n)
			}
		}
	})
	t.Run("attend", func(t *testing.T) {
		s := newStrategy(t)
		g := graph.New(graph.Float64)
		q := g.Placeholder("q", b, 3, c)
		kv := g.Placeholder("kv", b, 5, c)
		var l *nn.MultiHeadAttentionLayer
		var y *nn.Tensor
		s.Scope(func() { l = nn.MultiHeadAttention(heads, kd); y = l.Attend(nil, q, kv, nil, false) })
		if got := fmt.Sprint(y.Shape()); got != "[2 3 6]" {
			t.Fatalf("Attend shape %s, want [2 3 6]", got)
		}
		p := newGradProgram(t, y, q, randomValues(5, b*3*c), l.Variables()...)
		p.prog.Feed(kv, randomValues(6, b*5*c))
		p.check(t, l.Variables()...)
	})
}

// attentionRef is multi-head attention by loops; vars are the layer's in
// Variables order (q, [qb], k, [kb], v, [vb], o, [ob]).
func attentionRef(x []float64, vars []*nn.Variable, b, t, c, heads, kd int, causal, bias bool) []float64 {
	get := func(i int) []float64 { return vars[i].Value() }
	var wq, bq, wk, bk, wv, bv, wo, bo []float64
	if bias {
		wq, bq, wk, bk, wv, bv, wo, bo = get(0), get(1), get(2), get(3), get(4), get(5), get(6), get(7)
	} else {
		wq, wk, wv, wo = get(0), get(1), get(2), get(3)
	}
	hd := heads * kd
	proj := func(w, bb []float64) []float64 { return denseRef(x, w, bb, b*t, c, hd) }
	q, k, v := proj(wq, bq), proj(wk, bk), proj(wv, bv)
	joined := make([]float64, b*t*hd)
	for bi := range b {
		for h := range heads {
			for i := range t {
				scores := make([]float64, t)
				top := math.Inf(-1)
				for j := range t {
					if causal && j > i {
						scores[j] = math.Inf(-1)
						continue
					}
					for d := range kd {
						scores[j] += q[(bi*t+i)*hd+h*kd+d] * k[(bi*t+j)*hd+h*kd+d]
					}
					scores[j] /= math.Sqrt(float64(kd))
					top = math.Max(top, scores[j])
				}
				var sum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - top)
					sum += scores[j]
				}
				for d := range kd {
					var acc float64
					for j := range t {
						acc += scores[j] / sum * v[(bi*t+j)*hd+h*kd+d]
					}
					joined[(bi*t+i)*hd+h*kd+d] = acc
				}
			}
		}
	}
	return denseRef(joined, wo, bo, b*t, hd, c)
}

// denseRef is x [rows, in] · w [in, out] + bias (nil: none), by loops.
func denseRef(x, w, bias []float64, rows, in, out int) []float64 {
	y := make([]float64, rows*out)
	for r := range rows {
		for j := range out {
			if bias != nil {
				y[r*out+j] = bias[j]
			}
			for i := range in {
				y[r*out+j] += x[r*in+i] * w[i*out+j]
			}
		}
	}
	return y
}

// TestAttentionLayerMisuse: the errors name the layer and the shapes.
func TestAttentionLayerMisuse(t *testing.T) {
	s := newStrategy(t)
	for _, c := range []struct {
		name string
		fn   func(g *graph.Graph)
		kind error
		want string
	}{
		{"rank", func(g *graph.Graph) {
			nn.MultiHeadAttention(2, 4, nn.Named("mha")).Call(nil, g.Placeholder("x", 2, 8), true)
		},
			nn.ErrShape, "nn: mha: x: want input shape [batch, time, width], got [2 8]"},
		{"width", func(g *graph.Graph) {
			l := nn.MultiHeadAttention(2, 4, nn.Named("mha2"))
			l.Call(nil, g.Placeholder("x", 2, 3, 8), true)
			l.Call(nil, g.Placeholder("y", 2, 3, 6), true)
		}, nn.ErrShape, "nn: mha2: want x of width 8, got [2 3 6]"},
		{"attend", func(g *graph.Graph) {
			nn.MultiHeadAttention(2, 4, nn.Named("mha3")).Attend(nil, g.Placeholder("q", 2, 3, 8), g.Placeholder("v", 3, 5, 8), nil, true)
		}, nn.ErrShape, "nn: mha3: want query, key and value of one batch and key and value of one length, got [2 3 8], [3 5 8] and [3 5 8]"},
		{"heads", func(*graph.Graph) { nn.MultiHeadAttention(0, 4) }, nn.ErrUsage, "nn: MultiHeadAttention: want heads ≥ 1 and keyDim ≥ 1, got 0 and 4"},
		{"norm width", func(g *graph.Graph) {
			l := nn.LayerNormalization(nn.Named("ln"))
			l.Call(nil, g.Placeholder("x", 2, 8), true)
			l.Call(nil, g.Placeholder("y", 2, 6), true)
		}, nn.ErrShape, "nn: ln: want a last axis of width 8, got [2 6]"},
		{"rms option", func(*graph.Graph) { nn.RMSNormalization(nn.WithoutBias()) }, nn.ErrUsage,
			"nn: RMSNormalization: option WithoutBias does not apply; it takes [Named NormEpsilon]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, _ := panics(func() { s.Scope(func() { c.fn(graph.New(graph.Float64)) }) }).(error)
			if !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Errorf("panic %v, want %q wrapping %v", err, c.want, c.kind)
			}
		})
	}
}
