package graph

import (
	"fmt"
	"math"
)

// The self-attention ops.
var (
	opSelfAttnWeights    = newOp() // per head: softmax(q·kᵀ/√d), read in place from qkv
	opSelfAttn           = newOp() // per head: weights·v, written in place among the heads
	opSelfAttnScoresGrad = newOp() // per head: softmax_grad(weights, dy·vᵀ)
	opSelfAttnGrad       = newOp() // qkv's gradient from qkv, the weights, the scores' gradient and dy
)

func init() {
	defineOps(map[opKind]opDef{
		opSelfAttnWeights:    {name: "self_attention_weights", cpu: cpu(selfAttnWeightsKernel, selfAttnWeightsKernel), stopsGradient: true},
		opSelfAttn:           {name: "self_attention", cpu: cpu(selfAttnKernel, selfAttnKernel), grad: selfAttnGrad},
		opSelfAttnScoresGrad: {name: "self_attention_scores_grad", cpu: cpu(selfAttnScoresGradKernel, selfAttnScoresGradKernel), backward: true},
		opSelfAttnGrad:       {name: "self_attention_grad", cpu: cpu(selfAttnGradKernel, selfAttnGradKernel), backward: true},
	})
}

// SelfAttention returns the multi-head self-attention of packed
// projections qkv [..., t, 3·heads·d], whose last axis holds the queries,
// keys and values in that order, each as heads blocks of d features (the
// product of an input with the concatenated query, key and value kernels).
// The result [..., t, heads·d] holds each head's attention
//
//	softmax(qₕ·kₕᵀ/√d)·vₕ
//
// in its block of d features, as a multi-head layer joins its heads. It is
// Attention on q, k and v split out of qkv into [..., heads, t, d] and
// transposed back, without those copies: its products read the heads in
// place, through BLAS's leading dimensions. With causal set, position i
// attends to positions j ≤ i only. The weights [..., heads, t, t] are held
// for the backward pass.
// It panics with an error wrapping ErrShape if qkv has fewer than two axes,
// heads < 1, or the last axis is not a multiple of 3·heads.
func SelfAttention(qkv *Node, heads int, causal bool) *Node {
	const op = "self_attention"
	g := graphOf(op, qkv)
	r := len(qkv.shape)
	if r < 2 || heads < 1 || qkv.shape[r-1]%(3*heads) != 0 {
		panic(shapeErr(g, op, fmt.Sprintf("want qkv [..., t, 3·heads·d] with %d heads, got %v", heads, qkv.shape)))
	}
	t := qkv.shape[r-2]
	ws := append(append([]int{}, qkv.shape[:r-2]...), heads, t, t)
	w := g.add(opSelfAttnWeights, ws, qkv)
	w.causal = causal
	ys := append([]int{}, qkv.shape...)
	ys[r-1] /= 3
	out := g.add(opSelfAttn, ys, w, qkv)
	out.causal = causal
	return out
}

// selfAttnGeo is the geometry of a self-attention node or of one of its
// gradients, read from its qkv input [..., t, 3·heads·d] and its weights
// [..., heads, t, t].
type selfAttnGeo struct {
	blocks, heads, t, d int // blocks: the product of the batch axes and heads
	c, hd               int // qkv's row (3·heads·d) and the output's (heads·d)
	scale               float64
}

func selfAttnGeoOf(qkv, w *Node) selfAttnGeo {
	rq, rw := len(qkv.shape), len(w.shape)
	s := selfAttnGeo{heads: w.shape[rw-3], t: qkv.shape[rq-2], c: qkv.shape[rq-1]}
	s.blocks = sizeOf(w.shape[:rw-2])
	s.hd = s.c / 3
	s.d = s.hd / s.heads
	if s.d > 0 {
		s.scale = 1 / math.Sqrt(float64(s.d))
	}
	return s
}

