package graph

import (
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/internal/blas"
)

// The matrix products.
var (
	opMatMul      = newOp()
	opDense       = newOp()
	opBatchMatMul = newOp() // products over broadcast batch axes, one gemm per block
)

func init() {
	defineOps(map[opKind]opDef{
		opMatMul:      {name: "matmul", cpu: cpu(matMulKernel, matMulKernel), grad: matMulGrad, product: true},
		opDense:       {name: "dense", cpu: cpu(denseKernel, denseKernel), grad: denseGrad},
		opBatchMatMul: {name: "batch_matmul", cpu: cpu(batchMatMulKernel, batchMatMulKernel), grad: batchMatMulGrad},
	})
}

// MatMul returns the matrix product a·b of a [m,k] and b [k,n], shape [m,n].
// It panics with an error wrapping ErrShape if a or b is not a matrix or the
// inner dimensions differ.
func MatMul(a, b *Node) *Node { return matMul(a, b, false, false) }

func matMul(a, b *Node, ta, tb bool) *Node {
	g := graphOf("matmul", a, b)
	if len(a.shape) != 2 || len(b.shape) != 2 {
		panic(shapeErr(g, "matmul", fmt.Sprintf("want two matrices, got %v x %v", a.shape, b.shape)))
	}
	m, k := a.shape[0], a.shape[1]
	if ta {
		m, k = k, m
	}
	k2, n := b.shape[0], b.shape[1]
	if tb {
		k2, n = n, k2
	}
	if k != k2 {
		panic(shapeErr(g, "matmul", fmt.Sprintf("want inner dimensions equal, got %v x %v", a.shape, b.shape)))
	}
	out := g.add(opMatMul, []int{m, n}, a, b)
	out.transA, out.transB = ta, tb
	return out
}

// MatMulT returns op(a)·op(b) for matrices a and b, where op transposes
// its operand when transA or transB is set: MatMulT(h, table, false, true)
// is h·tableᵀ, the logits of an output layer tied to an embedding table
// [vocab, d]. The transposes cost nothing: BLAS reads the operands in
// place. MatMul(a, b) is MatMulT(a, b, false, false).
// It panics with an error wrapping ErrShape if a or b is not a matrix or
// the inner dimensions differ.
func MatMulT(a, b *Node, transA, transB bool) *Node { return matMul(a, b, transA, transB) }

// Dense returns act(x·w + b) for x [m,k], w [k,n] and b [n] (b may be nil),
// computed as one matrix product followed by one pass over the output.
// It panics with an error wrapping ErrShape if the shapes do not fit.
func Dense(x, w, b *Node, act Activation) *Node {
	ns := []*Node{x, w}
	if b != nil {
		ns = append(ns, b)
	}
	g := graphOf("dense", ns...)
	checkAct(g, "dense", act)
	if len(x.shape) != 2 || len(w.shape) != 2 {
		panic(shapeErr(g, "dense", fmt.Sprintf("want input and kernel matrices, got %v and %v", x.shape, w.shape)))
	}
	if x.shape[1] != w.shape[0] {
		panic(shapeErr(g, "dense", fmt.Sprintf("want input width %d, got %d", w.shape[0], x.shape[1])))
	}
	if b != nil && (len(b.shape) != 1 || b.shape[0] != w.shape[1]) {
		panic(shapeErr(g, "dense", fmt.Sprintf("want bias shape [%d], got %v", w.shape[1], b.shape)))
	}
	if act.unfused() {
		return Activate(Dense(x, w, b, Linear), act)
	}
	out := g.add(opDense, []int{x.shape[0], w.shape[1]}, ns...)
	out.act = act
	return out
}

