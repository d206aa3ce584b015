package strategy

import (
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/data"
)

// ReduceOp says how Reduce and AllReduce combine replica values.
type ReduceOp int

const (
	// Sum adds the replica values.
	Sum ReduceOp = iota
	// Mean averages them; see Mirrored.Reduce for what it divides by.
	Mean
)

func (op ReduceOp) String() string {
	switch op {
	case Sum:
		return "Sum"
	case Mean:
		return "Mean"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(op))
}

// PerReplica holds one value per replica, as Run returns it: each replica's
// host copy of a step output. A step that returned several tensors (a slice,
// several results, a struct or a map of them) gives a PerReplica with parts:
// see Len, Index and Field. The zero PerReplica holds nothing.
type PerReplica struct {
	values []data.Tensor // one per replica; nil for a PerReplica with parts
	batch  *batchInfo    // the batch the step ran on, nil if none

	parts []PerReplica
	names []string // field or key names of parts, nil for positional parts
}

// batchInfo is what Reduce and Gather need to know about the step's batch.
type batchInfo struct {
	rows   int   // rows per replica, padding included
	real   []int // real rows per replica (padding rows are at the end)
	count  int   // real rows in all
	before int   // real rows of the workers before this one
}

// NewPerReplica wraps one value per replica, for feeding Run with values that
// differ by replica (TF's experimental_distribute_values_from_function).
func NewPerReplica(values ...data.Tensor) PerReplica {
	return PerReplica{values: slices.Clone(values)}
}

// Broadcast returns t as a value for every replica (TF's
// experimental_distribute_values_from_function returning the same value), so
// that Run gives each replica all of t on purpose: a lookup table, the same
// batch to compare replicas. The replicas share t's data; it is not copied.
// A data.Tensor with a batch axis passed to Run directly is refused instead,
// since forgetting to distribute a dataset does the same silently.
func (s *Mirrored) Broadcast(t data.Tensor) PerReplica {
	s.checkOpen()
	vals := make([]data.Tensor, s.LocalReplicas())
	for r := range vals {
		vals[r] = t
	}
	return PerReplica{values: vals}
}

// Values returns the replica values, in replica order. It panics if the
// PerReplica has parts.
func (p PerReplica) Values() []data.Tensor {
	if p.parts != nil {
		panic(usageError("PerReplica.Values: the step returned %d values; pick one with Index or Field", len(p.parts)))
	}
	return p.values
}

// NumReplicas returns the number of replica values.
func (p PerReplica) NumReplicas() int {
	if p.parts != nil {
		return p.parts[0].NumReplicas()
	}
	return len(p.values)
}

// Len returns the number of parts, or 1 for a single value (0 if empty).
func (p PerReplica) Len() int {
	if p.parts != nil {
		return len(p.parts)
	}
	if p.values == nil {
		return 0
	}
	return 1
}

// Index returns part i: the i-th result or slice element of the step. For a
// single value Index(0) is the value itself.
func (p PerReplica) Index(i int) PerReplica {
	if p.parts == nil && i == 0 && p.values != nil {
		return p
	}
	if i < 0 || i >= len(p.parts) {
		panic(usageError("PerReplica.Index: want an index in [0, %d), got %d", p.Len(), i))
	}
	return p.parts[i]
}

// Field returns the part named name: a struct field or map key of the step's
// result.
func (p PerReplica) Field(name string) PerReplica {
	for i, n := range p.names {
		if n == name {
			return p.parts[i]
		}
	}
	panic(usageError("PerReplica.Field: no part %q; have %v", name, p.names))
}

// Names returns the field or key names of the parts, or nil.
func (p PerReplica) Names() []string { return slices.Clone(p.names) }

// String lists the replica values.
func (p PerReplica) String() string {
	if p.parts != nil {
		return fmt.Sprintf("PerReplica%v", p.parts)
	}
	return fmt.Sprintf("PerReplica%v", p.values)
}

// perExample reports whether p's values have a row per example of the
// step's batch (their first dimension is the per-replica batch), so that
// padding rows can be told from real ones along axis 0.
func (p PerReplica) perExample() bool {
	if p.batch == nil || len(p.values) == 0 {
		return false
	}
	sh := p.values[0].Shape
	return len(sh) > 0 && sh[0] == p.batch.rows
}

