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

	"github.com/gotrain/gotrain/graph"
)

// bnMask is the row weights of the batch norm cases: row 1 is padding.
var bnMask = []float64{1, 0, 1}

// batchNormRef is BatchNorm with the statistics of the rows of weight ≠ 0
// of in[0] [b, pixels, c], γ in[1], β in[2] and the residual in[3] (if res),
// then act.
func batchNormRef(b, pixels, c int, res bool, act graph.Activation, eps float64) func(in [][]float64) []float64 {
	return func(in [][]float64) []float64 {
		x := in[0]
		out := make([]float64, len(x))
		for j := range c {
			var n, s, sq float64
			for r := range b {
				for p := range pixels {
					v := x[(r*pixels+p)*c+j]
					n += bnMask[r]
					s += bnMask[r] * v
					sq += bnMask[r] * v * v
				}
			}
			mean := s / n
			rstd := 1 / math.Sqrt(sq/n-mean*mean+eps)
			for i := j; i < len(x); i += c {
				v := (x[i]-mean)*rstd*in[1][j] + in[2][j]
				if res {
					v += in[3][i]
				}
				out[i] = actRef(act)(v)
			}
		}
		return out
	}
}

// batchNormOpCases are the batch norm's rows of the op table: fused where
// built, with a padding row, a ReLU or another activation after it, with
// and without a residual.
func batchNormOpCases() []opCase {
	var cases []opCase
	const b, h, w, c, eps = 3, 2, 3, 4, 1e-3
	for _, act := range []graph.Activation{graph.Linear, graph.ReLU, graph.Tanh} {
		for _, res := range []bool{false, true} {
			shapes := [][]int{{b, h, w, c}, {c}, {c}, {b}}
			gen := []func(*rand.Rand, int) float64{nil, positive, nil, func(_ *rand.Rand, i int) float64 { return bnMask[i] }}
			diff := []bool{true, true, true, false}
			if res {
				shapes = append(shapes[:3], []int{b, h, w, c}, []int{b})
				gen = append(gen[:3], nil, gen[3])
				diff = append(diff[:3], true, false)
			}
			cases = append(cases, opCase{
				name:   fmt.Sprintf("batch_norm-%v-residual-%v", act, res),
				shapes: shapes, gen: gen, diff: diff,
				build: func(in []*graph.Node) *graph.Node {
					mask := in[len(in)-1]
					count := graph.Scale(graph.Sum(mask), h*w)
					var r *graph.Node
					if res {
						r = in[3]
					}
					return graph.BatchNorm(in[0], graph.BatchNormSums(in[0], mask), count, in[1], in[2], r, eps, act)
				},
				ref: batchNormRef(b, h*w, c, res, act, eps),
			})
		}
	}
	return cases
}

// bnNet is a batch norm's forward and backward program on one participant
// (coll nil: no all-reduce): y = BatchNorm(x) with a ReLU after a residual
// add, loss = Σ y·wt.
type bnNet struct {
	p                       *graph.Program
	x, res, mask, wt        *graph.Node
	y                       *graph.Node
	dx, dgamma, dbeta, dres *graph.Node
}

func newBNNet(t *testing.T, dt graph.DType, shape []int, gamma, beta *graph.Variable, coll graph.Collective, count float64) *bnNet {
	t.Helper()
	g := graph.New(dt)
	n := &bnNet{x: g.Placeholder("x", shape...), res: g.Placeholder("res", shape...), mask: g.Placeholder("mask", shape[0]), wt: g.Placeholder("wt", shape...)}
	sums := graph.BatchNormSums(n.x, n.mask)
	if coll != nil {
		sums = graph.AllReduce(sums, coll, 1)
	}
	gv, bv := g.Var(gamma), g.Var(beta)
	n.y = graph.BatchNorm(n.x, sums, g.Const(count), gv, bv, n.res, 1e-3, graph.ReLU)
	loss := graph.Sum(graph.Mul(n.y, n.wt))
	grads := g.Gradients(loss, []*graph.Node{n.x, gv, bv, n.res})
	n.dx, n.dgamma, n.dbeta, n.dres = grads[0], grads[1], grads[2], grads[3]
	p, err := g.Compile(n.y, n.dx, n.dgamma, n.dbeta, n.dres)
	if err != nil {
		t.Fatal(err)
	}
	n.p = p
	return n
}

