package graph

import (
	"fmt"
	"math"
	"strconv"
)

// Graph is a static dataflow graph built once by tracing a step function and
// then compiled into Programs that replay it.
//
// A Graph is not safe for concurrent building; build one per replica. Its
// Programs may run concurrently with each other once compiled.
type Graph struct {
	dt       DType
	nodes    []*Node // in creation order, which is a topological order
	vars     map[*Variable]*Node
	varOrder []*Variable
	mask     *Node
	scope    string
}

// New returns an empty graph computing in dt.
// It panics with an error wrapping ErrDType if dt is not Float32 or Float64.
func New(dt DType) *Graph {
	dt.check("new")
	return &Graph{dt: dt, vars: make(map[*Variable]*Node)}
}

// DType returns the graph's element type.
func (g *Graph) DType() DType { return g.dt }

// The leaf ops: a node Feed writes, a Variable read in place, a constant.
var (
	opPlaceholder = newOp()
	opVar         = newOp()
	opConst       = newOp()
)

func init() {
	defineOps(map[opKind]opDef{
		opPlaceholder: {name: "placeholder", buf: bufFed},
		opVar:         {name: "var", buf: bufVar},
		opConst:       {name: "const", buf: bufConst},
	})
}

// Placeholder returns an input node of the given shape, filled by
// Program.Feed before each Run (zeros until fed).
// It panics with an error wrapping ErrShape if a dimension is negative.
func (g *Graph) Placeholder(name string, shape ...int) *Node {
	checkDims("placeholder "+quote(name), shape)
	n := g.add(opPlaceholder, shape)
	n.name = name
	return n
}

// Var returns the node reading v. Repeated reads of v return the same node.
// It panics with an error wrapping ErrDType if v's dtype is not the graph's.
func (g *Graph) Var(v *Variable) *Node {
	if n, ok := g.vars[v]; ok {
		return n
	}
	if v.dt != g.dt {
		panic(g.err("var "+quote(v.name), fmt.Sprintf("want dtype %v, got %v", g.dt, v.dt), ErrDType))
	}
	n := g.add(opVar, v.shape)
	n.name = v.name
	n.v = v
	g.vars[v] = n
	g.varOrder = append(g.varOrder, v)
	return n
}

// Variables returns the variables this graph reads, in first-read order.
func (g *Graph) Variables() []*Variable { return append([]*Variable(nil), g.varOrder...) }

// Const returns a node of the given shape with every element equal to value.
// It panics with an error wrapping ErrShape if a dimension is negative.
func (g *Graph) Const(value float64, shape ...int) *Node {
	checkDims("const", shape)
	n := g.add(opConst, shape)
	n.value = value
	return n
}

// SetMask records n as the per-example weights of the batch ([batch]: 1 for a
// real example, 0 for padding). Losses read it through Mask; the graph itself
// does not apply it.
// It panics with an error wrapping ErrShape if n is not a vector, and with
// ErrGraph if n belongs to another graph.
func (g *Graph) SetMask(n *Node) {
	if n != nil {
		g.own("set mask", n)
		if len(n.shape) != 1 {
			panic(g.err("set mask", fmt.Sprintf("want a vector [batch], got %v", n.shape), ErrShape))
		}
	}
	g.mask = n
}

// Mask returns the node given to SetMask, or nil if none.
func (g *Graph) Mask() *Node { return g.mask }

// SetScope makes name the scope of nodes built from now on, nested inside the
// current scope ("model/dense_1"), until restore is called. The scope prefixes
// node names and appears in error messages.
func (g *Graph) SetScope(name string) (restore func()) {
	prev := g.scope
	if prev != "" && name != "" {
		g.scope = prev + "/" + name
	} else {
		g.scope = name
	}
	return func() { g.scope = prev }
}

// Scope returns the current scope set by SetScope.
func (g *Graph) Scope() string { return g.scope }

// NumNodes returns how many nodes the graph holds, backward nodes included.
func (g *Graph) NumNodes() int { return len(g.nodes) }

func (g *Graph) add(op opKind, shape []int, in ...*Node) *Node {
	n := &Node{
		g:     g,
		id:    len(g.nodes),
		op:    op,
		in:    in,
		shape: append([]int{}, shape...),
		scope: g.scope,
	}
	n.size = 1
	for _, d := range shape {
		n.size *= d
	}
	g.nodes = append(g.nodes, n)
	return n
}

func (g *Graph) err(op, msg string, kind error) *Error {
	return &Error{Scope: g.scope, Op: op, Msg: msg, Err: kind}
}

// own panics unless every node belongs to g.
func (g *Graph) own(op string, ns ...*Node) {
	for _, n := range ns {
		if n == nil {
			panic(g.err(op, "want a node, got nil", ErrGraph))
		}
		if n.g != g {
			panic(g.err(op, fmt.Sprintf("node %s belongs to another graph", n), ErrGraph))
		}
	}
}

