package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// Cardinality values for datasets whose length is not a count.
const (
	Infinite = -1 // the dataset never ends
	Unknown  = -2 // the length cannot be known without iterating
)

// Dataset describes a re-iterable sequence of elements, each a []Tensor
// with the same number of components. Transformations return new datasets
// and leave the receiver unchanged. A Dataset is safe for concurrent use:
// several iterators may read it at once.
type Dataset struct {
	// open starts one pass; immutable, never nil.
	open func() stream
	// card is the number of elements, or Infinite or Unknown.
	card int
	// spec computes ElementSpec once; nil when the shapes are unknown.
	spec func() [][]int
	// shuffles are the pass counters of the Shuffles in the pipeline, in
	// order from the source; immutable. An iterator records them when it
	// opens, so that IterAt can replay the same shuffled order.
	shuffles []*atomic.Uint64
	// stable reports that the values open's streams return stay valid and
	// unchanged for as long as the dataset lives (views of the tensors it
	// was built from), so Shuffle and Prefetch may hold them without
	// copying.
	stable bool
}

// stream is one pass over a dataset. Its next returns the following element,
// or false at the end or on an error, which err then reports. A value stays
// valid until the next call of next or close. Streams are used by one
// goroutine at a time; close releases what the stream owns and is called
// exactly once.
type stream interface {
	next() ([]Tensor, bool)
	err() error
	close()
}

// Cardinality returns the number of elements in one pass, Infinite, or
// Unknown.
func (d *Dataset) Cardinality() int { return d.card }

// ElementSpec returns the shapes of one element's components, with -1 for
// a dimension that varies between elements (the batch dimension when the
// last batch may be partial). It returns nil when the shapes cannot be
// known without iterating. The result is a fresh copy.
func (d *Dataset) ElementSpec() [][]int {
	if d.spec == nil {
		return nil
	}
	return cloneSpec(d.spec())
}

func cloneSpec(spec [][]int) [][]int {
	if spec == nil {
		return nil
	}
	out := make([][]int, len(spec))
	for i, s := range spec {
		out[i] = append([]int{}, s...)
	}
	return out
}

// onceSpec memoizes a spec function, which may call user code.
func onceSpec(f func() [][]int) func() [][]int {
	if f == nil {
		return nil
	}
	return sync.OnceValue(f)
}

// String describes the dataset for a notebook, as in
// "Dataset{elements: 4, shapes: [[-1 10] [-1]]}".
func (d *Dataset) String() string {
	n := strconv.Itoa(d.card)
	switch d.card {
	case Infinite:
		n = "infinite"
	case Unknown:
		n = "unknown"
	}
	spec := "unknown"
	if s := d.ElementSpec(); s != nil {
		spec = fmt.Sprint(s)
	}
	return fmt.Sprintf("Dataset{elements: %s, shapes: %s}", n, spec)
}

// Iter starts a pass over the dataset. The caller must call Close unless
// Next has returned false.
func (d *Dataset) Iter() *Iterator {
	passes := make([]uint64, len(d.shuffles))
	for i, c := range d.shuffles {
		passes[i] = c.Load()
	}
	it := newIterator(d.open())
	it.passes = passes
	return it
}

// IteratorState is where an iterator stands, so that a pass can resume
// there (in another process, after a checkpoint): Position elements read,
// and the pass counters of the pipeline's Shuffles when it started, which
// decide the orders it draws.
type IteratorState struct {
	Position int      // elements Next has returned
	Passes   []uint64 // per Shuffle, from the source: its pass counter when the iterator opened
}

// IterAt starts a pass that continues where an iterator of an identical
// pipeline (same sources, transformations, seeds) stood: it sets the
// Shuffles' pass counters to st.Passes, opens the pass and reads
// st.Position elements, so that the next element is the one that iterator
// would have returned next, bit for bit, provided the pipeline is
// deterministic (Map functions that depend on their input alone). It
// returns an error if the pipeline has another number of Shuffles, or ends
// before st.Position.
func (d *Dataset) IterAt(st IteratorState) (*Iterator, error) {
	if len(st.Passes) != len(d.shuffles) {
		return nil, fmt.Errorf("%w: IterAt: the state has %d Shuffle pass counters, the dataset %d Shuffles", ErrArgument, len(st.Passes), len(d.shuffles))
	}
	if st.Position < 0 {
		return nil, fmt.Errorf("%w: IterAt: want a position ≥ 0, got %d", ErrArgument, st.Position)
	}
	for i, c := range d.shuffles {
		c.Store(st.Passes[i])
	}
	it := d.Iter()
	for range st.Position {
		if !it.Next() {
			if err := it.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: IterAt: the pass ends after %d elements, before position %d", ErrArgument, it.pos, st.Position)
		}
	}
	return it, nil
}

