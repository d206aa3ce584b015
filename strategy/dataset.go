package strategy

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/gotrain/gotrain/data"
)

// DistributedDataset hands each global batch of a dataset to the replicas,
// split evenly along axis 0 (tf.distribute's experimental_distribute_dataset).
// It may be iterated several times; it counts its passes (InputState.Pass).
type DistributedDataset struct {
	s      *Mirrored
	ds     *data.Dataset                         // global batches; nil if fromFn is set
	fromFn func(data.InputContext) *data.Dataset // per-replica batches
	passes atomic.Int64                          // Iter calls so far
}

// DistributeDataset distributes a dataset of global batches: every element's
// components share a leading batch axis, which is split across replicas (of
// every worker: on a multi-worker strategy each worker iterates the whole
// dataset, which must be the same on every worker, and keeps its replicas'
// shards, so N workers see exactly the shards one process would). A
// batch that does not divide evenly by the replica count, or that is shorter
// than the first batch (a partial last batch), is padded to the full shape
// and masked (see PerReplicaBatch). It panics if an element's structure is
// not a tuple of batched tensors.
func (s *Mirrored) DistributeDataset(ds *data.Dataset) *DistributedDataset {
	s.checkOpen()
	if ds == nil {
		panic(usageError("DistributeDataset: want a dataset, got nil"))
	}
	if err := checkSpec(ds.ElementSpec()); err != nil {
		panic(err)
	}
	return &DistributedDataset{s: s, ds: ds}
}

// DistributeDatasetsFromFunction calls fn at each Iter with the input context
// of this worker's input pipeline (pipeline WorkerID of NumWorkers, with the
// replica count of every worker); fn returns a dataset of per-replica
// batches (use ctx.PerReplicaBatchSize, and ds.Shard by the pipeline on
// several workers). Each step takes one element per local replica, in
// replica order; when the dataset ends in the middle of a step the missing
// replicas get fully padded batches. On several workers the pass ends when
// every worker's dataset has ended; a worker whose dataset ended first gives
// its replicas fully padded batches meanwhile.
func (s *Mirrored) DistributeDatasetsFromFunction(fn func(data.InputContext) *data.Dataset) *DistributedDataset {
	s.checkOpen()
	if fn == nil {
		panic(usageError("DistributeDatasetsFromFunction: want a function, got nil"))
	}
	return &DistributedDataset{s: s, fromFn: fn}
}

// InputContext returns the input context DistributeDatasetsFromFunction
// passes to its function.
func (s *Mirrored) InputContext() data.InputContext {
	return data.InputContext{NumInputPipelines: s.size, InputPipelineID: s.rank, NumReplicasInSync: s.NumReplicasInSync()}
}

// checkSpec rejects element structures a strategy cannot split: an element
// must be one or more tensors with a batch axis. A nil spec (not known before
// iterating) is checked element by element instead.
func checkSpec(spec [][]int) error {
	if spec == nil {
		return nil
	}
	if len(spec) == 0 {
		return usageError("unknown element structure: an element has no tensors; want batched tensors like (features, labels)")
	}
	for i, sh := range spec {
		if len(sh) == 0 {
			return usageError("unknown element structure: component %d has shape [] with no batch axis; batch the dataset with .Batch(n)", i)
		}
	}
	return nil
}

// checkElement checks one element's components share a batch axis and
// returns its length.
func checkElement(e []data.Tensor) (rows int, err error) {
	shapes := make([][]int, len(e))
	for i, t := range e {
		shapes[i] = t.Shape
	}
	if err := checkSpec(shapes); err != nil {
		return 0, err
	}
	rows = e[0].Shape[0]
	for i, t := range e[1:] {
		if t.Shape[0] != rows {
			return 0, fmt.Errorf("strategy: element components disagree on the batch axis: component 0 has %d rows, component %d has %d", rows, i+1, t.Shape[0])
		}
	}
	return rows, nil
}

// Iter starts a pass. The caller must call Close unless Next returned false.
func (d *DistributedDataset) Iter() *DistributedIterator {
	it, err := d.iter(nil)
	if err != nil {
		panic(err) // Iter cannot fail: it resumes nothing
	}
	return it
}

// InputState is where a DistributedIterator stands: which pass of its
// dataset it is (the epoch, counting Iter calls from 0), where it is in the
// dataset, and the per-replica rows of the full batch it pads to. A
// checkpoint keeps it (nn.InputPosition) so that a restored run continues
// with exactly the batches the uninterrupted run would have seen.
type InputState struct {
	Pass  int
	Rows  int
	Input data.IteratorState
}

// State returns where the iterator stands, for IterAt.
func (it *DistributedIterator) State() InputState {
	return InputState{Pass: it.pass, Rows: it.rows, Input: it.it.State()}
}

// IterAt starts a pass that continues where an iterator of an identical
// distributed dataset stood (see data.Dataset.IterAt): the next batch is
// the one that iterator would have returned next, and later Iter calls
// count passes from st.Pass+1. It returns the error data.Dataset.IterAt
// returns.
func (d *DistributedDataset) IterAt(st InputState) (*DistributedIterator, error) {
	return d.iter(&st)
}

