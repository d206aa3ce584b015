package graph

// The collective op.
var (
	opAllReduce = newOp() // factor·Σ over the participants of a Collective
)

func init() {
	defineOps(map[opKind]opDef{
		opAllReduce: {name: "all_reduce", cpu: cpu(allReduceKernel, allReduceKernel), grad: allReduceGrad, collective: true},
	})
}

// Collective joins the Programs of several participants (replicas) at a
// reduction in the middle of their Runs. Calls match by order: the k-th call
// on each participant is one reduction, so every participant must run the
// same collective nodes in the same order (Programs compiled from graphs
// built alike do).
type Collective interface {
	// AllReduceF32 replaces buf, on every participant, by the elementwise
	// sum over participants of the bufs they passed to the matching call,
	// bit-identical everywhere. It blocks until every participant has
	// called. It panics when the reduction is abandoned (a participant
	// failed), and Run turns the panic into its error.
	AllReduceF32(buf []float32)
	// AllReduceF64 is AllReduceF32 for float64 Programs.
	AllReduceF64(buf []float64)
}

// AllReduce returns scale·Σ x over every participant of c, the same on each
// (scale 1 for a sum, 1/n for a mean over n participants). Run calls c in
// the middle of the step, so the rest of the step uses the reduced value.
//
// It is differentiable: the gradient of a cross-participant sum with respect
// to each participant's x is the cross-participant sum of the gradients of
// its output, so the backward node is another AllReduce of dy through c.
// Gradients of a loss summed over participants are then exact when each
// participant sums its gradients with the others' (as a strategy does).
// It panics with an error wrapping ErrGraph if c is nil.
func AllReduce(x *Node, c Collective, scale float64) *Node {
	const op = "all_reduce"
	g := graphOf(op, x)
	if c == nil {
		panic(g.err(op, "want a Collective, got nil", ErrGraph))
	}
	out := g.add(opAllReduce, x.shape, x)
	out.coll, out.factor = c, scale
	return out
}

// Collectives returns the AllReduce nodes the program runs, in the order Run
// reaches them: forward ones, then those of the backward pass.
func (p *Program) Collectives() []*Node {
	var out []*Node
	for _, s := range p.steps {
		if ops[s.n.op].collective {
			out = append(out, s.n)
		}
	}
	return out
}

func allReduceGrad(n, dy *Node) []*Node { return []*Node{AllReduce(dy, n.coll, n.factor)} }

func allReduceKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	c, scale := n.coll, T(n.factor)
	var reduce func()
	switch buf := any(out).(type) {
	case []float32:
		reduce = func() { c.AllReduceF32(buf) }
	case []float64:
		reduce = func() { c.AllReduceF64(buf) }
	}
	return func() {
		copy(out, x)
		reduce()
		if scale != 1 {
			for i := range out {
				out[i] *= scale
			}
		}
	}
}
