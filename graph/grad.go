package graph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/internal/loops"
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

// vjp returns the gradient contribution of dy to each input of n (nil where
// an input gets none), from the op's grad in ops.
func (n *Node) vjp(dy *Node) []*Node {
	if grad := ops[n.op].grad; grad != nil {
		return grad(n, dy)
	}
	panic(n.g.err("gradients", fmt.Sprintf("want a first-order graph, got a gradient of %s (second derivatives are not supported)", n), ErrGraph))
}

// The ops Gradients builds itself: the sum of a node's gradient
// contributions (add_n), a copy, and the zeros of an unused input.
var (
	opAddN = newOp()
	opCopy = newOp() // a copy with its own buffer
	opFill = newOp() // every element value, rewritten by each Run
)

func init() {
	defineOps(map[opKind]opDef{
		opAddN: {name: "add_n", cpu: cpu(addNKernel, addNKernel), grad: addNGrad},
		opCopy: {name: "copy", cpu: cpu(copyKernel, copyKernel), grad: copyGrad},
		opFill: {name: "zeros", cpu: cpu(fillKernel, fillKernel), backward: true},
	})
}

func addNGrad(n, dy *Node) []*Node {
	out := make([]*Node, len(n.in))
	for i := range out {
		out[i] = dy
	}
	return out
}

func addNKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	// in[0] + in[1] + ... in order, each sum a vector loop.
	return func() {
		if len(in) == 1 {
			copy(out, in[0])
			return
		}
		loops.AddTo(out, in[0], in[1])
		for _, x := range in[2:] {
			loops.AddTo(out, out, x)
		}
	}
}

func copyGrad(_, dy *Node) []*Node { return []*Node{dy} }

func copyKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() { copy(out, x) }
}

func fillKernel[T Float](n *Node, _ [][]T, out []T, _ map[int][]int) func() {
	c := T(n.value)
	return func() { fill(out, c) }
}