// BatchMatMul returns the matrix products of a [..., m, k] and b [..., k, n]
// over their leading (batch) axes, shape [batch..., m, n]:
//
//	out[..., i, j] = Σ_p op(a)[..., i, p]·op(b)[..., p, j]
//
// where op swaps the last two axes of its operand when transA or transB is
// set (a is then stored [..., k, m], b [..., n, k]). The batch axes
// broadcast as NumPy's do: aligned from the right, an axis of length 1 or
// a missing one repeats, so [B,H,T,D] x [D,E] multiplies every [T,D] block
// by one [D,E] and [1,H,T,D] x [B,1,D,E] gives [B,H,T,E]. The gradient of
// a broadcast operand sums over the axes it was repeated along.
//
// When b has no batch (or only axes of length 1) and a is not transposed,
// the product is one gemm over a's rows stacked, built as Reshape, MatMul
// and Reshape; otherwise it is one gemm per block, in one batched call on
// a device.
// It panics with an error wrapping ErrShape if a or b has fewer than two
// axes, the inner dimensions differ or the batch axes do not broadcast.
func BatchMatMul(a, b *Node, transA, transB bool) *Node {
	const op = "batch_matmul"
	g := graphOf(op, a, b)
	ra, rb := len(a.shape), len(b.shape)
	if ra < 2 || rb < 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want operands of at least two axes, got %v x %v", a.shape, b.shape)))
	}
	m, k := a.shape[ra-2], a.shape[ra-1]
	if transA {
		m, k = k, m
	}
	k2, n := b.shape[rb-2], b.shape[rb-1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		panic(shapeErr(g, op, fmt.Sprintf("want inner dimensions equal, got %v x %v", a.shape, b.shape)))
	}
	batch, ok := tryBroadcast(a.shape[:ra-2], b.shape[:rb-2])
	if !ok {
		panic(shapeErr(g, op, fmt.Sprintf("want batch axes that broadcast, got %v x %v", a.shape, b.shape)))
	}
	shape := slices.Concat(batch, []int{m, n}) // batch may be a's own axes
	if !transA && sizeOf(b.shape[:rb-2]) == 1 {
		// Every block of a times one matrix: a's blocks stacked are the
		// rows of one product.
		a2 := Reshape(a, sizeOf(batch)*m, k)
		b2 := Reshape(b, b.shape[rb-2], b.shape[rb-1])
		return Reshape(matMul(a2, b2, false, transB), shape...)
	}
	out := g.add(opBatchMatMul, shape, a, b)
	out.transA, out.transB = transA, transB
	return out
}

// batchGemm is a batch_matmul node's products: one gemm of m×k by k×n per
// block, with the operands' leading dimensions and, per block, the element
// offsets of its a and b blocks (equal offsets where an operand repeats).
type batchGemm struct {
	m, n, k  int
	lda, ldb int
	a, b     []int
}

func batchGemmOf(n *Node) batchGemm {
	as, bs := n.in[0].shape, n.in[1].shape
	ra, rb, ro := len(as), len(bs), len(n.shape)
	bg := batchGemm{m: n.shape[ro-2], n: n.shape[ro-1], k: as[ra-1], lda: as[ra-1], ldb: bs[rb-1]}
	if n.transA {
		bg.k = as[ra-2]
	}
	batch := n.shape[:ro-2]
	bg.a = blockOffsets(batch, as[:ra-2], as[ra-2]*as[ra-1])
	bg.b = blockOffsets(batch, bs[:rb-2], bs[rb-2]*bs[rb-1])
	return bg
}

// blockOffsets returns, for each index of the batch shape out in row-major
// order, the element offset of the matching block of an operand whose
// batch shape in broadcasts to out, its blocks being block elements long.
func blockOffsets(out, in []int, block int) []int {
	lead := len(out) - len(in)
	strides := make([]int, len(out)) // in blocks' elements; 0 where in repeats
	s := block
	for i := len(in) - 1; i >= 0; i-- {
		if in[i] != 1 {
			strides[lead+i] = s
		}
		s *= in[i]
	}
	offs := make([]int, sizeOf(out))
	idx := make([]int, len(out))
	for b := range offs {
		for i, v := range idx {
			offs[b] += v * strides[i]
		}
		for i := len(out) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < out[i] {
				break
			}
			idx[i] = 0
		}
	}
	return offs
}

func matMulGrad(n, dy *Node) []*Node {
	da, db := productGrad(n, dy, matMul)
	return []*Node{da, db}
}

