package dnnl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refConv is the definition the primitives are checked against, in float64:
// y[n,oy,ox,k] = Σ x[n, oy·sh-pt+i·dh, ox·sw-pl+j·dw, c] · w[i,j,c,k].
// It calls f(xi, wi, yi) for every product that term sums.
func refConv(g Geometry, f func(xi, wi, yi int)) {
	for n := 0; n < g.N; n++ {
		for oy := 0; oy < g.OH; oy++ {
			for ox := 0; ox < g.OW; ox++ {
				for i := 0; i < g.KH; i++ {
					iy := oy*g.SH - g.PadT + i*g.DH
					if iy < 0 || iy >= g.H {
						continue
					}
					for j := 0; j < g.KW; j++ {
						ix := ox*g.SW - g.PadL + j*g.DW
						if ix < 0 || ix >= g.W {
							continue
						}
						for c := 0; c < g.C; c++ {
							for k := 0; k < g.K; k++ {
								f(((n*g.H+iy)*g.W+ix)*g.C+c, ((i*g.KW+j)*g.C+c)*g.K+k, ((n*g.OH+oy)*g.OW+ox)*g.K+k)
							}
						}
					}
				}
			}
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// near reports the first index where got and want differ by more than tol
// relative to want's largest magnitude.
func near(got []float32, want []float64, tol float64) (int, bool) {
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol*max(scale, 1e-30) {
			return i, false
		}
	}
	return -1, true
}

func TestConvAgainstDefinition(t *testing.T) {
	if !Available {
		t.Skip("built without oneDNN")
	}
	cases := []struct {
		name string
		g    Geometry
	}{
		{"3x3-s1-pad1", Geometry{N: 2, H: 7, W: 6, C: 3, K: 5, KH: 3, KW: 3, OH: 7, OW: 6, SH: 1, SW: 1, DH: 1, DW: 1, PadT: 1, PadL: 1}},
		{"3x3-s2-same-odd", Geometry{N: 3, H: 9, W: 11, C: 4, K: 16, KH: 3, KW: 3, OH: 5, OW: 6, SH: 2, SW: 2, DH: 1, DW: 1, PadT: 1, PadL: 1}},
		{"2x3-valid-leftover", Geometry{N: 1, H: 8, W: 7, C: 2, K: 3, KH: 2, KW: 3, OH: 3, OW: 3, SH: 3, SW: 2, DH: 1, DW: 1}},
		{"3x3-d2-causal", Geometry{N: 2, H: 6, W: 5, C: 3, K: 4, KH: 3, KW: 3, OH: 6, OW: 5, SH: 1, SW: 1, DH: 2, DW: 2, PadT: 4, PadL: 4}},
		{"1x1-s2", Geometry{N: 7, H: 5, W: 5, C: 16, K: 32, KH: 1, KW: 1, OH: 3, OW: 3, SH: 2, SW: 2, DH: 1, DW: 1}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range cases {
		g := tc.g
		x, w, b, dy := randSlice(r, g.inLen()), randSlice(r, g.wLen()), randSlice(r, g.K), randSlice(r, g.outLen())
		y, dx, dw := make([]float64, g.outLen()), make([]float64, g.inLen()), make([]float64, g.wLen())
		refConv(g, func(xi, wi, yi int) {
			y[yi] += float64(x[xi]) * float64(w[wi])
			dx[xi] += float64(dy[yi]) * float64(w[wi])
			dw[wi] += float64(x[xi]) * float64(dy[yi])
		})
		for i := range y {
			y[i] = max(0, y[i]+float64(b[i%g.K]))
		}
		for _, k := range []Kind{Forward, BackwardData, BackwardWeights} {
			c, err := New(k, g, k == Forward, k == Forward, 1)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var got []float32
			var want []float64
			switch k {
			case Forward:
				got, want = make([]float32, g.outLen()), y
				c.Forward(got, x, w, b)
			case BackwardData:
				got, want = make([]float32, g.inLen()), dx
				c.BackwardData(got, dy, w)
			default:
				got, want = make([]float32, g.wLen()), dw
				c.BackwardWeights(got, x, dy)
			}
			if i, ok := near(got, want, 1e-5); !ok {
				t.Errorf("%s %v (%s): element %d is %v, want %v", tc.name, k, c.Impl(), i, got[i], want[i])
			}
			if c.Impl() == "" {
				t.Errorf("%s %v: no implementation name", tc.name, k)
			}
		}
	}
}

func TestNewRejects(t *testing.T) {
	if !Available {
		t.Skip("built without oneDNN")
	}
	g := Geometry{N: 1, H: 4, W: 4, C: 1, K: 1, KH: 3, KW: 3, OH: 2, OW: 2, SH: 1, SW: 1, DH: 1, DW: 1}
	bad := g
	bad.SH = 0
	if _, err := New(Forward, bad, false, false, 1); err == nil || !strings.Contains(err.Error(), "stride") {
		t.Errorf("stride 0: got %v, want an error naming the stride", err)
	}
	if _, err := New(BackwardData, g, true, false, 1); err == nil {
		t.Errorf("bias on backward-data: got no error")
	}
	wrong := g
	wrong.OH = 5 // not what the padding and strides give
	if _, err := New(Forward, wrong, false, false, 1); err == nil {
		t.Errorf("inconsistent output size: got no error")
	}
}

func TestVersion(t *testing.T) {
	v := Version()
	if Available != strings.HasPrefix(v, "oneDNN ") {
		t.Errorf("Version() = %q with Available %v", v, Available)
	}
}

// TestFlopsAndTime: Flops counts a multiply and an add per product of the
// definition, none for taps on padding, and Time runs each kind of
// primitive with and without its reorders.
func TestFlopsAndTime(t *testing.T) {
	for _, g := range []Geometry{
		{N: 2, H: 9, W: 8, C: 3, K: 5, KH: 3, KW: 2, OH: 4, OW: 7, SH: 2, SW: 1, DH: 1, DW: 1},                   // Valid
		{N: 1, H: 4, W: 4, C: 2, K: 3, KH: 3, KW: 3, OH: 4, OW: 4, SH: 1, SW: 1, DH: 1, DW: 1, PadT: 1, PadL: 1}, // Same
		{N: 3, H: 7, W: 9, C: 1, K: 2, KH: 3, KW: 3, OH: 4, OW: 5, SH: 2, SW: 2, DH: 2, DW: 2, PadT: 2, PadL: 1}, // dilated, strided
	} {
		products := 0
		refConv(g, func(_, _, _ int) { products++ })
		if got, want := g.Flops(), 2*float64(products); got != want {
			t.Errorf("%v: Flops() = %v, want %v", g, got, want)
		}
	}
	if !Available {
		return
	}
	g := Geometry{N: 2, H: 9, W: 8, C: 3, K: 5, KH: 3, KW: 2, OH: 4, OW: 7, SH: 2, SW: 1, DH: 1, DW: 1}
	for _, kind := range []Kind{Forward, BackwardData, BackwardWeights} {
		c, err := New(kind, g, false, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		if call, prim := c.Time(3); call <= 0 || prim <= 0 {
			t.Errorf("%v: Time = %v, %v; want both measured", kind, call, prim)
		}
	}
}

// TestCallsAllocateNothing: the three calls run once per convolution per
// step, so they allocate nothing.
func TestCallsAllocateNothing(t *testing.T) {
	if !Available {
		t.Skip("no oneDNN in this build")
	}
	g := Geometry{N: 2, H: 9, W: 8, C: 3, K: 5, KH: 3, KW: 2, OH: 4, OW: 7, SH: 2, SW: 1, DH: 1, DW: 1}
	x, w, y := make([]float32, g.inLen()), make([]float32, g.wLen()), make([]float32, g.outLen())
	for _, kind := range []Kind{Forward, BackwardData, BackwardWeights} {
		c, err := New(kind, g, false, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		call := map[Kind]func(){
			Forward:         func() { c.Forward(y, x, w, nil) },
			BackwardData:    func() { c.BackwardData(x, y, w) },
			BackwardWeights: func() { c.BackwardWeights(w, x, y) },
		}[kind]
		if got := testing.AllocsPerRun(10, call); got != 0 {
			t.Errorf("%v: %v allocations a call, want 0", kind, got)
		}
	}
}