// sliceStream yields rows of tensors that share a first dimension.
type sliceStream struct {
	ts  []Tensor
	n   int
	i   int
	val []Tensor // reused for every element
}

func (s *sliceStream) next() ([]Tensor, bool) {
	if s.i >= s.n {
		return nil, false
	}
	for k, t := range s.ts {
		s.val[k] = t.Row(s.i)
	}
	s.i++
	return s.val, true
}
func (s *sliceStream) err() error { return nil }
func (s *sliceStream) close()     {}

// FromTensorSlices returns a dataset whose i-th element holds row i of
// each tensor, like tf.data.Dataset.from_tensor_slices: features of shape
// [256, 10] and labels of shape [256] give 256 elements of shapes [10] and
// []. The elements are views; the tensors are not copied.
// It panics with an error wrapping ErrShape if no tensor is given, a tensor
// is a scalar, or the first dimensions differ.
func FromTensorSlices(ts ...Tensor) *Dataset {
	if len(ts) == 0 {
		panic(fmt.Errorf("%w: FromTensorSlices: want at least one tensor", ErrShape))
	}
	ts = append([]Tensor(nil), ts...)
	for k, t := range ts {
		if len(t.Shape) == 0 {
			panic(fmt.Errorf("%w: FromTensorSlices: tensor %d is a scalar, want rank ≥ 1", ErrShape, k))
		}
		if len(t.Data) != t.Len() {
			panic(fmt.Errorf("%w: FromTensorSlices: tensor %d: shape %v wants %d values, got %d", ErrShape, k, t.Shape, t.Len(), len(t.Data)))
		}
		if t.Shape[0] != ts[0].Shape[0] {
			panic(fmt.Errorf("%w: FromTensorSlices: tensor 0 has %d rows (shape %v), tensor %d has %d (shape %v)",
				ErrShape, ts[0].Shape[0], ts[0].Shape, k, t.Shape[0], t.Shape))
		}
	}
	n := ts[0].Shape[0]
	spec := make([][]int, len(ts))
	for k, t := range ts {
		spec[k] = append([]int{}, t.Shape[1:]...)
	}
	return &Dataset{
		open:   func() stream { return &sliceStream{ts: ts, n: n, val: make([]Tensor, len(ts))} },
		card:   n,
		spec:   func() [][]int { return spec },
		stable: true,
	}
}

// funcStream calls a generator with successive indexes.
type funcStream struct {
	n  int
	i  int
	fn func(int) []Tensor
}

func (s *funcStream) next() ([]Tensor, bool) {
	if s.n >= 0 && s.i >= s.n {
		return nil, false
	}
	v := s.fn(s.i)
	s.i++
	return v, true
}
func (s *funcStream) err() error { return nil }
func (s *funcStream) close()     {}

// FromFunc returns a dataset of n elements (endless if n < 0) whose i-th
// element is fn(i). Each pass calls fn again from i = 0, so fn should
// depend on i alone. What fn returns needs to stay valid only until fn is
// called again. ElementSpec calls fn(0) once to learn the shapes.
func FromFunc(n int, fn func(i int) []Tensor) *Dataset {
	if fn == nil {
		panic(fmt.Errorf("%w: FromFunc: nil function", ErrArgument))
	}
	card := n
	if n < 0 {
		card = Infinite
	}
	d := &Dataset{
		open: func() stream { return &funcStream{n: n, fn: fn} },
		card: card,
	}
	if n != 0 {
		d.spec = onceSpec(func() (spec [][]int) {
			defer func() {
				if recover() != nil {
					spec = nil
				}
			}()
			return shapesOf(fn(0))
		})
	}
	return d
}

func shapesOf(ts []Tensor) [][]int {
	spec := make([][]int, len(ts))
	for k, t := range ts {
		spec[k] = append([]int{}, t.Shape...)
	}
	return spec
}

// mustPositive panics unless n > 0.
func mustPositive(op string, n int) {
	if n <= 0 {
		panic(fmt.Errorf("%w: %s: want n > 0, got %d", ErrArgument, op, n))
	}
}