func (d *DistributedDataset) iter(st *InputState) (*DistributedIterator, error) {
	d.s.checkOpen()
	pass := d.passes.Add(1) - 1
	if st != nil {
		pass = int64(st.Pass)
		d.passes.Store(pass + 1)
	}
	it := &DistributedIterator{d: d, n: d.s.LocalReplicas(), global: d.s.NumReplicasInSync(), first: d.s.rank * d.s.LocalReplicas(), pass: int(pass)}
	ds := d.ds
	if d.fromFn != nil {
		ds = d.fromFn(d.s.InputContext())
		if ds == nil {
			panic(usageError("DistributeDatasetsFromFunction: the function returned a nil dataset"))
		}
		if err := checkSpec(ds.ElementSpec()); err != nil {
			panic(err)
		}
	}
	if st == nil {
		it.it = ds.Iter()
		return it, nil
	}
	inner, err := ds.IterAt(st.Input)
	if err != nil {
		return nil, fmt.Errorf("strategy: IterAt pass %d: %w", st.Pass, err)
	}
	it.it, it.rows = inner, st.Rows
	return it, nil
}

// DistributedIterator walks a DistributedDataset one global batch at a time.
// It is not safe for concurrent use.
type DistributedIterator struct {
	d      *DistributedDataset
	pass   int // Iter calls on d before this one
	it     *data.Iterator
	n      int // this worker's replicas
	global int // the replicas of every worker
	first  int // the global id of this worker's replica 0
	rows   int // per-replica rows of the full batch, fixed by the largest batch seen
	batch  *PerReplicaBatch
	err    error
	done   bool
}

// Next moves to the next global batch and reports whether there is one. Like
// every dataset step it is a safe point: a pending interrupt panics with
// safepoint.ErrInterrupted. When it returns false, Err says why.
func (it *DistributedIterator) Next() bool {
	if it.done {
		return false
	}
	var err error
	if it.d.fromFn != nil {
		err = it.nextPerReplica()
	} else {
		err = it.nextGlobal()
	}
	if err != nil || it.batch == nil {
		it.err = err
		it.Close()
		return false
	}
	return true
}

func (it *DistributedIterator) nextGlobal() error {
	if !it.it.Next() {
		it.batch = nil
		return it.it.Err()
	}
	e := it.it.Value()
	rows, err := checkElement(e)
	if err != nil {
		return err
	}
	if per := (rows + it.global - 1) / it.global; per > it.rows {
		it.rows = per
	}
	b := it.reuse(e)
	for r := range it.n {
		lo := min((it.first+r)*it.rows, rows)
		hi := min(lo+it.rows, rows)
		b.fillShard(r, e, lo, hi)
	}
	b.count = rows
	// Every worker holds the whole global batch, so each knows where its
	// rows start without asking the others.
	b.before = min(it.first*it.rows, rows)
	it.batch = b
	return nil
}

func (it *DistributedIterator) nextPerReplica() error {
	b, count, err := it.localPerReplica()
	if !it.d.s.multi() {
		if err != nil {
			return err
		}
		if b != nil {
			b.count = count
		}
		it.batch = b
		return nil
	}
	return it.agreePerReplica(b, count, err)
}

// localPerReplica takes one element per local replica: the batch, or nil
// when the dataset has ended, and its real rows.
func (it *DistributedIterator) localPerReplica() (*PerReplicaBatch, int, error) {
	var b *PerReplicaBatch
	count := 0
	for r := range it.n {
		if !it.it.Next() {
			if err := it.it.Err(); err != nil {
				return nil, 0, err
			}
			if r == 0 {
				return nil, 0, nil
			}
			// The dataset ended mid-step: the other replicas see only padding.
			for q := r; q < it.n; q++ {
				b.fillShard(q, nil, 0, 0)
			}
			break
		}
		e := it.it.Value()
		rows, err := checkElement(e)
		if err != nil {
			return nil, 0, err
		}
		if rows > it.rows {
			if r > 0 {
				return nil, 0, fmt.Errorf("strategy: replica %d's batch has %d rows, more than replica 0's %d", r, rows, it.rows)
			}
			it.rows = rows
		}
		if r == 0 {
			b = it.reuse(e)
		}
		b.fillShard(r, e, 0, rows)
		count += rows
	}
	return b, count, nil
}