// q, k and v return the element offset, in qkv, of block i's first query,
// key and value (i = batch·heads + head); their rows are c apart.
func (s selfAttnGeo) q(i int) int { return (i/s.heads)*s.t*s.c + (i%s.heads)*s.d }
func (s selfAttnGeo) k(i int) int { return s.q(i) + s.hd }
func (s selfAttnGeo) v(i int) int { return s.q(i) + 2*s.hd }

// y returns the element offset of block i's first output row in a
// [..., t, heads·d] tensor (the output and its gradient); rows are hd apart.
func (s selfAttnGeo) y(i int) int { return (i/s.heads)*s.t*s.hd + (i%s.heads)*s.d }

// selfAttnGrad gives qkv its whole gradient, through the weights too, so
// the weights node stops gradients (as norm_stats does for a norm): the
// weights are private to the node, so nothing else can read them.
func selfAttnGrad(n, dy *Node) []*Node {
	w, qkv := n.in[0], n.in[1]
	ds := n.g.add(opSelfAttnScoresGrad, w.shape, qkv, w, dy)
	ds.causal = n.causal
	return []*Node{nil, n.g.add(opSelfAttnGrad, qkv.shape, qkv, w, ds, dy)}
}

// selfAttnWeightsKernel is, per block: w = softmax(q·kᵀ/√d), causally
// masked if asked.
func selfAttnWeightsKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	qkv, s, causal := in[0], selfAttnGeoOf(n.in[0], n), n.causal
	tt, h := s.t*s.t, s.split(causal)
	return func() {
		for i := range s.blocks {
			w := out[i*tt : (i+1)*tt]
			scoresGemm(gemm, h, s.t, s.d, T(s.scale), qkv[s.q(i):], s.c, qkv[s.k(i):], s.c, w)
			if causal {
				paddedCausalSoftmax(w, s.t)
			} else {
				softmaxRows(w, w, s.t, false)
			}
		}
	}
}

// selfAttnKernel is, per block: y = w·v.
func selfAttnKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	w, qkv, s := in[0], in[1], selfAttnGeoOf(n.in[1], n.in[0])
	tt, h := s.t*s.t, s.split(n.in[0].causal)
	return func() {
		for i := range s.blocks {
			lowerGemm(gemm, false, h, s.t, s.d, 1, w[i*tt:], qkv[s.v(i):], s.c, out[s.y(i):], s.hd)
		}
	}
}

// selfAttnScoresGradKernel is, per block, the gradient of the scores
// before the softmax: ds = softmaxGrad(w, dy·vᵀ).
func selfAttnScoresGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	qkv, w, dy, s, causal := in[0], in[1], in[2], selfAttnGeoOf(n.in[0], n.in[1]), n.causal
	tt, h := s.t*s.t, s.split(causal)
	return func() {
		for i := range s.blocks {
			ds, wi := out[i*tt:(i+1)*tt], w[i*tt:(i+1)*tt]
			scoresGemm(gemm, h, s.t, s.d, 1, dy[s.y(i):], s.hd, qkv[s.v(i):], s.c, ds)
			if causal {
				paddedCausalSoftmaxGrad(ds, wi, s.t)
			} else {
				softmaxGrad(ds, wi, ds, s.t)
			}
		}
	}
}

// selfAttnGradKernel is, per block, qkv's gradient: dq = ds·k/√d,
// dk = dsᵀ·q/√d and dv = wᵀ·dy, each written in place in its block.
func selfAttnGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	qkv, w, ds, dy, s := in[0], in[1], in[2], in[3], selfAttnGeoOf(n.in[0], n.in[1])
	tt, sc, h := s.t*s.t, T(s.scale), s.split(n.in[1].causal)
	return func() {
		for i := range s.blocks {
			lowerGemm(gemm, false, h, s.t, s.d, sc, ds[i*tt:], qkv[s.k(i):], s.c, out[s.q(i):], s.c)
			lowerGemm(gemm, true, h, s.t, s.d, sc, ds[i*tt:], qkv[s.q(i):], s.c, out[s.k(i):], s.c)
			lowerGemm(gemm, true, h, s.t, s.d, 1, w[i*tt:], dy[s.y(i):], s.hd, out[s.v(i):], s.c)
		}
	}
}

