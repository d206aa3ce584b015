package graph

import "fmt"

// Deferred products.
//
// In data-parallel training a dense layer's weight gradient is xᵀ·dz summed
// over the replicas. When a replica's share of the batch is smaller than the
// layer (128 rows against 784×512 weights), reading another replica's x and
// dz costs less than reading its product. So a strategy may take that
// product out of every replica's program (Defer) and have each replica
// compute its rows of the sum from every replica's operands (ProductRowsF32
// and ProductRowsF64), right before the optimizer reads them.

// Deferrable reports whether Defer may take n out of p: n is a matrix
// product that p computes, nothing else in p reads it, and neither operand
// is a variable's storage, which an update may change between Run and the
// deferred product. It is false on a device program: deferring saves the
// CPU's memory traffic, which a device does not share.
func (p *Program) Deferrable(n *Node) bool {
	if n == nil || p.dev != nil || n.g != p.g || n.id >= p.nodes || !p.have[n.id] || !ops[n.op].product {
		return false
	}
	for _, in := range n.in {
		if ops[aliasRoot(in).op].buf == bufVar {
			return false
		}
	}
	for id := n.id + 1; id < p.nodes; id++ {
		if !p.have[id] {
			continue
		}
		for _, in := range p.g.nodes[id].in {
			if in == n {
				return false
			}
		}
	}
	return true
}

// aliasRoot follows the nodes that share their input's buffer (reshapes,
// gradient stops) to the node that owns it.
func aliasRoot(n *Node) *Node {
	for ops[n.op].buf == bufAlias {
		n = n.in[0]
	}
	return n
}

// Defer removes product n from the steps Run takes: its buffer stays as
// the caller leaves it, and its operands are still computed. It panics
// with an error wrapping ErrGraph if n is not Deferrable.
func (p *Program) Defer(n *Node) {
	if !p.Deferrable(n) {
		panic(progErr("defer", fmt.Sprintf("want a matrix product of the program that nothing else reads, with no variable as operand, got %v", n), ErrGraph))
	}
	for i, s := range p.steps {
		if s.n == n {
			p.steps = append(p.steps[:i], p.steps[i+1:]...)
			return
		}
	}
}

// ProductRowsF32 computes rows [lo, hi) of product n from its operands'
// buffers as p's last Run left them, into dst, or adds them to dst if add.
// dst holds (hi-lo)·cols elements, rows one after the other. It is one
// BLAS call over those rows, so without add each element has the bits it
// has in the product computed whole; with add it is BLAS's beta = 1, which
// OpenBLAS computes as dst plus the finished element, one rounding, and the
// pure-Go BLAS term by term into dst.
//
// It panics with an error wrapping ErrGraph if n is not a product p holds or
// p is a device program, and ErrShape if the rows are out of range or dst is short; it returns
// without a result for a float64 program (use ProductRowsF64).
func (p *Program) ProductRowsF32(n *Node, lo, hi int, dst []float32, add bool) {
	p.checkProductRows(n, lo, hi, len(dst))
	if p.dt == Float32 {
		productRows(p.f32, n, lo, hi, dst, add)
	}
}

// ProductRowsF64 is ProductRowsF32 for float64 programs.
func (p *Program) ProductRowsF64(n *Node, lo, hi int, dst []float64, add bool) {
	p.checkProductRows(n, lo, hi, len(dst))
	if p.dt == Float64 {
		productRows(p.f64, n, lo, hi, dst, add)
	}
}

func (p *Program) checkProductRows(n *Node, lo, hi, dstLen int) {
	p.check("product rows", n)
	if p.dev != nil {
		panic(progErr("product rows", fmt.Sprintf("%v: a device program's buffers are on %v (Deferrable is false there)", n, p.dev.device()), ErrGraph))
	}
	if !ops[n.op].product {
		panic(progErr("product rows", fmt.Sprintf("want a matrix product, got %v", n), ErrGraph))
	}
	if lo < 0 || hi < lo || hi > n.shape[0] {
		panic(progErr("product rows", fmt.Sprintf("%v: want rows 0 ≤ lo ≤ hi ≤ %d, got [%d, %d)", n, n.shape[0], lo, hi), ErrShape))
	}
	if want := (hi - lo) * n.shape[1]; dstLen < want {
		panic(progErr("product rows", fmt.Sprintf("%v: want a destination of %d elements for rows [%d, %d), got %d", n, want, lo, hi, dstLen), ErrShape))
	}
}

func productRows[T Float](bufs [][]T, n *Node, lo, hi int, dst []T, add bool) {
	a, b := bufs[n.in[0].id], bufs[n.in[1].id]
	cols := n.shape[1]
	k, lda, ldb := n.in[0].shape[1], n.in[0].shape[1], n.in[1].shape[1]
	// Row i of op(A) starts at a[i·lda], or at a[i] when A is transposed.
	if n.transA {
		k = n.in[0].shape[0]
		a = a[lo:]
	} else {
		a = a[lo*lda:]
	}
	var beta T
	if add {
		beta = 1
	}
	gemmFor[T]()(n.transA, n.transB, hi-lo, cols, k, 1, a, lda, b, ldb, beta, dst, cols)
}
