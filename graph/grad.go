package graph

import (
	"cmp"
	"fmt"
	"slices"
)

// Gradients appends to the graph the nodes computing dy/dx for each x in xs
// (reverse-mode differentiation) and returns them aligned with xs. Each
// gradient has its x's shape. A node that does not reach y gets a zero
// gradient node. Each returned node is distinct and gets a buffer of its own
// that every Run rewrites, so callers may modify gradient buffers in place
// between Runs (an all-reduce across replicas, clipping). Where a node feeds several consumers its gradient
// contributions are summed by one fused node.
//
// Only nodes on a path from some x to y are differentiated, so gradients
// nobody asked for (say, with respect to the input batch) cost nothing.
//
// It panics with an error wrapping ErrShape if y is not a scalar (one
// element), and ErrGraph if a node is from another graph or nil.
func (g *Graph) Gradients(y *Node, xs []*Node) []*Node {
	g.own("gradients", y)
	g.own("gradients", xs...)
	if y.size != 1 {
		panic(g.err("gradients", fmt.Sprintf("want a scalar to differentiate, got shape %v", y.shape), ErrShape))
	}
	last := y.id
	// reach: y depends on the node, through differentiable edges.
	reach := make([]bool, last+1)
	reach[last] = true
	for id := last; id >= 0; id-- {
		n := g.nodes[id]
		if !reach[id] || ops[n.op].stopsGradient {
			continue
		}
		for _, in := range n.in {
			reach[in.id] = true
		}
	}
	// dep: the node depends on some x.
	dep := make([]bool, last+1)
	for _, x := range xs {
		if x.id <= last {
			dep[x.id] = true
		}
	}
	for id := 0; id <= last; id++ {
		n := g.nodes[id]
		if dep[id] || ops[n.op].stopsGradient {
			continue
		}
		for _, in := range n.in {
			if dep[in.id] {
				dep[id] = true
				break
			}
		}
	}

	contrib := make([][]*Node, last+1)
	grads := make([]*Node, last+1)
	contrib[last] = []*Node{g.Const(1, y.shape...)}
	for id := last; id >= 0; id-- {
		n := g.nodes[id]
		if !reach[id] || !dep[id] || len(contrib[id]) == 0 {
			continue
		}
		dy := contrib[id][0]
		if len(contrib[id]) > 1 {
			dy = g.sumContributions(n.shape, contrib[id])
		}
		grads[id] = dy
		if ops[n.op].stopsGradient || len(n.in) == 0 {
			continue
		}
		restore := g.withScope(n.scope)
		ins := n.vjp(dy)
		restore()
		for i, in := range n.in {
			if ins[i] != nil && reach[in.id] && dep[in.id] {
				contrib[in.id] = append(contrib[in.id], ins[i])
			}
		}
	}
	// Callers write gradient buffers in place between Runs (an all-reduce,
	// clipping), so each returned node is distinct and recomputed by every
	// Run into a buffer of its own: never a constant, an input, an alias or
	// another x's gradient.
	out := make([]*Node, len(xs))
	seen := make(map[*Node]bool, len(xs))
	for i, x := range xs {
		d := (*Node)(nil)
		if x.id <= last {
			d = grads[x.id]
		}
		switch {
		case d == nil:
			d = g.add(opFill, x.shape)
		case seen[d] || !d.ownsBuffer():
			d = g.add(opCopy, d.shape, d)
		}
		seen[d] = true
		out[i] = d
	}
	return out
}

// withScope sets the scope exactly (not nested), so backward nodes carry the
// scope of the forward node they differentiate.
func (g *Graph) withScope(s string) func() {
	prev := g.scope
	g.scope = s
	return func() { g.scope = prev }
}

func (g *Graph) addN(shape []int, ns []*Node) *Node {
	return g.add(opAddN, shape, ns...)
}

// sumContributions returns the sum of a node's gradient contributions cs.
// Where they are the gradients of slices that tile the node along one axis
// (the parts of a Split, as attention's q, k and v), each is its dy among
// zeros, so the sum is the dys joined by Concat: nothing is zeroed or
// added. Otherwise it is one add_n.
func (g *Graph) sumContributions(shape []int, cs []*Node) *Node {
	parts := slices.Clone(cs)
	slices.SortFunc(parts, func(a, b *Node) int { return cmp.Compare(a.from, b.from) })
	axis, at := parts[0].axis, 0
	for _, p := range parts {
		if p.op != opSliceGrad || p.axis != axis || p.from != at {
			return g.addN(shape, cs)
		}
		at += p.in[0].shape[axis]
	}
	if at != shape[axis] {
		return g.addN(shape, cs)
	}
	for i, p := range parts {
		parts[i] = p.in[0]
	}
	return Concat(axis, parts...)
}