// split returns where the CPU kernels cut the t positions of a causal
// block in two, h: the queries before h see only the keys before h, so the
// products skip the key block [h, t) of those rows, about a quarter of each
// product. h is a multiple of 8 so that paddedCausalSoftmax's rows before
// h stay before it; 0 (no cut) without a mask or for t < 16.
func (s selfAttnGeo) split(causal bool) int {
	if !causal {
		return 0
	}
	return (s.t / 2) &^ 7
}

// scoresGemm is out [t, t] = alpha·x·yᵀ for x and y [t, d] with rows ldx
// and ldy apart; with h > 0, only the rows before h of the keys before h
// and every key of the rows from h on, the rest of out left as it was.
func scoresGemm[T Float](gemm gemmFunc[T], h, t, d int, alpha T, x []T, ldx int, y []T, ldy int, out []T) {
	if h == 0 {
		gemm(false, true, t, t, d, alpha, x, ldx, y, ldy, 0, out, t)
		return
	}
	gemm(false, true, h, h, d, alpha, x, ldx, y, ldy, 0, out, t)
	gemm(false, true, t-h, t, d, alpha, x[h*ldx:], ldx, y, ldy, 0, out[h*t:], t)
}

// lowerGemm is c [t, d] = alpha·op(l)·b for l [t, t] (transposed when
// trans) and b [t, d], rows ldb and ldc apart; with h > 0, l's rows before
// h must be 0 from column h on, as causal weights and their gradients are,
// and the products skip those zeros.
func lowerGemm[T Float](gemm gemmFunc[T], trans bool, h, t, d int, alpha T, l, b []T, ldb int, c []T, ldc int) {
	switch {
	case h == 0:
		gemm(trans, false, t, d, t, alpha, l, t, b, ldb, 0, c, ldc)
	case trans:
		// Rows of lᵀ before h are l's columns before h, every row of l;
		// from h on, l's rows from h on.
		gemm(true, false, h, d, t, alpha, l, t, b, ldb, 0, c, ldc)
		gemm(true, false, t-h, d, t-h, alpha, l[h*t+h:], t, b[h*ldb:], ldb, 0, c[h*ldc:], ldc)
	default:
		gemm(false, false, h, d, h, alpha, l, t, b, ldb, 0, c, ldc)
		gemm(false, false, t-h, d, t, alpha, l[h*t:], t, b, ldb, 0, c[h*ldc:], ldc)
	}
}

// paddedCausalSoftmax is causalSoftmax(w, w, t, t) in place, computed over
// each row's visible keys and the masked ones after them up to a multiple
// of 8, those set to -Inf first: their exponentials are exactly 0, and the
// vector loops of loops.Max and loops.ExpSubTo then cover the whole
// row instead of leaving up to 7 elements to scalar code.
func paddedCausalSoftmax[T Float](w []T, t int) {
	inf := T(math.Inf(-1))
	for i := range t {
		row := w[i*t : (i+1)*t]
		n := min(t, (i+8)&^7) // i+1 visible keys, rounded up
		for j := i + 1; j < n; j++ {
			row[j] = inf
		}
		softmaxRows(row[:n], row[:n], n, false)
		clear(row[n:])
	}
}

// paddedCausalSoftmaxGrad is causalSoftmaxGradRows(ds, w, ds, t, t) in
// place, over the rows that paddedCausalSoftmax computed: the weights of
// the padding are 0, so their gradients are too.
func paddedCausalSoftmaxGrad[T Float](ds, w []T, t int) {
	for i := range t {
		n := min(t, (i+8)&^7)
		softmaxGrad(ds[i*t:i*t+n], w[i*t:i*t+n], ds[i*t:i*t+n], n)
		clear(ds[i*t+n : (i+1)*t])
	}
}
