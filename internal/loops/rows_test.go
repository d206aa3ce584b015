package loops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// TestRowKernels checks RowsOpTo, OpRowsTo, SumRowsTo and AccRowsTo against the loops
// in their doc comments, bit for bit, vector and Go loops alike, for both
// dtypes, every Op, row lengths on and off the 8 lanes, and signed zeros,
// infinities, NaN and subnormals among the values; and the guards around
// dst.
func TestRowKernels(t *testing.T) {
	testRowKernels[float32](t)
	testRowKernels[float64](t)
}

func testRowKernels[T loops.Float](t *testing.T) {
	ops := []struct {
		op loops.Op
		f  func(a, b T) T
	}{
		{loops.OpAdd, func(a, b T) T { return a + b }},
		{loops.OpSub, func(a, b T) T { return a - b }},
		{loops.OpMul, func(a, b T) T { return a * b }},
		{loops.OpDiv, func(a, b T) T { return a / b }},
	}
	r := rand.New(rand.NewPCG(25, 26))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 1e-40, -3}
	spice := func(x []T) {
		for i := range x {
			if r.IntN(4) == 0 {
				x[i] = T(special[r.IntN(len(special))])
			}
		}
	}
	same := func(x, y T) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	for _, row := range []int{1, 3, 4, 8, 13, 16, 20, 24, 64} {
		for _, rows := range []int{0, 1, 2, 5} {
			name := fmt.Sprintf("%T/row%d/rows%d", T(0), row, rows)
			for _, vec := range []bool{true, false} {
				run := func(f func()) {
					if vec {
						f()
					} else {
						goLoops(f)
					}
				}
				for _, o := range ops {
					a, _ := guarded[T](r, row*rows)
					v, _ := guarded[T](r, row)
					spice(a)
					spice(v)
					dst, full := guarded[T](r, row*rows)
					run(func() { loops.RowsOpTo(o.op, dst, a, v) })
					checkGuards(t, "RowsOpTo "+name, full)
					for i, x := range a {
						if want := o.f(x, v[i%row]); !same(dst[i], want) {
							t.Fatalf("RowsOpTo %s op %d vector %v: [%d] = %v, want %v", name, o.op, vec, i, dst[i], want)
						}
					}
					dst, full = guarded[T](r, row*rows)
					run(func() { loops.OpRowsTo(o.op, dst, v, a) })
					checkGuards(t, "OpRowsTo "+name, full)
					for i, x := range a {
						if want := o.f(v[i%row], x); !same(dst[i], want) {
							t.Fatalf("OpRowsTo %s op %d vector %v: [%d] = %v, want %v", name, o.op, vec, i, dst[i], want)
						}
					}
				}
				x, _ := guarded[T](r, row*rows)
				spice(x)
				for _, f := range []float64{1, 0.5, -3} {
					acc := make([]float64, row)
					for i := range acc {
						acc[i] = r.NormFloat64()
					}
					wantAcc := append([]float64(nil), acc...)
					for i, v := range x {
						wantAcc[i%row] += f * float64(v)
					}
					run(func() { loops.AccRowsTo(acc, f, x) })
					for i := range acc {
						if math.Float64bits(acc[i]) != math.Float64bits(wantAcc[i]) {
							t.Fatalf("AccRowsTo %s f=%v vector %v: [%d] = %v, want %v", name, f, vec, i, acc[i], wantAcc[i])
						}
					}
				}
				dst, full := guarded[T](r, row)
				want := append([]T(nil), dst...)
				for i, v := range x {
					want[i%row] += v
				}
				run(func() { loops.SumRowsTo(dst, x) })
				checkGuards(t, "SumRowsTo "+name, full)
				for i := range want {
					if !same(dst[i], want[i]) {
						t.Fatalf("SumRowsTo %s vector %v: [%d] = %v, want %v", name, vec, i, dst[i], want[i])
					}
				}
			}
		}
	}
}

// TestRowKernelsPanic checks that a length that is not whole rows panics.
func TestRowKernelsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"RowsOpTo":  func() { loops.RowsOpTo(loops.OpAdd, make([]float32, 5), make([]float32, 5), make([]float32, 2)) },
		"OpRowsTo":  func() { loops.OpRowsTo(loops.OpAdd, make([]float32, 5), make([]float32, 2), make([]float32, 5)) },
		"SumRowsTo": func() { loops.SumRowsTo(make([]float64, 0), make([]float64, 3)) },
		"AccRowsTo": func() { loops.AccRowsTo(make([]float64, 4), 1, make([]float32, 6)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
