package worker

import (
	"encoding/json"
	"fmt"
	"sync"
)

const (
	// queueLimit bounds the stream bytes waiting for the link. A cell that
	// prints faster than the kernel forwards blocks in its write, as a
	// program does on a slow terminal, instead of growing the worker.
	queueLimit = 4 << 20
	// betweenLimit caps, per stream, what goroutines of earlier cells print
	// while no cell runs; it is shown at the start of the next cell.
	betweenLimit = 64 << 10
)

// outbox orders everything the worker sends. Frames go out in the order
// they were pushed, by one writer goroutine that sends all it finds queued
// with a single flush, and text pushed to the same stream while the writer
// is busy joins one frame: one print is sent at once, a loop of prints in
// frames as large as the link lets them grow.
type outbox struct {
	link *link
	mu   sync.Mutex
	cond *sync.Cond // signalled when items arrive or room frees up
	// Guarded by mu:
	items   []outItem
	queued  int  // stream bytes in items
	running bool // a cell is running: stream text goes out, not into between
	silent  bool // the running cell is silent: its output is dropped
	between [2][]byte
	dropped [2]int
}

type outItem struct {
	kind kind
	body []byte
}

func (o *outbox) init(l *link) {
	o.link = l
	o.cond = sync.NewCond(&o.mu)
	go o.writer()
}

func (o *outbox) writer() {
	var batch []outItem
	for {
		o.mu.Lock()
		for len(o.items) == 0 {
			o.cond.Wait()
		}
		batch, o.items = o.items, batch[:0]
		o.queued = 0
		o.cond.Broadcast()
		o.mu.Unlock()

		o.link.mu.Lock()
		for _, it := range batch {
			o.link.writeLocked(it.kind, it.body)
		}
		err := o.link.flushLocked()
		o.link.mu.Unlock()
		if err != nil {
			return // the link is gone; the read loop ends the process
		}
		clear(batch)
	}
}

// pushLocked queues one frame.
func (o *outbox) pushLocked(k kind, body []byte) {
	o.items = append(o.items, outItem{kind: k, body: body})
	o.cond.Broadcast()
}

// pushJSON queues a frame with v as its body.
func (o *outbox) pushJSON(k kind, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// A display bundle holding a value JSON cannot encode (a NaN in
		// application/json): say so in the cell instead.
		k, body = kindStderr, fmt.Appendf(nil, "worker: could not send a %c frame: %v\n", k, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.silent && k != kindReply && k != kindInputReq {
		return
	}
	o.pushLocked(k, body)
}

// stream queues text for stdout (0) or stderr (1) of the running cell.
func (o *outbox) stream(i int, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streamLocked(i, p)
}

func (o *outbox) streamLocked(i int, p []byte) {
	if len(p) == 0 {
		return
	}
	if !o.running {
		o.keepLocked(i, p)
		return
	}
	if o.silent {
		return
	}
	for o.queued > queueLimit && o.running {
		o.cond.Wait()
	}
	k := kindStdout
	if i == 1 {
		k = kindStderr
	}
	o.queued += len(p)
	if n := len(o.items); n > 0 && o.items[n-1].kind == k {
		o.items[n-1].body = append(o.items[n-1].body, p...)
		return
	}
	o.pushLocked(k, append([]byte(nil), p...))
}

// keepLocked keeps text for the next cell, up to betweenLimit.
func (o *outbox) keepLocked(i int, p []byte) {
	if room := betweenLimit - len(o.between[i]); room < len(p) {
		o.dropped[i] += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	o.between[i] = append(o.between[i], p...)
}

// capture is the sink of fds 1 and 2.
func (o *outbox) capture(i int, p []byte) { o.stream(i, p) }

// begin starts a cell: what goroutines printed since the last cell comes
// first. A silent cell shows nothing, so that text waits for the next one.
func (o *outbox) begin(silent bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.running, o.silent = true, silent
	if silent {
		return
	}
	for i := range o.between {
		text := o.between[i]
		o.between[i] = nil
		if o.dropped[i] > 0 {
			text = fmt.Appendf(text, "\n[worker: %d more bytes printed between cells were dropped]\n", o.dropped[i])
			o.dropped[i] = 0
		}
		o.streamLocked(i, text)
	}
}

// end queues the cell's result after all of its output.
func (o *outbox) end(r resultMsg) {
	body, err := json.Marshal(r)
	if err != nil {
		body, _ = json.Marshal(resultMsg{Err: &execError{Name: "EncodingError", Value: fmt.Sprintf("worker: encoding the cell's result: %v", err)}})
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pushLocked(kindResult, body)
	o.running, o.silent = false, false
	o.cond.Broadcast()
}
