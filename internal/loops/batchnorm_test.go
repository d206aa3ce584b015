package loops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// bnData is the inputs of the batch norm loops for pixels of c channels:
// random x, dy and residual, y of both signs (and zeros), per-channel
// vectors.
type bnData[T loops.Float] struct {
	x, dy, y, res, mean, a, beta, k, ka, kb []T
}

func newBNData[T loops.Float](pixels, c int, seed uint64) bnData[T] {
	r := rand.New(rand.NewPCG(seed, 36))
	vec := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = T(r.NormFloat64())
		}
		return v
	}
	d := bnData[T]{x: vec(pixels * c), dy: vec(pixels * c), y: vec(pixels * c), res: vec(pixels * c),
		mean: vec(c), a: vec(c), beta: vec(c), k: vec(c), ka: vec(c), kb: vec(c)}
	for i := 0; i < len(d.y); i += 5 {
		d.y[i] = 0
	}
	return d
}

// TestBatchNormLoops checks each batch norm loop against its doc
// comment's loop, in float32 and float64, with and without the ReLU mask
// and the residual, on channel counts below, at and above a vector's width.
func TestBatchNormLoops(t *testing.T) {
	for _, c := range []int{1, 3, 8, 16, 67} {
		t.Run(fmt.Sprint("float32/c=", c), func(t *testing.T) { testBatchNormLoops[float32](t, c, 1e-6) })
		t.Run(fmt.Sprint("float64/c=", c), func(t *testing.T) { testBatchNormLoops[float64](t, c, 1e-14) })
	}
}

func testBatchNormLoops[T loops.Float](t *testing.T, c int, tol float64) {
	const pixels = 13
	d := newBNData[T](pixels, c, uint64(c))
	check := func(what string, got []T, want []float64) {
		t.Helper()
		for i, w := range want {
			if math.Abs(float64(got[i])-w) > tol*math.Max(1, math.Abs(w)) {
				t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], w)
			}
		}
	}
	checkF := func(what string, got, want []float64) {
		t.Helper()
		for i, w := range want {
			if math.Abs(got[i]-w) > 1e-12*math.Max(1, math.Abs(w)) {
				t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], w)
			}
		}
	}
	// BatchNormSumsAdd, onto nonzero sums.
	sum, sq := make([]float64, c), make([]float64, c)
	wantSum, wantSq := make([]float64, c), make([]float64, c)
	for j := range c {
		sum[j], sq[j], wantSum[j], wantSq[j] = 1, 2, 1, 2
	}
	loops.BatchNormSumsAdd(sum, sq, 0.5, d.x)
	for i, v := range d.x {
		wantSum[i%c] += 0.5 * float64(v)
		wantSq[i%c] += 0.5 * float64(v) * float64(v)
	}
	checkF("sum", sum, wantSum)
	checkF("sq", sq, wantSq)
	for _, relu := range []bool{false, true} {
		for _, withRes := range []bool{false, true} {
			name := fmt.Sprintf("relu=%v/res=%v", relu, withRes)
			var res []T
			if withRes {
				res = d.res
			}
			got := make([]T, len(d.x))
			loops.BatchNormTo(got, d.x, res, d.mean, d.a, d.beta, relu)
			want := make([]float64, len(d.x))
			for i, v := range d.x {
				j := i % c
				z := (v-d.mean[j])*d.a[j] + d.beta[j]
				if withRes {
					z += res[i]
				}
				if relu && z < 0 {
					z = 0
				}
				want[i] = float64(z)
			}
			check("BatchNormTo "+name, got, want)
		}
		var y []T
		if relu {
			y = d.y
		}
		dz := func(i int) T {
			if y != nil && !(y[i] > 0) {
				return 0
			}
			return d.dy[i]
		}
		sdz, sdzx := make([]float64, c), make([]float64, c)
		wantDz, wantDzx := make([]float64, c), make([]float64, c)
		loops.BatchNormGradSumsAdd(sdz, sdzx, d.x, d.dy, y, d.mean)
		for i, v := range d.x {
			wantDz[i%c] += float64(dz(i))
			wantDzx[i%c] += float64(dz(i)) * float64(v-d.mean[i%c])
		}
		checkF(fmt.Sprint("sdz relu=", relu), sdz, wantDz)
		checkF(fmt.Sprint("sdzx relu=", relu), sdzx, wantDzx)
		got := make([]T, len(d.x))
		loops.BatchNormGradTo(got, d.x, d.dy, y, d.mean, d.k, d.ka, d.kb, 0.75)
		want := make([]float64, len(d.x))
		for i, v := range d.x {
			j := i % c
			want[i] = float64(d.k[j]*dz(i) - 0.75*(d.ka[j]+d.kb[j]*(v-d.mean[j])))
		}
		check(fmt.Sprint("BatchNormGradTo relu=", relu), got, want)
	}
}