func mustNonNegative(op string, n int) {
	if n < 0 {
		panic(fmt.Errorf("%w: %s: want n ≥ 0, got %d", ErrArgument, op, n))
	}
}

// BatchOption changes how Batch groups elements.
type BatchOption func(*batchConfig)

type batchConfig struct{ dropRemainder bool }

// DropRemainder makes Batch drop a last batch that has fewer than n
// elements, so every batch has the same shape.
func DropRemainder() BatchOption { return func(c *batchConfig) { c.dropRemainder = true } }

// Batch returns a dataset whose elements stack n consecutive elements of d
// along a new first axis. The last batch holds the remaining elements, fewer
// than n, unless DropRemainder is given. Elements of one batch must have the
// same shapes; otherwise the iterator stops with an error.
//
// A batch's tensors are buffers that the iterator reuses: they stay valid
// until the next call of Next.
// It panics with an error wrapping ErrArgument if n ≤ 0.
func (d *Dataset) Batch(n int, opts ...BatchOption) *Dataset {
	mustPositive("Batch", n)
	var cfg batchConfig
	for _, o := range opts {
		o(&cfg)
	}
	card := d.card
	if card >= 0 {
		if cfg.dropRemainder {
			card /= n
		} else {
			card = (card + n - 1) / n
		}
	}
	// The batch dimension is fixed when no partial batch can occur.
	fixed := cfg.dropRemainder || d.card == Infinite || (d.card >= 0 && d.card%n == 0)
	var spec func() [][]int
	if d.spec != nil {
		in := d.spec
		spec = onceSpec(func() [][]int {
			s := in()
			if s == nil {
				return nil
			}
			out := make([][]int, len(s))
			for k, sh := range s {
				b := n
				if !fixed {
					b = -1
				}
				out[k] = append([]int{b}, sh...)
			}
			return out
		})
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &batchStream{up: up(), n: n, drop: cfg.dropRemainder} },
		card:     card,
		spec:     spec,
	}
}

type batchStream struct {
	up    stream
	n     int
	drop  bool
	out   []Tensor   // buffers of the batch being built, one per component
	sets  [][]Tensor // buffer sets used in turn: one, unless rotate asked for more
	turn  int        // index of out in sets
	count int        // elements read so far, for error messages
	e     error
	done  bool
}

func (s *batchStream) next() ([]Tensor, bool) {
	if s.done {
		return nil, false
	}
	i := 0
	for ; i < s.n; i++ {
		e, ok := s.up.next()
		if !ok {
			if err := s.up.err(); err != nil {
				s.e = err
				s.done = true
				return nil, false
			}
			break
		}
		if i == 0 {
			// The next set of buffers in turn, taken only for a batch
			// that has an element: a pass that ends leaves the turn where
			// its last batch was, for the next pass to go on from.
			if len(s.sets) > 1 {
				s.sets[s.turn] = s.out
				s.turn = (s.turn + 1) % len(s.sets)
				s.out = s.sets[s.turn]
			}
			if err := s.reset(e); err != nil {
				s.e = err
				s.done = true
				return nil, false
			}
		} else if err := s.check(e); err != nil {
			s.e = err
			s.done = true
			return nil, false
		}
		for k, t := range e {
			w := len(t.Data)
			copy(s.out[k].Data[i*w:(i+1)*w], t.Data)
		}
		s.count++
	}
	if i < s.n {
		s.done = true
		if i == 0 || s.drop {
			return nil, false
		}
		for k := range s.out {
			w := len(s.out[k].Data) / s.n
			s.out[k].Shape[0] = i
			s.out[k].Data = s.out[k].Data[:i*w]
		}
	}
	return s.out, true
}

// reset shapes the output buffers for a batch whose first element is e,
// reusing their storage. It fails when the buffers would not fit in the
// machine's memory.
func (s *batchStream) reset(e []Tensor) error {
	for k, t := range e {
		if len(s.out) <= k || cap(s.out[k].Data) < s.n*len(t.Data) {
			if err := CheckAlloc(fmt.Sprintf("batch: component %d", k), append([]int{s.n}, t.Shape...), 8*max(1, len(s.sets))); err != nil {
				return err
			}
		}
	}
	if len(s.out) != len(e) {
		s.out = make([]Tensor, len(e))
	}
	for k, t := range e {
		o := &s.out[k]
		o.Shape = append(append(o.Shape[:0], s.n), t.Shape...)
		w := s.n * len(t.Data)
		if cap(o.Data) < w {
			o.Data = make([]float64, w)
		}
		o.Data = o.Data[:w]
	}
	return nil
}