// Node is one value in a graph: an input, a variable read, a constant or the
// result of an op. Nodes are immutable once built.
type Node struct {
	g     *Graph
	id    int // index in g.nodes
	op    opKind
	in    []*Node
	shape []int // immutable
	size  int
	name  string // explicit name for placeholders and variables
	scope string

	// Op parameters; which ones are used depends on op, and each has one
	// meaning wherever it is used.
	act    Activation
	value  float64 // Const, Fill: every element; CausalMask: the masked elements
	factor float64 // Scale, SumAxis, BroadcastScalar, BroadcastAxis, AllReduce, sum_axes, broadcast_to: the multiplier
	rate   float64 // DropoutMask: the probability of a zero
	axis   int
	mode   bcast
	transA bool
	transB bool
	v      *Variable
	win    *window    // Im2Col, Col2Im, MaxPool, AvgPool and their gradients
	coll   Collective // AllReduce
	seed   uint64     // DropoutMask: the stream's seed
	stream uint64     // DropoutMask: the stream within the seed (layer, replica)

	// Shape, product, normalization and attention ops.
	perm []int    // Transpose: output axis i is input axis perm[i]
	from int      // Slice and its gradient: the first index along axis
	norm *normDef // LayerNorm, RMSNorm, BatchNorm, their statistics and gradients
	// SelfAttention, its weights and its gradients: keys after the query
	// are masked.
	causal bool
}

// Shape returns a copy of the node's shape; a scalar has shape [].
func (n *Node) Shape() []int { return append([]int{}, n.shape...) }

// Len returns the number of elements, the product of Shape.
func (n *Node) Len() int { return n.size }

// Inputs returns the node's operands, in order (none for a placeholder, a
// variable read or a constant). The slice is a copy.
func (n *Node) Inputs() []*Node { return append([]*Node(nil), n.in...) }

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.g }

// Name returns the node's name: the name given to Placeholder or the
// variable's name, else "SCOPE/OP_ID", e.g. "dense_1/matmul_7".
func (n *Node) Name() string {
	if n.name != "" {
		return n.name
	}
	s := ops[n.op].name + "_" + strconv.Itoa(n.id)
	if n.scope != "" {
		s = n.scope + "/" + s
	}
	return s
}

// String returns the name followed by the shape, e.g. "dense_1/matmul_7[64 16]".
func (n *Node) String() string {
	if n == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s%v", n.Name(), n.shape)
}

// Same reports whether g and h are the same computation: the same dtype,
// nodes with the same ops, shapes, parameters, names and scopes, wired the
// same way, reading the same variables (by identity), with the same mask.
// All-reductions match whatever collective they name, since each trace has
// its own. A strategy uses it to recognise a step function it has traced
// already under another closure, and so trace it once.
func (g *Graph) Same(h *Graph) bool {
	if g == h {
		return true
	}
	if g == nil || h == nil || g.dt != h.dt || len(g.nodes) != len(h.nodes) || (g.mask == nil) != (h.mask == nil) ||
		(g.mask != nil && g.mask.id != h.mask.id) {
		return false
	}
	for i, a := range g.nodes {
		if !a.same(h.nodes[i]) {
			return false
		}
	}
	return true
}

func (a *Node) same(b *Node) bool {
	if a.op != b.op || a.size != b.size || a.name != b.name || a.scope != b.scope || a.act != b.act ||
		math.Float64bits(a.value) != math.Float64bits(b.value) ||
		math.Float64bits(a.factor) != math.Float64bits(b.factor) || math.Float64bits(a.rate) != math.Float64bits(b.rate) || a.axis != b.axis || a.mode != b.mode ||
		a.transA != b.transA || a.transB != b.transB || a.v != b.v || a.seed != b.seed || a.stream != b.stream ||
		(a.coll == nil) != (b.coll == nil) || (a.win == nil) != (b.win == nil) || (a.win != nil && *a.win != *b.win) ||
		len(a.in) != len(b.in) || len(a.shape) != len(b.shape) {
		return false
	}
	if !a.sameOpParams(b) {
		return false
	}
	for i, in := range a.in {
		if in.id != b.in[i].id {
			return false
		}
	}
	for i, d := range a.shape {
		if d != b.shape[i] {
			return false
		}
	}
	return true
}

func shapeErr(g *Graph, op, msg string) *Error { return g.err(op, msg, ErrShape) }

// graphOf returns the graph of the first node, checking every node is from it.
func graphOf(op string, ns ...*Node) *Graph {
	for _, n := range ns {
		if n == nil {
			panic(&Error{Op: op, Msg: "want a node, got nil", Err: ErrGraph})
		}
	}
	g := ns[0].g
	g.own(op, ns...)
	return g
}
