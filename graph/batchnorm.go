package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/gotrain/gotrain/internal/loops"
)

// Batch normalization in as few passes over the activations as its
// arithmetic allows: forward, one pass takes each channel's sum
// and sum of squares (BatchNormSums), which a caller may all-reduce across
// replicas, and one pass normalizes, scales, shifts and applies the
// residual add and the ReLU that follow (BatchNorm); backward, one pass
// takes each channel's Σ dz and Σ dz·x̂, which are all-reduced through the
// same collective as the forward sums, and one pass writes dx.
//
// The fused ops have no CUDA kernels (hostOnly): cuda builds, and graphs
// whose sums come from elsewhere, get the same functions composed of the
// element-wise ops (batchNormComposed), which are also the reference the
// fused ops are tested against.

// The batch norm ops, which no device runs (hostOnly): cuda builds compose
// batch norm of the element-wise ops.
var (
	opBatchNormSums     = newOp() // [2, c]: Σ w·x and Σ w·x² per channel
	opBatchNorm         = newOp() // act(x̂·γ + β + residual)
	opBatchNormGradSums = newOp() // [2, c]: Σ dz and Σ dz·x̂ per channel
	opBatchNormGrad     = newOp() // dx from x, the statistics, γ, the mask, the all-reduced gradient sums and dy
)

func init() {
	defineOps(map[opKind]opDef{
		opBatchNormSums:     {name: "batch_norm_sums", cpu: cpu(batchNormSumsKernel, batchNormSumsKernel), stopsGradient: true, hostOnly: true},
		opBatchNorm:         {name: "batch_norm", cpu: cpu(batchNormKernel, batchNormKernel), grad: batchNormGrad, hostOnly: true},
		opBatchNormGradSums: {name: "batch_norm_grad_sums", cpu: cpu(batchNormGradSumsKernel, batchNormGradSumsKernel), backward: true, hostOnly: true},
		opBatchNormGrad:     {name: "batch_norm_grad", cpu: cpu(batchNormGradKernel, batchNormGradKernel), backward: true, hostOnly: true},
	})
}

// fusedBatchNorm reports whether BatchNormSums builds the fused op, which
// BatchNorm then recognizes; tests turn it off to build the composition.
var fusedBatchNorm = !cudaBuild

// BatchNormSums returns, for x [b, …, c] and row weights mask [b], the
// per-channel sums a batch norm's statistics come from, shape [2, c]:
//
//	sums[0][j] = Σ_b mask[b]·Σ_… x[b,…,j]     sums[1][j] = Σ_b mask[b]·Σ_… x[b,…,j]²
//
// accumulated in float64. Rows of weight 0 are skipped, so whatever
// padding rows hold never reaches the sums. Pass them, or their
// AllReduce for statistics over several participants, to BatchNorm, whose
// gradient then gives x its whole gradient, through the statistics too: the
// fused node itself passes no gradient, so use the sums for nothing else
// that is differentiated (BatchNormMoments' outputs are for updating moving
// averages).
// It panics with an error wrapping ErrShape if x has rank < 2 or mask is
// not [b].
func BatchNormSums(x, mask *Node) *Node {
	const op = "batch_norm_sums"
	g := graphOf(op, x, mask)
	r := len(x.shape)
	if r < 2 || len(mask.shape) != 1 || mask.shape[0] != x.shape[0] {
		panic(shapeErr(g, op, fmt.Sprintf("want x [batch, …, channels] and mask [batch], got %v and %v", x.shape, mask.shape)))
	}
	c := x.shape[r-1]
	if !fusedBatchNorm {
		return Concat(0, Reshape(MaskedSum(x, mask), 1, c), Reshape(MaskedSum(Square(x), mask), 1, c))
	}
	return g.add(opBatchNormSums, []int{2, c}, x, mask)
}

// BatchNormMoments returns the per-channel mean and (biased) variance, each
// [c], of the elements sums [2, c] (BatchNormSums) summed over count (a
// scalar): mean = sums[0]/count, variance = max(sums[1]/count - mean², 0).
// It panics with an error wrapping ErrShape if sums is not [2, c] or count
// is not a scalar.
func BatchNormMoments(sums, count *Node) (mean, variance *Node) {
	const op = "batch_norm_moments"
	g := graphOf(op, sums, count)
	if len(sums.shape) != 2 || sums.shape[0] != 2 || count.size != 1 {
		panic(shapeErr(g, op, fmt.Sprintf("want sums [2, channels] and a scalar count, got %v and %v", sums.shape, count.shape)))
	}
	c := sums.shape[1]
	mean = Div(Reshape(Slice(sums, 0, 0, 1), c), count)
	sq := Div(Reshape(Slice(sums, 0, 1, 2), c), count)
	variance = Maximum(Sub(sq, Square(mean)), g.Const(0))
	return mean, variance
}