// agreePerReplica settles a step of per-replica input across workers: the
// pass goes on while any worker has data (a worker whose dataset ended
// gives its replicas padding), the count is every worker's, and an input
// error on one worker ends the pass on all.
func (it *DistributedIterator) agreePerReplica(b *PerReplicaBatch, count int, err error) error {
	s := it.d.s
	// has data, real rows, failed, cannot pad (no batch yet to take shapes from)
	// and then each worker's real rows, this one's own only, so that it
	// knows where its rows start in the global batch (before).
	v := make([]float64, 4+s.size)
	v[0], v[1], v[2], v[3] = one(b != nil), float64(count), one(err != nil), one(b == nil && it.batch == nil)
	v[4+s.rank] = float64(count)
	if cerr := s.cluster.AllReduceF64(v); cerr != nil {
		return clusterError("agreeing on the input", cerr)
	}
	switch {
	case err != nil:
		return err
	case v[2] > 0:
		return fmt.Errorf("strategy: the input of another worker failed (its error is in its output); the pass ends on every worker")
	case v[0] == 0:
		it.batch = nil
		return nil
	case v[3] > 0:
		return fmt.Errorf("strategy: a worker's dataset has no element in this pass while others have some; shard the dataset so that every worker gets elements (ds.Shard(ctx.NumInputPipelines, ctx.InputPipelineID))")
	}
	if b == nil {
		// This worker's input has ended, others' has not: its replicas
		// get only padding.
		b = it.batch
		for r := range it.n {
			b.fillShard(r, nil, 0, 0)
		}
	}
	b.count = int(v[1])
	b.before = 0
	for _, n := range v[4 : 4+s.rank] {
		b.before += int(n)
	}
	it.batch = b
	return nil
}

// reuse returns the previous batch's buffers when the shapes still fit, so a
// steady loop does not allocate its shards each step.
func (it *DistributedIterator) reuse(e []data.Tensor) *PerReplicaBatch {
	b := it.batch
	if b == nil || b.rows != it.rows || len(b.shards[0]) != len(e) {
		return newPerReplicaBatch(it.d.s, it.n, it.rows, e)
	}
	for k, t := range e {
		if !slices.Equal(b.shards[0][k].Shape[1:], t.Shape[1:]) {
			return newPerReplicaBatch(it.d.s, it.n, it.rows, e)
		}
	}
	return b
}

// Batch returns the current global batch, split into per-replica shards. It
// stays valid until the next call to Next.
func (it *DistributedIterator) Batch() *PerReplicaBatch {
	if it.batch == nil {
		panic(usageError("DistributedIterator.Batch: no current batch; call Next first and check its result"))
	}
	return it.batch
}

// Err returns the error that ended the iteration, or nil.
func (it *DistributedIterator) Err() error { return it.err }

// Close releases the underlying iterator (and its prefetch goroutine). It may
// be called more than once.
func (it *DistributedIterator) Close() {
	if !it.done {
		it.done = true
		it.it.Close()
	}
}

// PerReplicaBatch is one global batch split into per-replica shards, each with
// a mask that marks real rows (1) and padding (0). Every replica gets the same
// number of rows, so shapes never change between steps.
type PerReplicaBatch struct {
	s      *Mirrored       // immutable; the strategy whose dataset made the batch
	shards [][]data.Tensor // [replica][component]
	masks  []data.Tensor   // [replica], shape [rows]
	real   []int           // real rows per replica
	rows   int             // rows per replica
	count  int             // real rows in all
	before int             // real rows of the workers before this one: where its rows start in the global batch
}

func newPerReplicaBatch(s *Mirrored, n, rows int, e []data.Tensor) *PerReplicaBatch {
	b := &PerReplicaBatch{
		s:      s,
		shards: make([][]data.Tensor, n),
		masks:  make([]data.Tensor, n),
		real:   make([]int, n),
		rows:   rows,
	}
	for r := range n {
		b.shards[r] = make([]data.Tensor, len(e))
		for k, t := range e {
			shape := append([]int{rows}, t.Shape[1:]...)
			b.shards[r][k] = data.Zeros(shape...)
		}
		b.masks[r] = data.Zeros(rows)
	}
	return b
}

// fillShard copies rows [lo, hi) of e into replica r's shard and zeroes the
// padding after them (padded labels are class 0, a valid id).
func (b *PerReplicaBatch) fillShard(r int, e []data.Tensor, lo, hi int) {
	for k := range b.shards[r] {
		dst := b.shards[r][k].Data
		n := 0
		if e != nil {
			w := len(dst) / b.rows
			n = copy(dst, e[k].Data[lo*w:hi*w])
		}
		clear(dst[n:])
	}
	m := b.masks[r].Data
	for i := range m {
		m[i] = 0
		if i < hi-lo {
			m[i] = 1
		}
	}
	b.real[r] = hi - lo
}

// Strategy returns the strategy whose distributed dataset made b: on
// several workers b holds only this worker's replicas' shards, and
// s.Gather(b.Component(k), 0) every worker's rows.
func (b *PerReplicaBatch) Strategy() *Mirrored { return b.s }

// NumReplicas returns the number of shards.
func (b *PerReplicaBatch) NumReplicas() int { return len(b.shards) }

// Replica returns replica r's shard, one tensor per element component.
func (b *PerReplicaBatch) Replica(r int) []data.Tensor { return b.shards[r] }

// Mask returns replica r's mask: shape [rows], 1 for a real row, 0 for padding.
func (b *PerReplicaBatch) Mask(r int) data.Tensor { return b.masks[r] }

// Rows returns the rows per replica, padding included.
func (b *PerReplicaBatch) Rows() int { return b.rows }

// Count returns the number of real examples in the global batch.
func (b *PerReplicaBatch) Count() int { return b.count }

// RealRows returns the number of real rows in replica r's shard.
func (b *PerReplicaBatch) RealRows(r int) int { return b.real[r] }