// bnData is random inputs for a batch norm of shape [b, …, c] whose rows
// of mask 0 hold large values that must not reach the statistics.
func bnData(shape []int, mask []float64, seed uint64) (x, res, wt []float64) {
	r := rand.New(rand.NewPCG(seed, 36))
	size := 1
	for _, d := range shape {
		size *= d
	}
	per := size / shape[0]
	x, res, wt = make([]float64, size), make([]float64, size), make([]float64, size)
	for i := range x {
		x[i] = 3 + 2*r.NormFloat64()
		if mask[i/per] == 0 {
			x[i] = 1e3
		}
		res[i], wt[i] = r.NormFloat64(), r.NormFloat64()
	}
	return x, res, wt
}

func (n *bnNet) run(t *testing.T, x, res, mask, wt []float64) {
	t.Helper()
	n.p.Feed(n.x, x)
	n.p.Feed(n.res, res)
	n.p.Feed(n.mask, mask)
	n.p.Feed(n.wt, wt)
	if err := n.p.Run(); err != nil {
		t.Fatal(err)
	}
}

func bnVars(dt graph.DType, c int, name string) (gamma, beta *graph.Variable) {
	gs, bs := make([]float64, c), make([]float64, c)
	for j := range c {
		gs[j], bs[j] = 0.5+0.1*float64(j), 0.2-0.05*float64(j)
	}
	return graph.NewVariable(name+"/gamma", []int{c}, dt, gs), graph.NewVariable(name+"/beta", []int{c}, dt, bs)
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !near(got[i], want[i], tol) {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %.10g, want %.10g", what, i, got[i], want[i])
			}
		}
	}
}

// TestIssue36BatchNormFusedMatchesComposed: the fused batch norm's output
// and gradients equal those of its composition of element-wise ops, in
// float64 and float32, on the ResNet's channel counts with padding rows.
func TestIssue36BatchNormFusedMatchesComposed(t *testing.T) {
	if !graph.FusedBatchNormBuilt {
		t.Skip("this build composes batch norm")
	}
	for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
		for _, shape := range [][]int{{5, 4, 3, 16}, {7, 3, 3, 67}, {4, 1, 1, 1}, {3, 6}} {
			t.Run(fmt.Sprint(dt, shape), func(t *testing.T) {
				tol := 1e-10
				if dt == graph.Float32 {
					tol = 2e-4
				}
				mask := make([]float64, shape[0])
				for i := range mask {
					mask[i] = float64(i % 3 % 2) // 0 1 0 0 1 0 0 ...: padding rows between real ones
					if i%3 != 1 {
						mask[i] = 1
					}
				}
				mask[1] = 0
				real := 0.0
				for _, m := range mask {
					real += m
				}
				count := real * float64(slices.Max([]int{1, size(shape) / shape[0] / shape[len(shape)-1]}))
				c := shape[len(shape)-1]
				x, res, wt := bnData(shape, mask, 1)
				var nets [2]*bnNet
				for i, fused := range []bool{false, true} {
					restore := graph.SetFusedBatchNorm(fused)
					gamma, beta := bnVars(dt, c, fmt.Sprint("bn", i))
					nets[i] = newBNNet(t, dt, shape, gamma, beta, nil, count)
					restore()
					nets[i].run(t, x, res, mask, wt)
				}
				ref, got := nets[0], nets[1]
				if ops := graph.StepOps(got.p); !slices.Contains(ops, "batch_norm") || slices.Contains(ops, "masked_sum") {
					t.Fatalf("fused program runs %v, want batch_norm and no masked_sum", ops)
				}
				for _, v := range []struct {
					name string
					a, b *graph.Node
				}{{"y", ref.y, got.y}, {"dx", ref.dx, got.dx}, {"dgamma", ref.dgamma, got.dgamma}, {"dbeta", ref.dbeta, got.dbeta}, {"dres", ref.dres, got.dres}} {
					closeTo(t, v.name, got.p.Value(v.b), ref.p.Value(v.a), tol)
				}
			})
		}
	}
}