func (s *batchStream) check(e []Tensor) error {
	if len(e) != len(s.out) {
		return fmt.Errorf("data: batch: element %d has %d components, want %d", s.count, len(e), len(s.out))
	}
	for k, t := range e {
		if !slices.Equal(t.Shape, s.out[k].Shape[1:]) || len(t.Data) != len(s.out[k].Data)/s.n {
			return fmt.Errorf("data: batch: component %d of element %d: want shape %v, got %v", k, s.count, s.out[k].Shape[1:], t.Shape)
		}
	}
	return nil
}

// rotate makes batches stay valid for k further calls of next, by cycling
// through k+1 buffer sets, so that Prefetch can queue them without copying.
func (s *batchStream) rotate(k int) bool {
	s.sets = make([][]Tensor, k+1)
	return true
}

// recycle hands the batch buffers, and where the rotation stands, to the
// next pass, which then writes them in the order this pass would have: a
// value the consumer holds stays valid for as many calls as rotate promised.
func (s *batchStream) recycle(next stream) {
	n, ok := next.(*batchStream)
	if !ok || n.n != s.n || len(n.sets) != len(s.sets) {
		return
	}
	n.out, n.sets, n.turn = s.out, s.sets, s.turn
	s.out, s.sets = nil, nil
	if r, ok := s.up.(recycler); ok {
		r.recycle(n.up)
	}
}

func (s *batchStream) err() error { return s.e }
func (s *batchStream) close()     { s.up.close() }

// A rotator is a stream that can keep each value it returns valid for k
// further calls of its next. rotate is called before the first next and
// reports whether the stream can.
type rotator interface {
	rotate(k int) bool
}

// element is a copy of one dataset element that owns or borrows its data.
type element []Tensor

// set makes dst hold e: a copy into dst's own storage, or, when borrow is
// true (the source is stable), the headers alone.
func (dst *element) set(e []Tensor, borrow bool) {
	if len(*dst) != len(e) {
		*dst = make(element, len(e))
	}
	for k, t := range e {
		d := &(*dst)[k]
		if borrow {
			*d = t
			continue
		}
		d.Shape = append(d.Shape[:0], t.Shape...)
		d.Data = append(d.Data[:0], t.Data...)
	}
}

// Shuffle returns a dataset with d's elements in random order, drawn from a
// window of buffer elements as tf.data does: a buffer at least as large as
// the dataset gives a uniform permutation; a smaller one mixes locally.
//
// Every pass is shuffled anew and deterministically: the k-th time the
// shuffled dataset is opened (k counts from 0 over Iter calls and Repeat
// passes alike), its order is drawn from a PCG generator seeded with
// seed+k.
// It panics with an error wrapping ErrArgument if buffer ≤ 0.
func (d *Dataset) Shuffle(buffer int, seed uint64) *Dataset {
	mustPositive("Shuffle", buffer)
	var epoch atomic.Uint64
	// Passes hand their buffers on through a pool, so that a Repeat over a
	// Shuffle allocates its window once rather than on every pass.
	var pool sync.Pool
	up := d.open
	stable := d.stable
	return &Dataset{
		shuffles: append(slices.Clip(d.shuffles), &epoch),
		open: func() stream {
			k := epoch.Add(1) - 1
			s := &shuffleStream{up: up(), size: buffer, rng: newRand(seed + k), borrow: stable, pending: -1, pool: &pool}
			if b, ok := pool.Get().(*[]element); ok {
				s.buf = *b
			}
			return s
		},
		card:   d.card,
		spec:   d.spec,
		stable: d.stable,
	}
}

type shuffleStream struct {
	up      stream
	size    int
	rng     *rand.Rand
	borrow  bool
	buf     []element
	n       int // buf[:n] hold elements
	filled  bool
	pending int // index of the element returned last, refilled on next
	upDone  bool
	e       error
	pool    *sync.Pool // receives buf on close
}

// pull replaces buf[i] with the next upstream element, or removes it when
// the upstream has ended.
func (s *shuffleStream) pull(i int) bool {
	if !s.upDone {
		if e, ok := s.up.next(); ok {
			s.buf[i].set(e, s.borrow)
			return true
		}
		s.upDone = true
		s.e = s.up.err()
	}
	s.n--
	s.buf[i], s.buf[s.n] = s.buf[s.n], s.buf[i]
	return false
}