// BatchNorm returns act(x̂·γ + β + residual) for x [b, …, c], with
//
//	x̂ = (x - mean)/√(variance + eps)
//
// per channel, the mean and the biased variance those of BatchNormMoments
// (sums, count): sums are x's BatchNormSums, or their AllReduce, and count
// the number of elements behind them (masked rows left out), a scalar ≥ 1.
// gamma and beta are [c]; residual is nil or x's shape. A ReLU is applied
// in the same pass; another activation follows as its own node.
//
// Where sums are the fused BatchNormSums of this x (or their AllReduce),
// BatchNorm is one node whose gradient is two passes over x and dy, with
// the channels' gradient sums all-reduced through the forward sums'
// collective, so participants that share statistics get exact gradients
// when they sum theirs (as a strategy does). Otherwise it is composed of
// element-wise ops. The variance is E[x²] - mean², whose rounding grows
// with mean²/variance, as in Keras's synchronized batch norm.
// It panics with an error wrapping ErrShape if the shapes do not fit or eps
// is negative or NaN.
func BatchNorm(x, sums, count, gamma, beta, residual *Node, eps float64, act Activation) *Node {
	const op = "batch_norm"
	ns := []*Node{x, sums, count, gamma, beta}
	if residual != nil {
		ns = append(ns, residual)
	}
	g := graphOf(op, ns...)
	checkAct(g, op, act)
	r := len(x.shape)
	if r < 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want x [batch, …, channels], got %v", x.shape)))
	}
	c := x.shape[r-1]
	switch {
	case len(sums.shape) != 2 || sums.shape[0] != 2 || sums.shape[1] != c:
		panic(shapeErr(g, op, fmt.Sprintf("want sums of shape [2 %d] for x %v, got %v", c, x.shape, sums.shape)))
	case count.size != 1:
		panic(shapeErr(g, op, fmt.Sprintf("want a scalar count, got shape %v", count.shape)))
	case len(gamma.shape) != 1 || gamma.shape[0] != c || len(beta.shape) != 1 || beta.shape[0] != c:
		panic(shapeErr(g, op, fmt.Sprintf("want gamma and beta of shape [%d] for x %v, got %v and %v", c, x.shape, gamma.shape, beta.shape)))
	case residual != nil && !slices.Equal(residual.shape, x.shape):
		panic(shapeErr(g, op, fmt.Sprintf("want a residual of x's shape %v, got %v", x.shape, residual.shape)))
	case !(eps >= 0):
		panic(shapeErr(g, op, fmt.Sprintf("want eps ≥ 0, got %v", eps)))
	}
	if src := batchNormSource(sums); src == nil || src.in[0] != x {
		return batchNormComposed(x, sums, count, gamma, beta, residual, eps, act)
	}
	fused := Linear
	if act == ReLU {
		fused = ReLU
	}
	y := g.add(opBatchNorm, x.shape, ns...)
	y.act, y.norm = fused, &normDef{eps: eps, gamma: true, beta: true}
	if act != fused {
		return Activate(y, act)
	}
	return y
}

// batchNormSource returns the fused BatchNormSums node behind sums (itself,
// or the input of an AllReduce of it), nil if there is none.
func batchNormSource(sums *Node) *Node {
	if sums.op == opAllReduce {
		sums = sums.in[0]
	}
	if sums.op == opBatchNormSums {
		return sums
	}
	return nil
}

// batchNormComposed is BatchNorm of element-wise ops, whose gradients flow
// through the sums (and their AllReduce) by the chain rule.
func batchNormComposed(x, sums, count, gamma, beta, residual *Node, eps float64, act Activation) *Node {
	mean, variance := BatchNormMoments(sums, count)
	scale := Div(gamma, Sqrt(Add(variance, x.g.Const(eps))))
	y := Add(Mul(Sub(x, mean), scale), beta)
	if residual != nil {
		y = AddSameShape(y, residual)
	}
	return Activate(y, act)
}

// batchNormGrad: dx from the two backward passes; the sums and the count
// get none (the sums node stops gradients: dx already holds what flows
// through them); dγ and dβ are this participant's Σ dz·x̂ and Σ dz, which a
// strategy sums over participants as it sums every variable's gradient.
func batchNormGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	x, sums, count := in[0], in[1], in[2]
	c := x.shape[len(x.shape)-1]
	residual := len(in) == 6
	// dz, the gradient through the ReLU, is the residual's gradient, so
	// with a residual it is a node the two passes read; without one they
	// mask dy themselves, reading the output y.
	dz, y := dy, (*Node)(nil)
	if n.act != Linear {
		if residual {
			dz = g.add(opActGradY, n.shape, n, dy)
			dz.act = n.act
		} else {
			y = n
		}
	}
	gin := []*Node{x, sums, count, dz}
	if y != nil {
		gin = append(gin, y)
	}
	local := g.add(opBatchNormGradSums, []int{2, c}, gin...)
	local.norm = n.norm
	total := local
	if sums.op == opAllReduce {
		total = AllReduce(local, sums.coll, sums.factor)
	}
	mask := batchNormSource(sums).in[1]
	dxIn := []*Node{x, sums, count, in[3], mask, total, dz}
	if y != nil {
		dxIn = append(dxIn, y)
	}
	dx := g.add(opBatchNormGrad, x.shape, dxIn...)
	dx.norm = n.norm
	out := []*Node{dx, nil, nil,
		Reshape(Slice(local, 0, 1, 2), c), // dγ = Σ dz·x̂
		Reshape(Slice(local, 0, 0, 1), c), // dβ = Σ dz
	}
	if residual {
		out = append(out, dz)
	}
	return out
}

