package graph

import (
	"fmt"
)

// Float is the element type of the engine's generic code.
type Float interface{ ~float32 | ~float64 }

// compile allocates buffers for the nodes p holds and returns the steps.
func compile[T Float](p *Program, bufs [][]T) []step {
	g := p.g
	var steps []step
	aux := make(map[int][]int) // index state a kernel shares with its gradient (max-pool argmax)
	for id := 0; id < p.nodes; id++ {
		if !p.have[id] {
			continue
		}
		n := g.nodes[id]
		switch ops[n.op].buf {
		case bufVar:
			bufs[id] = varStorage[T](n.v)
			p.vars = append(p.vars, n.v)
			continue
		case bufAlias:
			// No op writes its inputs, so sharing is safe.
			bufs[id] = bufs[n.in[0].id]
			continue
		}
		bufs[id] = make([]T, n.size)
		switch ops[n.op].buf {
		case bufFed:
			continue
		case bufConst:
			fill(bufs[id], T(n.value))
			continue
		}
		steps = append(steps, step{n: n, fn: kernelFor(n, bufs, aux)})
	}
	return steps
}

func varStorage[T Float](v *Variable) []T {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(v.f32).([]T)
	}
	return any(v.f64).([]T)
}

func fill[T Float](x []T, v T) {
	for i := range x {
		x[i] = v
	}
}

// kernelFor returns the closure computing node n from its inputs' buffers,
// built by the op's CPU kernel in ops.
// Shapes were validated when n was built, so the loops are unchecked.
func kernelFor[T Float](n *Node, bufs [][]T, aux map[int][]int) func() {
	out := bufs[n.id]
	in := make([][]T, len(n.in))
	for i, x := range n.in {
		in[i] = bufs[x.id]
	}
	k := cpuFor[T](ops[n.op].cpu)
	if k == nil {
		panic(fmt.Errorf("graph: compile: no kernel for op %s (node %s)", ops[n.op].name, n))
	}
	return k(n, in, out, aux)
}

// vectorMin is the shortest row worth a call into package loops' vector
// loops; shorter rows (a reduction over the last axis has rows of one) stay
// in the inlined loop.
const vectorMin = 32
