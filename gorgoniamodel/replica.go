package gorgoniamodel

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gotrain/gotrain/graph"
)

// Replica is what a model's build function gets for the replica whose graph
// it builds: the graph, the parameters, the mask and count that make a loss
// exact on padded batches, and the outputs to return besides the loss. It
// is valid only while the build function runs. Its methods panic with an
// error wrapping ErrUsage when misused; the step that called the build
// function returns that error.
type Replica struct {
	m        *Model
	id       int // over every worker
	local    int // among this worker's replicas
	n        int
	g        *G.ExprGraph
	dt       tensor.Dtype
	rows     int
	training bool
	inputs   []*G.Node
	loss     *G.Node // what the build function returned

	params   []*G.Node         // bound to the model's variables, in the order asked
	vars     []*graph.Variable // aligned with params
	mask     *G.Node           // [rows], fed at each step; made on demand
	invCount *G.Node           // scalar 1/global count, fed at each step; made on demand
	oneHots  []oneHot
	outputs  []output
}

type oneHot struct {
	input   int // which input holds the labels
	classes int
	node    *G.Node // [rows, classes], fed from the labels
	buf     tensor.Tensor
}

type output struct {
	name string
	node *G.Node
}

// ID returns the replica's index in [0, NumReplicas), counted over every
// worker of a multi-worker strategy.
func (r *Replica) ID() int { return r.id }

// NumReplicas returns the number of replicas in sync, of every worker.
func (r *Replica) NumReplicas() int { return r.n }

// Graph returns the replica's graph.
func (r *Replica) Graph() *G.ExprGraph { return r.g }

// Training reports whether the graph is built for Step (true) or for
// Evaluate (false), as a model with dropout needs to know.
func (r *Replica) Training() bool { return r.training }

// Dtype returns the graph's element type: the strategy's dtype.
func (r *Replica) Dtype() tensor.Dtype { return r.dt }

// Param returns the replica's node for the model's parameter name, of the
// given shape: a variable of the strategy, created by replica 0 the first
// time with values from init (nil: zeros), whose storage every replica's
// node shares. It panics if the shape differs from the parameter's, if the
// name is asked twice in one graph, or if a replica other than 0 asks for a
// parameter replica 0's graph did not have.
func (r *Replica) Param(name string, shape []int, init Init) *G.Node {
	if name == "" {
		panic(usageError("Param: want a name, got \"\""))
	}
	for _, d := range shape {
		if d < 1 {
			panic(usageError("Param %q: want a shape of positive dimensions, got %v", name, shape))
		}
	}
	full := r.m.name + "/" + name
	for _, v := range r.vars {
		if v.Name() == full {
			panic(usageError("Param %q: asked twice in replica %d's graph; keep the node the first call returned", name, r.id))
		}
	}
	v, err := r.m.param(r.local, full, shape, init)
	if err != nil {
		panic(err)
	}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing(v)))
	n := G.NewTensor(r.g, r.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	r.params = append(r.params, n)
	r.vars = append(r.vars, v)
	return n
}

// backing is v's storage itself, which a tensor may wrap without copying.
func backing(v *graph.Variable) any {
	if f := v.F32(); f != nil {
		return f
	}
	return v.F64()
}

// Mask returns a vector [rows] holding 1 for each real example of the
// replica's shard and 0 for each row that pads a short last batch.
func (r *Replica) Mask() *G.Node {
	if r.mask == nil {
		r.mask = G.NewVector(r.g, r.dt, G.WithShape(r.rows), G.WithName("gorgoniamodel.mask"), G.WithValue(tensor.New(tensor.WithShape(r.rows), tensor.Of(r.dt))))
	}
	return r.mask
}

// GlobalCount returns a scalar holding 1 over the number of real examples
// in the global batch (all replicas together), fed at each step: a sum over
// the replica's real rows times it sums over replicas to the batch mean.
func (r *Replica) GlobalCount() *G.Node {
	if r.invCount == nil {
		r.invCount = G.NewScalar(r.g, r.dt, G.WithName("gorgoniamodel.inverse_global_count"), G.WithValue(scalar(r.dt, 0)))
	}
	return r.invCount
}

// AverageLoss returns Σ(mask ⊙ perExample) / (examples in the global batch):
// the replica's share of the batch's mean loss (TensorFlow's
// compute_average_loss). perExample is a vector with one loss per row of the
// shard. The replicas' values sum to the mean over the real examples of the
// global batch, and their summed gradients are its gradient, for any
// replica count and on a padded last batch.
func (r *Replica) AverageLoss(perExample *G.Node) *G.Node {
	if perExample == nil || perExample.Graph() != r.g {
		panic(usageError("AverageLoss: want a node of replica %d's graph, got %v", r.id, perExample))
	}
	if sh := perExample.Shape(); len(sh) != 1 || sh[0] != r.rows {
		panic(usageError("AverageLoss: want one loss per example, a vector [%d], got shape %v; sum a per-class loss over axis 1 first", r.rows, sh))
	}
	masked := G.Must(G.HadamardProd(perExample, r.Mask()))
	return G.Must(G.Mul(G.Must(G.Sum(masked)), r.GlobalCount()))
}

// OneHot returns a matrix [rows, classes] holding the one-hot encoding of
// the labels, an input of the build function (its y) holding class ids
// 0…classes-1: the bridge encodes them on the host at each step, since
// gorgonia has no op for it. A label out of range fails the step with an
// error naming the example.
func (r *Replica) OneHot(labels *G.Node, classes int) *G.Node {
	k := slices.Index(r.inputs, labels)
	if labels == nil || k < 0 {
		panic(usageError("OneHot: want one of the build function's inputs (its y, the labels), got %v", labels))
	}
	if sh := labels.Shape(); len(sh) != 1 {
		panic(usageError("OneHot: want labels of shape [%d], one class id per example, got %v", r.rows, sh))
	}
	if classes < 1 {
		panic(usageError("OneHot: want at least 1 class, got %d", classes))
	}
	for _, o := range r.oneHots {
		if o.input == k && o.classes == classes {
			return o.node
		}
	}
	buf := tensor.New(tensor.WithShape(r.rows, classes), tensor.Of(r.dt))
	n := G.NewMatrix(r.g, r.dt, G.WithShape(r.rows, classes), G.WithName(fmt.Sprintf("gorgoniamodel.one_hot_%d", k)), G.WithValue(buf))
	r.oneHots = append(r.oneHots, oneHot{input: k, classes: classes, node: n, buf: buf})
	return n
}

// Output asks the step to return n's value besides the loss, as the part
// name of the PerReplica that Step and Evaluate return (a model's logits,
// for accuracy). Every replica must ask for the same outputs.
func (r *Replica) Output(name string, n *G.Node) {
	if n == nil || n.Graph() != r.g {
		panic(usageError("Output %q: want a node of replica %d's graph, got %v", name, r.id, n))
	}
	if name == "" || name == "loss" {
		panic(usageError("Output: want a name other than %q", name))
	}
	for _, o := range r.outputs {
		if o.name == name {
			panic(usageError("Output %q: asked twice", name))
		}
	}
	r.outputs = append(r.outputs, output{name: name, node: n})
}

// scalar is a gorgonia scalar value of dtype dt.
func scalar(dt tensor.Dtype, x float64) any {
	if dt == tensor.Float64 {
		return x
	}
	return float32(x)
}