// The CPU kernels of the batch norm ops; each is a kernelFunc.

func batchNormSumsKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, mask, c := in[0], in[1], n.shape[1]
	acc := make([]float64, 2*c)
	return func() { batchNormSums(out, x, mask, acc) }
}

// batchNormSums is BatchNormSums: each row of weight ≠ 0 through
// loops.BatchNormSumsAdd into acc (2·c float64 of scratch), then out.
func batchNormSums[T Float](out, x, mask []T, acc []float64) {
	c := len(out) / 2
	clear(acc)
	sum, sq := acc[:c], acc[c:]
	if len(mask) > 0 && c > 0 {
		per := len(x) / len(mask)
		for b, w := range mask {
			if w != 0 {
				loops.BatchNormSumsAdd(sum, sq, float64(w), x[b*per:(b+1)*per])
			}
		}
	}
	for j, v := range acc {
		out[j] = T(v)
	}
}

// bnStats holds one step's per-channel statistics: the mean and γ/σ in T
// for the pixel loops, 1/σ in float64. Kernels keep one, made when
// compiled, so a step allocates nothing.
type bnStats[T Float] struct {
	mean, a []T
	rstd    []float64
	n       float64 // count
}

func newBNStats[T Float](c int) *bnStats[T] {
	return &bnStats[T]{mean: make([]T, c), a: make([]T, c), rstd: make([]float64, c)}
}

// compute fills s from sums [2, c], the count and γ (nil: leave a), in
// float64.
func (s *bnStats[T]) compute(sums, count, gamma []T, eps float64) {
	c := len(s.mean)
	s.n = float64(count[0])
	for j := range c {
		mean := float64(sums[j]) / s.n
		v := max(float64(sums[c+j])/s.n-mean*mean, 0)
		rstd := 1 / math.Sqrt(v+eps)
		s.mean[j], s.rstd[j] = T(mean), rstd
		if gamma != nil {
			s.a[j] = T(float64(gamma[j]) * rstd)
		}
	}
}

func batchNormKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, sums, count, gamma, beta := in[0], in[1], in[2], in[3], in[4]
	var res []T
	if len(in) == 6 {
		res = in[5]
	}
	eps, relu := n.norm.eps, n.act == ReLU
	s := newBNStats[T](len(gamma))
	return func() {
		s.compute(sums, count, gamma, eps)
		loops.BatchNormTo(out, x, res, s.mean, s.a, beta, relu)
	}
}

// batchNormGradSumsKernel is, per channel, out[0] = Σ dz and out[1] =
// Σ dz·x̂ over every row (the forward pass normalized padding rows too),
// dz being in[3], masked where the output y (in[4], if given) is not
// positive.
func batchNormGradSumsKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, sums, count, dy := in[0], in[1], in[2], in[3]
	var y []T
	if len(in) == 5 {
		y = in[4]
	}
	c, eps := n.shape[1], n.norm.eps
	s := newBNStats[T](c)
	acc := make([]float64, 2*c)
	return func() {
		s.compute(sums, count, nil, eps)
		clear(acc)
		loops.BatchNormGradSumsAdd(acc[:c], acc[c:], x, dy, y, s.mean)
		for j := range c {
			out[j], out[c+j] = T(acc[j]), T(acc[c+j]*s.rstd[j])
		}
	}
}

// batchNormGradKernel is dx, with the channels' gradient sums A = Σ dz and
// B = Σ dz·x̂ over every participant (total) and the row weights w:
//
//	dx = γ/σ·(dz - w·(A + B·x̂)/count)
//
// the chain rule through x̂ directly and through the mean and variance,
// which see x only in rows of weight w ≠ 0.
func batchNormGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, sums, count, gamma, mask, total, dy := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	var y []T
	if len(in) == 8 {
		y = in[7]
	}
	c, eps := len(gamma), n.norm.eps
	s := newBNStats[T](c)
	ka, kb := make([]T, c), make([]T, c)
	return func() {
		s.compute(sums, count, gamma, eps)
		for j := range c {
			k := float64(gamma[j]) * s.rstd[j] / s.n
			ka[j] = T(k * float64(total[j]))
			kb[j] = T(k * float64(total[c+j]) * s.rstd[j])
		}
		if len(mask) == 0 || c == 0 {
			return
		}
		per := len(x) / len(mask)
		for b, w := range mask {
			lo, hi := b*per, (b+1)*per
			var yr []T
			if y != nil {
				yr = y[lo:hi]
			}
			loops.BatchNormGradTo(out[lo:hi], x[lo:hi], dy[lo:hi], yr, s.mean, s.a, ka, kb, w)
		}
	}
}