// productGrad returns the gradients of product n = op(a)·op(b) built with
// mul (matMul, BatchMatMul), each as its operand is stored: dA = dY·op(b)ᵀ,
// dB = op(a)ᵀ·dY, transposed back where the operand was.
func productGrad(n, dy *Node, mul func(a, b *Node, ta, tb bool) *Node) (da, db *Node) {
	a, b, ta, tb := n.in[0], n.in[1], n.transA, n.transB
	if !ta {
		da = mul(dy, b, false, !tb)
	} else {
		da = mul(b, dy, tb, true)
	}
	if !tb {
		db = mul(a, dy, !ta, false)
	} else {
		db = mul(dy, a, true, ta)
	}
	return da, db
}

func denseGrad(n, dy *Node) []*Node {
	in := n.in
	dz := dy
	if n.act != Linear {
		dz = n.g.add(opActGradY, n.shape, n, dy)
		dz.act = n.act
	}
	out := []*Node{matMul(dz, in[1], false, true), matMul(in[0], dz, true, false)}
	if len(in) == 3 {
		out = append(out, SumAxis(dz, 0))
	}
	return out
}

// batchMatMulGrad differentiates each block's product as matMulGrad does,
// then sums each operand's gradient over the batch axes it was repeated
// along.
func batchMatMulGrad(n, dy *Node) []*Node {
	da, db := productGrad(n, dy, BatchMatMul)
	return []*Node{sumToBatch(da, n.in[0].shape), sumToBatch(db, n.in[1].shape)}
}

// sumToBatch sums d [batch..., r, c] over the batch axes that shape
// [..., r, c] lacks or has as 1, the gradient of an operand broadcast
// along them.
func sumToBatch(d *Node, shape []int) *Node {
	if slices.Equal(d.shape, shape) {
		return d
	}
	if lead := len(d.shape) - len(shape); lead > 0 {
		d = SumAxis(Reshape(d, append([]int{sizeOf(d.shape[:lead])}, d.shape[lead:]...)...), 0)
	}
	for i, s := range shape[:len(shape)-2] {
		if s == 1 && d.shape[i] != 1 {
			kept := slices.Clone(d.shape)
			kept[i] = 1
			d = Reshape(SumAxis(d, i), kept...)
		}
	}
	return d
}

type gemmFunc[T Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmFor picks Sgemm or Dgemm once at compile time, so steps call BLAS
// without a per-call type switch (which would allocate).
func gemmFor[T Float]() gemmFunc[T] {
	var z T
	switch any(z).(type) {
	case float32:
		return any(gemmFunc[float32](blas.Sgemm)).(gemmFunc[T])
	default:
		return any(gemmFunc[float64](blas.Dgemm)).(gemmFunc[T])
	}
}

func matMulKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	a, b := in[0], in[1]
	m, nn := n.shape[0], n.shape[1]
	k, lda, ldb := n.in[0].shape[1], n.in[0].shape[1], n.in[1].shape[1]
	if n.transA {
		k = n.in[0].shape[0]
	}
	return func() { gemm(n.transA, n.transB, m, nn, k, 1, a, lda, b, ldb, 0, out, nn) }
}

func denseKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	x, w := in[0], in[1]
	var b []T
	if len(in) == 3 {
		b = in[2]
	}
	m, k, nn := n.in[0].shape[0], n.in[0].shape[1], n.shape[1]
	act := n.act
	return func() {
		gemm(false, false, m, nn, k, 1, x, k, w, nn, 0, out, nn)
		biasAct(out, b, nn, act)
	}
}

// batchMatMulKernel is the CPU kernel: one gemm per block, in the blocks'
// order.
func batchMatMulKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	a, b := in[0], in[1]
	bg := batchGemmOf(n)
	ta, tb, mn := n.transA, n.transB, bg.m*bg.n
	return func() {
		for i, ao := range bg.a {
			gemm(ta, tb, bg.m, bg.n, bg.k, 1, a[ao:], bg.lda, b[bg.b[i]:], bg.ldb, 0, out[i*mn:], bg.n)
		}
	}
}