// checkReduce returns the replica values of p after the checks Reduce and
// ReduceAxis share.
func checkReduce(method string, op ReduceOp, p PerReplica) []data.Tensor {
	vals := p.Values()
	if len(vals) == 0 {
		panic(usageError("%s: want a PerReplica with values, got none", method))
	}
	if op != Sum && op != Mean {
		panic(usageError("%s: unknown reduce op %v", method, op))
	}
	for r, v := range vals[1:] {
		if !slices.Equal(v.Shape, vals[0].Shape) {
			panic(usageError("%s: replica %d's value has shape %v, replica 0's %v", method, r+1, v.Shape, vals[0].Shape))
		}
	}
	return vals
}

// Reduce combines the replica values of a single-valued PerReplica element
// by element, over the replicas only (TF's strategy.reduce with axis=None):
// Sum adds them, Mean divides the sum by the number of replicas. The result
// has the values' shape, whatever it is: a [32] output stays [32] even when
// each replica's batch has 32 rows. To reduce over the examples of the batch
// as well, use ReduceAxis(op, p, 0).
//
// A loss from nn.ComputeAverageLoss is already divided by the global batch,
// so Sum gives the mean loss of the step. Reduce panics if p has parts, has no
// values, or the replica values differ in shape.
//
// On a multi-worker strategy the replicas are those of every worker: each
// worker sums its own, then the sums are added across workers, and every
// worker gets the result. Every worker must call it (as every worker runs
// the same cell).
func (s *Mirrored) Reduce(op ReduceOp, p PerReplica) data.Tensor {
	vals := checkReduce("Reduce", op, p)
	out := data.Zeros(vals[0].Shape...)
	for _, v := range vals {
		for j, x := range v.Data {
			out.Data[j] += x
		}
	}
	s.reduceAcross("Reduce", out.Data)
	if op == Mean {
		for j := range out.Data {
			out.Data[j] /= float64(len(vals) * s.size)
		}
	}
	return out
}

// reduceAcross adds x over workers, in place, panicking with the cluster's
// error (Reduce and Gather panic on misuse as well).
func (s *Mirrored) reduceAcross(method string, x []float64) {
	if !s.multi() {
		return
	}
	if err := s.cluster.AllReduceF64(x); err != nil {
		panic(clusterError(method, err))
	}
}

// ReduceAxis reduces the replica values over the replicas and along axis
// (TF's strategy.reduce with an axis): the result has the values' shape
// without that axis. Along axis 0 of a per-example value (its first
// dimension is the per-replica batch of the step's input) padding rows are
// dropped, and Mean divides by the true number of examples in the global
// batch, so a padded last batch reduces exactly. Along any other axis, or a
// value with no batch, Mean divides by the number of values summed. It
// panics as Reduce does, and if axis is not an axis of the values.
func (s *Mirrored) ReduceAxis(op ReduceOp, p PerReplica, axis int) data.Tensor {
	vals := checkReduce("ReduceAxis", op, p)
	shape := vals[0].Shape
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis >= len(shape) {
		panic(usageError("ReduceAxis: want an axis in [0, %d) for shape %v, got %d", len(shape), shape, axis))
	}
	outShape := slices.Concat(shape[:axis], shape[axis+1:])
	out := data.Zeros(outShape...)
	outer, d, inner := 1, shape[axis], 1
	for _, n := range shape[:axis] {
		outer *= n
	}
	for _, n := range shape[axis+1:] {
		inner *= n
	}
	count := d * len(vals) * s.size
	padded := axis == 0 && p.perExample()
	if padded {
		count = p.batch.count
	}
	for r, v := range vals {
		rows := d
		if padded {
			rows = p.batch.real[r]
		}
		for o := range outer {
			dst := out.Data[o*inner : (o+1)*inner]
			for i := range rows {
				for j, x := range v.Data[(o*d+i)*inner : (o*d+i+1)*inner] {
					dst[j] += x
				}
			}
		}
	}
	s.reduceAcross("ReduceAxis", out.Data)
	if op == Mean && count > 0 {
		for j := range out.Data {
			out.Data[j] /= float64(count)
		}
	}
	return out
}