func (s *shuffleStream) next() ([]Tensor, bool) {
	if !s.filled {
		s.filled = true
		for s.n < s.size && !s.upDone {
			if s.n == len(s.buf) {
				s.buf = append(s.buf, nil)
			}
			s.n++
			s.pull(s.n - 1)
		}
	} else if s.pending >= 0 {
		s.pull(s.pending)
		s.pending = -1
	}
	if s.e != nil || s.n == 0 {
		return nil, false
	}
	j := s.rng.IntN(s.n)
	s.pending = j
	return s.buf[j], true
}

func (s *shuffleStream) err() error { return s.e }
func (s *shuffleStream) close() {
	s.up.close()
	if s.buf != nil {
		if s.borrow {
			// Drop borrowed headers so the pool does not pin the
			// dataset's tensors.
			for _, e := range s.buf {
				clear(e)
			}
		}
		b := s.buf
		s.buf = nil
		s.pool.Put(&b)
	}
}

// Repeat returns a dataset that passes over d count times, or forever if
// count < 0. Each pass opens d anew, so a Shuffle before Repeat reshuffles
// every pass. A pass that yields no element ends the repetition, so that
// an empty dataset repeated forever ends rather than spins.
func (d *Dataset) Repeat(count int) *Dataset {
	card := d.card
	switch {
	case card == 0 || count == 0:
		card = 0
	case card == Unknown:
	case count < 0:
		card = Infinite
	case card > 0:
		card *= count
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &repeatStream{open: up, count: count} },
		card:     card,
		spec:     d.spec,
		stable:   d.stable,
	}
}

type repeatStream struct {
	open   func() stream
	count  int
	passes int
	cur    stream
	inPass int // elements seen in the current pass
	rot    int // if > 0, rotate each pass's stream by rot
	e      error
}

func (s *repeatStream) next() ([]Tensor, bool) {
	for {
		if s.cur == nil {
			if !s.another() {
				return nil, false
			}
			s.startPass(nil)
		}
		if v, ok := s.cur.next(); ok {
			s.inPass++
			return v, true
		}
		s.e = s.cur.err()
		ended := s.cur
		s.cur = nil
		if s.inPass == 0 {
			s.count, s.passes = 0, 0 // an empty pass: stop
		}
		if s.another() {
			s.startPass(ended)
		}
		ended.close()
	}
}

// another reports whether a pass follows the ones opened so far.
func (s *repeatStream) another() bool {
	return s.e == nil && (s.count < 0 || s.passes < s.count)
}

// startPass opens the next pass. The pass that ended, if any, hands it what
// it owns first (see recycler), before it is closed.
func (s *repeatStream) startPass(ended stream) {
	s.cur = s.open()
	s.passes++
	s.inPass = 0
	if s.rot > 0 {
		s.cur.(rotator).rotate(s.rot)
	}
	if r, ok := ended.(recycler); ok {
		r.recycle(s.cur)
	}
}

// A recycler is a stream that can hand the buffers it owns to the next pass
// of its dataset, so that a repeated dataset allocates them once, not once
// a pass: a small dataset batched, then repeated, opens a pass every few
// steps, and each batch written into memory never touched before costs the
// training loop far more than the copy. recycle is called before the stream
// is closed, with the next pass opened (and rotated) but not yet read.
type recycler interface {
	recycle(next stream)
}

// rotate asks every pass for the guarantee. Passes are opened from one
// definition, so the first pass answers for all.
func (s *repeatStream) rotate(k int) bool {
	if s.count == 0 {
		return true
	}
	s.cur = s.open()
	s.passes++
	r, ok := s.cur.(rotator)
	if !ok || !r.rotate(k) {
		return false
	}
	s.rot = k
	return true
}

func (s *repeatStream) err() error { return s.e }
func (s *repeatStream) close() {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
}

// Take returns a dataset of d's first n elements (all of them if d has
// fewer). It panics with an error wrapping ErrArgument if n < 0.
func (d *Dataset) Take(n int) *Dataset {
	mustNonNegative("Take", n)
	card := d.card
	switch {
	case card == Infinite:
		card = n
	case card >= 0:
		card = min(card, n)
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &takeStream{up: up(), left: n} },
		card:     card,
		spec:     d.spec,
		stable:   d.stable,
	}
}