// TestBatchNormLoopsVectorBits: the assembly loops give the Go loops'
// bits (a zero's sign aside), for channel counts they take and those they
// leave to Go.
func TestBatchNormLoopsVectorBits(t *testing.T) {
	for _, c := range []int{4, 8, 16, 24, 64, 12} {
		d := newBNData[float32](11, c, uint64(c))
		run := func(vector bool) (outs [][]float32, sums [][]float64) {
			defer loops.SetUseVector(loops.SetUseVector(vector))
			for _, relu := range []bool{false, true} {
				for _, res := range [][]float32{nil, d.res} {
					out := make([]float32, len(d.x))
					loops.BatchNormTo(out, d.x, res, d.mean, d.a, d.beta, relu)
					outs = append(outs, out)
				}
			}
			for _, y := range [][]float32{nil, d.y} {
				out := make([]float32, len(d.x))
				loops.BatchNormGradTo(out, d.x, d.dy, y, d.mean, d.k, d.ka, d.kb, 0.75)
				outs = append(outs, out)
				a, b := make([]float64, c), make([]float64, c)
				loops.BatchNormGradSumsAdd(a, b, d.x, d.dy, y, d.mean)
				sums = append(sums, a, b)
			}
			a, b := make([]float64, c), make([]float64, c)
			loops.BatchNormSumsAdd(a, b, 0.5, d.x)
			return outs, append(sums, a, b)
		}
		goOuts, goSums := run(false)
		vOuts, vSums := run(true)
		for i := range goOuts {
			for j, v := range goOuts[i] {
				if vOuts[i][j] != v {
					t.Fatalf("c=%d: output %d [%d]: vector %v, Go %v", c, i, j, vOuts[i][j], v)
				}
			}
		}
		for i := range goSums {
			for j, v := range goSums[i] {
				if vSums[i][j] != v {
					t.Fatalf("c=%d: sums %d [%d]: vector %v, Go %v", c, i, j, vSums[i][j], v)
				}
			}
		}
	}
}

// BenchmarkBatchNorm times each loop on a ResNet stage's activations for
// one replica's shard: 64 images of 28×28 pixels × 16 channels.
func BenchmarkBatchNorm(b *testing.B) {
	const pixels, c = 64 * 28 * 28, 16
	d := newBNData[float32](pixels, c, 1)
	out := make([]float32, len(d.x))
	sum, sq := make([]float64, c), make([]float64, c)
	b.Run("SumsAdd", func(b *testing.B) {
		for b.Loop() {
			loops.BatchNormSumsAdd(sum, sq, 1, d.x)
		}
	})
	b.Run("To-residual-relu", func(b *testing.B) {
		for b.Loop() {
			loops.BatchNormTo(out, d.x, d.res, d.mean, d.a, d.beta, true)
		}
	})
	b.Run("GradSumsAdd-relu", func(b *testing.B) {
		for b.Loop() {
			loops.BatchNormGradSumsAdd(sum, sq, d.x, d.dy, d.y, d.mean)
		}
	})
	b.Run("GradTo-relu", func(b *testing.B) {
		for b.Loop() {
			loops.BatchNormGradTo(out, d.x, d.dy, d.y, d.mean, d.k, d.ka, d.kb, 1)
		}
	})
}