// TestIssue36BatchNormPasses: a fused batch norm runs, over tensors of
// x's size, one statistics pass and one normalizing pass forward (the
// ReLU and the residual add in it) and two passes backward, plus, with a
// residual, the gradient through the ReLU that the residual gets and both
// passes read; nothing element-wise besides.
func TestIssue36BatchNormPasses(t *testing.T) {
	if !graph.FusedBatchNormBuilt {
		t.Skip("this build composes batch norm")
	}
	for _, residual := range []bool{false, true} {
		g := graph.New(graph.Float32)
		x, mask := g.Placeholder("x", 4, 3, 3, 8), g.Placeholder("mask", 4)
		gamma, beta := bnVars(graph.Float32, 8, fmt.Sprint("passes", residual))
		wrt := []*graph.Node{x, g.Var(gamma), g.Var(beta)}
		var res *graph.Node
		if residual {
			res = g.Placeholder("res", 4, 3, 3, 8)
			wrt = append(wrt, res)
		}
		y := graph.BatchNorm(x, graph.BatchNormSums(x, mask), g.Const(36), wrt[1], wrt[2], res, 1e-3, graph.ReLU)
		p, err := g.Compile(g.Gradients(graph.Sum(y), wrt)...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, op := range graph.StepOps(p) {
			switch op {
			case "slice", "copy", "const", "sum", "broadcast", "broadcast_to":
				// The loss, its seed, and dγ and dβ sliced out of [2, c]
				// (and copied, as requested outputs).
				continue
			}
			got = append(got, op)
		}
		want := []string{"batch_norm_sums", "batch_norm", "batch_norm_grad_sums", "batch_norm_grad"}
		if residual {
			want = []string{"batch_norm_sums", "batch_norm", "activate_grad", "batch_norm_grad_sums", "batch_norm_grad"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("residual %v: program runs %v (besides the loss), want %v", residual, got, want)
		}
	}
}

// TestIssue36SyncBatchNormParticipants: 1, 2 and 3 participants sharing
// statistics through AllReduce compute the outputs of one participant on
// the whole batch, and their gradients, dγ and dβ summed over
// participants, are its gradients, in float64 and float32.
func TestIssue36SyncBatchNormParticipants(t *testing.T) {
	shape := []int{6, 3, 2, 5}
	mask := []float64{1, 1, 0, 1, 1, 1}
	x, res, wt := bnData(shape, mask, 2)
	per := size(shape) / shape[0]
	count := 5.0 * 3 * 2
	for _, dt := range []graph.DType{graph.Float64, graph.Float32} {
		tol := 1e-12
		if dt == graph.Float32 {
			tol = 1e-5
		}
		gamma, beta := bnVars(dt, shape[3], "one")
		one := newBNNet(t, dt, shape, gamma, beta, nil, count)
		one.run(t, x, res, mask, wt)
		for _, np := range []int{1, 2, 3} {
			t.Run(fmt.Sprint(dt, "/", np), func(t *testing.T) {
				grp := newGroup(np)
				rows := shape[0] / np
				sub := append([]int{rows}, shape[1:]...)
				nets := make([]*bnNet, np)
				for p := range nets {
					nets[p] = newBNNet(t, dt, sub, gamma, beta, participant{grp, p}, count)
					if got := len(nets[p].p.Collectives()); got != 2 {
						t.Fatalf("participant %d runs %d collectives, want 2 (the sums and their gradients)", p, got)
					}
				}
				var wg sync.WaitGroup
				for p, n := range nets {
					lo, hi := p*rows*per, (p+1)*rows*per
					wg.Add(1)
					go func() {
						defer wg.Done()
						n.run(t, x[lo:hi], res[lo:hi], mask[p*rows:(p+1)*rows], wt[lo:hi])
					}()
				}
				wg.Wait()
				var y, dx, dres []float64
				dgamma, dbeta := make([]float64, shape[3]), make([]float64, shape[3])
				for _, n := range nets {
					y = append(y, n.p.Value(n.y)...)
					dx = append(dx, n.p.Value(n.dx)...)
					dres = append(dres, n.p.Value(n.dres)...)
					for j, v := range n.p.Value(n.dgamma) {
						dgamma[j] += v
					}
					for j, v := range n.p.Value(n.dbeta) {
						dbeta[j] += v
					}
				}
				closeTo(t, "y", y, one.p.Value(one.y), tol)
				closeTo(t, "dx", dx, one.p.Value(one.dx), tol)
				closeTo(t, "dres", dres, one.p.Value(one.dres), tol)
				closeTo(t, "dgamma", dgamma, one.p.Value(one.dgamma), tol)
				closeTo(t, "dbeta", dbeta, one.p.Value(one.dbeta), tol)
			})
		}
	}
}

// TestIssue36BatchNormAllocatesNothing: a batch norm step with its
// gradients runs without allocating, fused or composed.
func TestIssue36BatchNormAllocatesNothing(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		for _, fused := range []bool{false, true} {
			restore := graph.SetFusedBatchNorm(fused)
			gamma, beta := bnVars(dt, 4, fmt.Sprint("alloc", dt, fused))
			n := newBNNet(t, dt, []int{3, 2, 2, 4}, gamma, beta, nil, 12)
			restore()
			if got := testing.AllocsPerRun(10, func() {
				if err := n.p.Run(); err != nil {
					t.Fatal(err)
				}
			}); got != 0 {
				t.Errorf("%v fused %v: Run allocates %v times per call, want 0", dt, fused, got)
			}
		}
	}
}

// TestIssue36BatchNormMisuse: shapes that do not fit are errors wrapping
// ErrShape that name both.
func TestIssue36BatchNormMisuse(t *testing.T) {
	g := graph.New(graph.Float32)
	x, mask := g.Placeholder("x", 2, 3, 4), g.Placeholder("mask", 2)
	sums, count, c := graph.BatchNormSums(x, mask), g.Const(6), g.Placeholder("c", 4)
	for _, tc := range []struct {
		name string
		fn   func()
		want string
	}{
		{"sums rank", func() { graph.BatchNormSums(g.Placeholder("v", 4), g.Placeholder("m", 4)) },
			"want x [batch, …, channels] and mask [batch], got [4] and [4]"},
		{"mask", func() { graph.BatchNormSums(x, g.Placeholder("m", 3)) },
			"want x [batch, …, channels] and mask [batch], got [2 3 4] and [3]"},
		{"sums", func() { graph.BatchNorm(x, g.Placeholder("s", 2, 3), count, c, c, nil, 1e-3, graph.ReLU) },
			"want sums of shape [2 4] for x [2 3 4], got [2 3]"},
		{"count", func() { graph.BatchNorm(x, sums, g.Const(6, 2), c, c, nil, 1e-3, graph.ReLU) },
			"want a scalar count, got shape [2]"},
		{"gamma", func() { graph.BatchNorm(x, sums, count, g.Placeholder("g", 3), c, nil, 1e-3, graph.ReLU) },
			"want gamma and beta of shape [4] for x [2 3 4], got [3] and [4]"},
		{"residual", func() { graph.BatchNorm(x, sums, count, c, c, g.Placeholder("r", 2, 4, 3), 1e-3, graph.ReLU) },
			"want a residual of x's shape [2 3 4], got [2 4 3]"},
		{"eps", func() { graph.BatchNorm(x, sums, count, c, c, nil, math.NaN(), graph.ReLU) }, "want eps ≥ 0, got NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, graph.ErrShape) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("panic %v, want an ErrShape saying %q", err, tc.want)
				}
			}()
			tc.fn()
		})
	}
}