type takeStream struct {
	up   stream
	left int
}

func (s *takeStream) next() ([]Tensor, bool) {
	if s.left <= 0 {
		return nil, false
	}
	s.left--
	return s.up.next()
}

// rotate passes the request on: Take calls its upstream once per value.
func (s *takeStream) rotate(k int) bool {
	r, ok := s.up.(rotator)
	return ok && r.rotate(k)
}

func (s *takeStream) err() error { return s.up.err() }
func (s *takeStream) close()     { s.up.close() }

// Skip returns a dataset without d's first n elements. It panics with an
// error wrapping ErrArgument if n < 0.
func (d *Dataset) Skip(n int) *Dataset {
	mustNonNegative("Skip", n)
	card := d.card
	if card >= 0 {
		card = max(card-n, 0)
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &filterStream{up: up(), keep: func(i int) bool { return i >= n }} },
		card:     card,
		spec:     d.spec,
		stable:   d.stable,
	}
}

// filterStream yields the upstream elements whose index keep accepts.
type filterStream struct {
	up   stream
	keep func(i int) bool
	i    int
}

func (s *filterStream) next() ([]Tensor, bool) {
	for {
		v, ok := s.up.next()
		if !ok {
			return nil, false
		}
		i := s.i
		s.i++
		if s.keep(i) {
			return v, true
		}
	}
}
func (s *filterStream) err() error { return s.up.err() }
func (s *filterStream) close()     { s.up.close() }

// Shard returns the index-th of num interleaved shards of d: the elements
// whose position i satisfies i%num == index. Shard before Shuffle and
// Batch so that each input pipeline reads distinct elements.
// It panics with an error wrapping ErrArgument unless 0 ≤ index < num.
func (d *Dataset) Shard(num, index int) *Dataset {
	if num <= 0 || index < 0 || index >= num {
		panic(fmt.Errorf("%w: Shard(%d, %d): want 0 ≤ index < num", ErrArgument, num, index))
	}
	card := d.card
	if card >= 0 {
		card = card / num
		if index < d.card%num {
			card++
		}
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &filterStream{up: up(), keep: func(i int) bool { return i%num == index }} },
		card:     card,
		spec:     d.spec,
		stable:   d.stable,
	}
}

// Map returns a dataset whose elements are fn applied to d's elements. The
// slice fn receives, and its tensors when d is batched, are valid only
// during the call; fn may return them or new tensors. A panic in fn
// propagates out of Next (or, behind Prefetch, comes back through Err).
//
// ElementSpec learns the output shapes by calling fn twice on zero tensors
// shaped like d's elements (a varying dimension set to 1, then 2); if fn
// panics on them, the spec is unknown.
func (d *Dataset) Map(fn func([]Tensor) []Tensor) *Dataset {
	if fn == nil {
		panic(fmt.Errorf("%w: Map: nil function", ErrArgument))
	}
	var spec func() [][]int
	if d.spec != nil {
		in := d.spec
		spec = onceSpec(func() [][]int { return probeSpec(in(), fn) })
	}
	up := d.open
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return &mapStream{up: up(), fn: fn} },
		card:     d.card,
		spec:     spec,
	}
}

// probeSpec traces fn on zero inputs, once with varying dimensions set to 1
// and once set to 2; output dimensions that differ between the two vary.
func probeSpec(in [][]int, fn func([]Tensor) []Tensor) (spec [][]int) {
	if in == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			spec = nil
		}
	}()
	probe := func(fill int) [][]int {
		args := make([]Tensor, len(in))
		for k, sh := range in {
			s := append([]int{}, sh...)
			for i := range s {
				if s[i] < 0 {
					s[i] = fill
				}
			}
			args[k] = Zeros(s...)
		}
		return shapesOf(fn(args))
	}
	a, b := probe(1), probe(2)
	if len(a) != len(b) {
		return nil
	}
	for k := range a {
		if len(a[k]) != len(b[k]) {
			return nil
		}
		for i := range a[k] {
			if a[k][i] != b[k][i] {
				a[k][i] = -1
			}
		}
	}
	return a
}

type mapStream struct {
	up stream
	fn func([]Tensor) []Tensor
}

func (s *mapStream) next() ([]Tensor, bool) {
	v, ok := s.up.next()
	if !ok {
		return nil, false
	}
	return s.fn(v), true
}
func (s *mapStream) err() error { return s.up.err() }
func (s *mapStream) close()     { s.up.close() }
