package graph

import (
	"fmt"
	"math"
	"slices"
)

// The causal mask and the causal softmax of Attention.
var (
	opCausalMask        = newOp() // the upper triangle (key after query) set to value
	opCausalSoftmax     = newOp() // Softmax(CausalMask(x)), the masked keys not computed
	opCausalSoftmaxGrad = newOp() // dx from causal_softmax output y and dy
)

func init() {
	defineOps(map[opKind]opDef{
		opCausalMask:        {name: "causal_mask", cpu: cpu(causalMaskKernel, causalMaskKernel), grad: causalMaskGrad},
		opCausalSoftmax:     {name: "causal_softmax", cpu: cpu(causalSoftmaxKernel, causalSoftmaxKernel), grad: causalSoftmaxGrad},
		opCausalSoftmaxGrad: {name: "causal_softmax_grad", cpu: cpu(causalSoftmaxGradKernel, causalSoftmaxGradKernel), backward: true},
	})
}

// Attention returns scaled dot-product attention of queries q [..., tq, d]
// over keys k [..., tk, d] and values v [..., tk, dv], usually
// [batch, heads, time, d]:
//
//	softmax(q·kᵀ/√d)·v
//
// of shape [..., tq, dv], the softmax over the keys. With causal set, query
// i attends only to keys j ≤ i + tk - tq (CausalMask), so with tq = tk each
// position sees itself and the positions before it. It is composed of
// BatchMatMul, Scale and Softmax, so its gradient is theirs; causal, the
// softmax is Softmax(CausalMask(x)) in one op that computes only the keys
// each query sees (about half of them). The weights [..., tq, tk] are held
// for the backward pass.
// It panics with an error wrapping ErrShape if the shapes do not fit, or if
// causal and tq > tk (a query would see no key).
func Attention(q, k, v *Node, causal bool) *Node {
	return BatchMatMul(attentionWeights("attention", q, k, v, causal), v, false, false)
}

// AttentionDropout is Attention with inverted dropout on the attention
// weights after the softmax, as Dropout(weights, step, rate, seed, stream)
// draws it; a rate of 0 is Attention.
// It panics as Attention and Dropout do.
func AttentionDropout(q, k, v *Node, causal bool, step *Node, rate float64, seed, stream uint64) *Node {
	w := attentionWeights("attention_dropout", q, k, v, causal)
	return BatchMatMul(Dropout(w, step, rate, seed, stream), v, false, false)
}

// attentionWeights checks the shapes and returns softmax(q·kᵀ/√d), causally
// masked if asked. The scale goes on q, the smaller operand when d < tk.
func attentionWeights(op string, q, k, v *Node, causal bool) *Node {
	g := graphOf(op, q, k, v)
	rq, rk, rv := len(q.shape), len(k.shape), len(v.shape)
	switch {
	case rq < 2 || rk != rq || !slices.Equal(q.shape[:rq-2], k.shape[:rk-2]) || q.shape[rq-1] != k.shape[rk-1]:
		panic(shapeErr(g, op, fmt.Sprintf("want q [..., tq, d] and k [..., tk, d] with equal batch axes, got %v and %v", q.shape, k.shape)))
	case rv != rk || !slices.Equal(k.shape[:rk-1], v.shape[:rv-1]):
		panic(shapeErr(g, op, fmt.Sprintf("want k [..., tk, d] and v [..., tk, dv] with equal batch axes, got %v and %v", k.shape, v.shape)))
	case causal && q.shape[rq-2] > k.shape[rk-2]:
		panic(shapeErr(g, op, fmt.Sprintf("want no more queries than keys for a causal mask, got %v and %v", q.shape, k.shape)))
	}
	if d := q.shape[rq-1]; d > 0 {
		q = Scale(q, 1/math.Sqrt(float64(d)))
	}
	s := BatchMatMul(q, k, false, true)
	if causal {
		return s.g.add(opCausalSoftmax, s.shape, s)
	}
	return Softmax(s)
}

// CausalMask returns x [..., tq, tk] with every element [..., i, j] where j >
// i + tk - tq set to -Inf: after a softmax over the last axis, query i gives
// no weight to keys after it (with tq = tk, the upper triangle above the
// diagonal). The gradient passes through the other elements.
// It panics with an error wrapping ErrShape if x has fewer than two axes or
// tq > tk (a row would be all -Inf).
func CausalMask(x *Node) *Node {
	const op = "causal_mask"
	g := graphOf(op, x)
	r := len(x.shape)
	if r < 2 || x.shape[r-2] > x.shape[r-1] {
		panic(shapeErr(g, op, fmt.Sprintf("want [..., tq, tk] with tq ≤ tk, got %v", x.shape)))
	}
	return causalFill(x, math.Inf(-1))
}

func causalFill(x *Node, value float64) *Node {
	out := x.g.add(opCausalMask, x.shape, x)
	out.value = value
	return out
}

// causalMaskGrad: the masked elements are constants, so their gradient is
// zero; the mask with 0 gives it.
func causalMaskGrad(_, dy *Node) []*Node { return []*Node{causalFill(dy, 0)} }

func causalMaskKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, r := in[0], len(n.shape)
	tq, tk, v := n.shape[r-2], n.shape[r-1], T(n.value)
	return func() { causalMask(out, x, tq, tk, v) }
}

// causalMask is: out = x, with out[..., i, j] = v where j > i + tk - tq.
func causalMask[T Float](out, x []T, tq, tk int, v T) {
	copy(out, x)
	if tk == 0 {
		return
	}
	for r := 0; r < len(out)/tk; r++ {
		row := out[r*tk : (r+1)*tk]
		for j := r%tq + tk - tq + 1; j < tk; j++ {
			row[j] = v
		}
	}
}

// causalSoftmaxGrad: the softmax's gradient over the keys each query sees;
// the others had constant weights, 0.
func causalSoftmaxGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opCausalSoftmaxGrad, n.shape, n, dy)}
}

func causalSoftmaxKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, r := in[0], len(n.shape)
	tq, tk := n.shape[r-2], n.shape[r-1]
	return func() { causalSoftmax(out, x, tq, tk) }
}

func causalSoftmaxGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, r := in[0], in[1], len(n.shape)
	tq, tk := n.shape[r-2], n.shape[r-1]
	return func() { causalSoftmaxGradRows(out, y, dy, tq, tk) }
}

// causalSoftmax is softmaxRows(causalMask(x, -Inf)) without the masked
// keys: row i of each [tq, tk] matrix is the softmax of its first
// i + tk - tq + 1 elements, then zeros. Keep in sync with gt_causal_softmax
// in kernels_cuda.go.
func causalSoftmax[T Float](out, x []T, tq, tk int) {
	if tk == 0 {
		return
	}
	for r := 0; r < len(out)/tk; r++ {
		n := r%tq + tk - tq + 1
		row := r * tk
		softmaxRows(out[row:row+n], x[row:row+n], n, false)
		clear(out[row+n : row+tk])
	}
}

// causalSoftmaxGradRows is softmaxGrad over the elements causalSoftmax
// computes, and 0 for the others. Keep in sync with gt_causal_softmax_grad
// in kernels_cuda.go.
func causalSoftmaxGradRows[T Float](out, y, dy []T, tq, tk int) {
	if tk == 0 {
		return
	}
	for r := 0; r < len(out)/tk; r++ {
		n := r%tq + tk - tq + 1
		row := r * tk
		softmaxGrad(out[row:row+n], y[row:row+n], dy[row:row+n], n)
		clear(out[row+n : row+tk])
	}
}
