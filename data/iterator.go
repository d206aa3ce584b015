package data

import (
	"runtime"
	"slices"

	"github.com/gotrain/gotrain/internal/safepoint"
)

// Iterator reads one pass over a Dataset:
//
//	it := ds.Iter()
//	defer it.Close()
//	for it.Next() {
//		x, y := it.Value()[0], it.Value()[1]
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// An Iterator is not safe for concurrent use. It must be closed unless Next
// has returned false, which closes it; Close stops the goroutines Prefetch
// started and waits for them. As a safety net for notebook loops that break
// early, an iterator that becomes unreachable without being closed has its
// goroutines stopped by the garbage collector's cleanup, at some later time.
type Iterator struct {
	s       stream
	passes  []uint64 // the Shuffles' pass counters when it opened
	pos     int      // elements returned
	val     []Tensor
	e       error
	closed  bool
	cleanup runtime.Cleanup // closes s if the iterator is dropped unclosed
}

func newIterator(s stream) *Iterator {
	it := &Iterator{s: s}
	// The cleanup must not block the runtime's cleanup goroutine, and close
	// waits for the producer, so it closes on a goroutine of its own.
	it.cleanup = runtime.AddCleanup(it, func(s stream) { go s.close() }, s)
	return it
}

// Next advances to the next element and reports whether there is one. It
// returns false at the end of the pass or on an error (see Err), and then
// closes the iterator.
//
// Next is an interrupt safe point: if the kernel has raised an interrupt,
// Next closes the iterator and panics with safepoint.ErrInterrupted.
func (it *Iterator) Next() bool {
	if err := safepoint.Err(); err != nil {
		// Close first so no prefetch goroutine outlives the unwinding cell.
		it.Close()
		if it.e == nil {
			it.e = err
		}
		panic(err)
	}
	if it.closed || it.s == nil {
		return false
	}
	v, ok := it.s.next()
	if !ok {
		it.e = it.s.err()
		it.Close()
		return false
	}
	it.val = v
	it.pos++
	return true
}

// State returns where the iterator stands, for Dataset.IterAt.
func (it *Iterator) State() IteratorState {
	return IteratorState{Position: it.pos, Passes: slices.Clone(it.passes)}
}

// Value returns the current element, one tensor per component. The slice
// and the tensors' data belong to the iterator and stay valid only until
// the next call of Next or Close; use Tensor.Clone to keep them.
func (it *Iterator) Value() []Tensor { return it.val }

// Err returns the error that ended the pass, or nil if it ended normally or
// has not ended.
func (it *Iterator) Err() error { return it.e }

// Close ends the pass early and releases the iterator's buffers and
// goroutines, waiting for them to stop. Close is idempotent.
func (it *Iterator) Close() {
	if it.closed || it.s == nil {
		return
	}
	it.closed = true
	it.val = nil
	it.cleanup.Stop()
	it.s.close()
}