func broadcastScalar(dy *Node, shape []int, factor float64) *Node {
	out := dy.g.add(opBroadcastScalar, shape, dy)
	out.factor = factor
	return out
}

func broadcastAxis(dy *Node, shape []int, axis int, factor float64) *Node {
	out := dy.g.add(opBroadcastAxis, shape, dy)
	out.axis = axis
	out.factor = factor
	return out
}

// vjp returns the gradient contribution of dy to each input of n (nil where
// an input gets none), from the op's grad in ops.
func (n *Node) vjp(dy *Node) []*Node {
	if grad := ops[n.op].grad; grad != nil {
		return grad(n, dy)
	}
	panic(n.g.err("gradients", fmt.Sprintf("want a first-order graph, got a gradient of %s (second derivatives are not supported)", n), ErrGraph))
}

// The gradients of the ops in ops.go, in the order of opKind; each is an
// opDef.grad.

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

func activateGrad(n, dy *Node) []*Node {
	var dz *Node
	if n.act.needsInput() {
		dz = n.g.add(opActGradX, n.shape, n.in[0], dy)
	} else {
		dz = n.g.add(opActGradY, n.shape, n, dy)
	}
	dz.act = n.act
	return []*Node{dz}
}

func addGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(dy, n.in[0].shape), reduceTo(dy, n.in[1].shape)}
}

func subGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(dy, n.in[0].shape), reduceTo(Neg(dy), n.in[1].shape)}
}

func mulGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{reduceTo(Mul(dy, in[1]), in[0].shape), reduceTo(Mul(dy, in[0]), in[1].shape)}
}

func divGrad(n, dy *Node) []*Node {
	in := n.in
	// d(a/b)/db = -a/b² = -(a/b)/b
	return []*Node{reduceTo(Div(dy, in[1]), in[0].shape), reduceTo(Neg(Div(Mul(dy, n), in[1])), in[1].shape)}
}

func scaleGrad(n, dy *Node) []*Node  { return []*Node{Scale(dy, n.factor)} }
func negGrad(_, dy *Node) []*Node    { return []*Node{Neg(dy)} }
func expGrad(n, dy *Node) []*Node    { return []*Node{Mul(dy, n)} }
func logGrad(n, dy *Node) []*Node    { return []*Node{Div(dy, n.in[0])} }
func squareGrad(n, dy *Node) []*Node { return []*Node{Mul(dy, Scale(n.in[0], 2))} }
func sqrtGrad(n, dy *Node) []*Node   { return []*Node{Div(Scale(dy, 0.5), n)} }

func softmaxOpGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opSoftmaxGrad, n.shape, n, dy)}
}

func logSoftmaxOpGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opLogSoftmaxGrad, n.shape, n, dy)}
}

func sparseXentOpGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{nil, n.g.add(opSparseXentGrad, in[1].shape, in[0], in[1], dy)}
}

func softmaxXentOpGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	return []*Node{
		g.add(opXentLabelGrad, in[1].shape, in[1], dy),
		g.add(opSoftmaxXentGrad, in[1].shape, in[0], in[1], dy),
	}
}

func sigmoidXentOpGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{Mul(Neg(in[1]), dy), n.g.add(opSigmoidXentGrad, in[1].shape, in[0], in[1], dy)}
}

func sumGrad(n, dy *Node) []*Node { return []*Node{broadcastScalar(dy, n.in[0].shape, 1)} }

func meanGrad(n, dy *Node) []*Node {
	f := 0.0
	if n.in[0].size > 0 {
		f = 1 / float64(n.in[0].size)
	}
	return []*Node{broadcastScalar(dy, n.in[0].shape, f)}
}

func sumAxisGrad(n, dy *Node) []*Node {
	return []*Node{broadcastAxis(dy, n.in[0].shape, n.axis, n.factor)}
}

func reshapeGrad(n, dy *Node) []*Node { return []*Node{Reshape(dy, n.in[0].shape...)} }
func copyGrad(_, dy *Node) []*Node    { return []*Node{dy} }

func addNGrad(n, dy *Node) []*Node {
	out := make([]*Node, len(n.in))
	for i := range out {
		out[i] = dy
	}
	return out
}

func broadcastScalarGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(Scale(Sum(dy), n.factor), n.in[0].shape)}
}

func broadcastAxisGrad(n, dy *Node) []*Node {
	return []*Node{Scale(SumAxis(dy, n.axis), n.factor)}
}
