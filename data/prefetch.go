package data

import (
	"fmt"
	"runtime/debug"
)

// Prefetch returns a dataset whose iterators read up to n elements of d
// ahead in a background goroutine, so that preparing the next batch
// overlaps the training step. The goroutine belongs to the iterator:
// Close (or the end of the pass) stops it and waits for it. An error or a
// panic in the producer ends the pass, and Err reports it.
// Prefetch(0) returns d. It panics with an error wrapping ErrArgument if
// n < 0.
func (d *Dataset) Prefetch(n int) *Dataset {
	mustNonNegative("Prefetch", n)
	if n == 0 {
		return d
	}
	up := d.open
	borrow := d.stable
	return &Dataset{
		shuffles: d.shuffles,
		open:     func() stream { return startPrefetch(up, n, borrow) },
		card:     d.card,
		spec:     d.spec,
		stable:   d.stable,
	}
}

// prefetchStream hands elements from a producer goroutine to the consumer
// through a ring of n+2 slots: n queued, one being filled and one held by
// the consumer as its current value, so a slot is never written while the
// consumer may still read it and no element allocates once the ring is
// warm.
type prefetchStream struct {
	slots []element
	free  chan int // slots the producer may fill
	ready chan int // filled slots in order; closed when the producer ends
	stop  chan struct{}
	done  chan struct{} // closed when the producer is finished, before ready
	cur   int           // slot the consumer holds, or -1
	// perr is written by the producer before it closes done, and read only
	// after done is seen closed.
	perr    error
	stopped bool
}

func startPrefetch(open func() stream, n int, borrow bool) *prefetchStream {
	p := &prefetchStream{
		slots: make([]element, n+2),
		free:  make(chan int, n+2),
		ready: make(chan int, n),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		cur:   -1,
	}
	for i := range p.slots {
		p.free <- i
	}
	go p.produce(open, borrow)
	return p
}

// produce runs on the prefetch goroutine. It opens the upstream there, so
// that everything upstream runs on this one goroutine, and closes it
// before it exits.
func (p *prefetchStream) produce(open func() stream, borrow bool) {
	var up stream
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); ok {
				p.perr = fmt.Errorf("data: prefetch: panic in producer: %w\n%s", err, debug.Stack())
			} else {
				p.perr = fmt.Errorf("data: prefetch: panic in producer: %v\n%s", r, debug.Stack())
			}
		}
		if up != nil {
			up.close()
		}
		// done first: a consumer that sees ready closed may call err,
		// which reads perr once done is closed.
		close(p.done)
		close(p.ready)
	}()
	up = open()
	// A batch upstream that keeps each batch valid while the ring may
	// still hold it is borrowed rather than copied: the producer runs at
	// most len(slots)-1 values ahead of the consumer's current one.
	if r, ok := up.(rotator); ok && !borrow {
		borrow = r.rotate(len(p.slots) - 1)
	}
	for {
		var slot int
		select {
		case slot = <-p.free:
		case <-p.stop:
			return
		}
		e, ok := up.next()
		if !ok {
			p.perr = up.err()
			return
		}
		p.slots[slot].set(e, borrow)
		select {
		case p.ready <- slot:
		case <-p.stop:
			return
		}
	}
}

func (p *prefetchStream) next() ([]Tensor, bool) {
	if p.cur >= 0 {
		p.free <- p.cur // never blocks: free has room for every slot
		p.cur = -1
	}
	slot, ok := <-p.ready
	if !ok {
		return nil, false
	}
	p.cur = slot
	return p.slots[slot], true
}

func (p *prefetchStream) err() error {
	select {
	case <-p.done:
		return p.perr
	default:
		return nil
	}
}

func (p *prefetchStream) close() {
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.stop)
	<-p.done
}