// Gather concatenates the replica values along axis (TF's strategy.gather).
// When the values are per-example (see ReduceAxis) and axis is 0, padding rows
// are dropped, so gathering per-example predictions of a padded last batch
// gives exactly one row per real example. It panics if the values do not
// agree on every other axis.
func (s *Mirrored) Gather(p PerReplica, axis int) data.Tensor {
	vals := p.Values()
	if len(vals) == 0 {
		panic(usageError("Gather: want a PerReplica with values, got none"))
	}
	rank := len(vals[0].Shape)
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		panic(usageError("Gather: want an axis in [0, %d) for shape %v, got %d", rank, vals[0].Shape, axis))
	}
	parts := slices.Clone(vals)
	if axis == 0 && p.perExample() {
		for r, v := range parts {
			w := len(v.Data) / max(1, v.Shape[0])
			parts[r] = data.Tensor{Shape: append([]int{p.batch.real[r]}, v.Shape[1:]...), Data: v.Data[:p.batch.real[r]*w]}
		}
	}
	shape := slices.Clone(parts[0].Shape)
	shape[axis] = 0
	for r, v := range parts {
		if len(v.Shape) != rank {
			panic(usageError("Gather: replica %d's value has shape %v, replica 0's %v", r, v.Shape, vals[0].Shape))
		}
		for d := range rank {
			if d != axis && v.Shape[d] != parts[0].Shape[d] {
				panic(usageError("Gather: replica %d's value has shape %v, replica 0's %v", r, v.Shape, vals[0].Shape))
			}
		}
		shape[axis] += v.Shape[axis]
	}
	// outer: product of dims before axis; each replica contributes a block of
	// Shape[axis]*inner values per outer index.
	outer := 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	inner := 1
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	out := make([]float64, 0, outer*shape[axis]*inner)
	for o := range outer {
		for _, v := range parts {
			blk := v.Shape[axis] * inner
			out = append(out, v.Data[o*blk:(o+1)*blk]...)
		}
	}
	if s.multi() {
		return s.gatherAcross(shape, axis, outer, inner, out)
	}
	return data.NewTensor(shape, out)
}

// gatherAcross concatenates every worker's local Gather along axis, in
// worker order: for each index of the axes before it, worker 0's block,
// then worker 1's, …
func (s *Mirrored) gatherAcross(shape []int, axis, outer, inner int, local []float64) data.Tensor {
	all, err := s.cluster.AllGather(local)
	if err != nil {
		panic(clusterError("Gather", err))
	}
	shape[axis] = 0
	for _, w := range all {
		shape[axis] += len(w) / max(1, outer*inner)
	}
	out := make([]float64, 0, outer*shape[axis]*inner)
	for o := range outer {
		for _, w := range all {
			blk := len(w) / max(1, outer)
			out = append(out, w[o*blk:(o+1)*blk]...)
		}
	}
	return data.NewTensor(shape, out)
}

// Component returns component k of b (0: the first tensor of each element,
// such as the features; 1: the labels), one value per replica of this
// worker, as a per-example PerReplica: s.Gather(b.Component(k), 0) is then
// the real rows of the whole global batch in its order, every worker's
// rows included. It panics with an error wrapping ErrUsage if k is out of
// range.
func (b *PerReplicaBatch) Component(k int) PerReplica {
	if k < 0 || k >= len(b.shards[0]) {
		panic(usageError("PerReplicaBatch.Component: want a component in [0, %d), got %d", len(b.shards[0]), k))
	}
	vals := make([]data.Tensor, len(b.shards))
	for r, sh := range b.shards {
		vals[r] = sh[k]
	}
	return PerReplica{values: vals, batch: &batchInfo{rows: b.rows, real: b.real, count: b.count, before: b.before}}
}

// LocalResults returns the replica values (TF's
// experimental_local_results); the same as p.Values().
func (s *Mirrored) LocalResults(p PerReplica) []data.Tensor { return p.Values() }
