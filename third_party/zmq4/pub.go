// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Topics is an interface that wraps the basic Topics method.
type Topics interface {
	// Topics returns the sorted list of topics a socket is subscribed to.
	Topics() []string
}

// NewPub returns a new PUB ZeroMQ socket.
// The returned socket value is initially unbound.
func NewPub(ctx context.Context, opts ...Option) Socket {
	pub := &pubSocket{sck: newSocket(ctx, Pub, opts...)}
	pub.sck.w = newPubMWriter(pub.sck.ctx, pub.sck.pubq)
	pub.sck.r = newPubQReader(pub.sck.ctx, false, false)
	return pub
}

// pubSocket is a PUB ZeroMQ socket.
type pubSocket struct {
	sck *socket
}

// Close closes the open Socket. It first waits up to PubQueue.Linger for
// the subscribers' queues to drain, and returns once every goroutine that
// sends to a subscriber has returned.
func (pub *pubSocket) Close() error {
	return closePub(pub.sck)
}

// closePub closes a PUB or XPUB socket: flush, close, then stop the writer,
// which upstream never stopped.
func closePub(sck *socket) error {
	w := sck.w.(*pubMWriter)
	if linger := sck.pubq.Linger; linger > 0 {
		w.flush(linger)
	}
	err := sck.Close()
	w.Close()
	return err
}

// Send puts the message on the outbound send queue.
// Send blocks until the message can be queued or the send deadline expires.
func (pub *pubSocket) Send(msg Msg) error {
	ctx, cancel := context.WithTimeout(pub.sck.ctx, pub.sck.Timeout())
	defer cancel()
	return pub.sck.w.write(ctx, msg)
}

// SendMulti puts the message on the outbound send queue.
// SendMulti blocks until the message can be queued or the send deadline expires.
// The message will be sent as a multipart message.
func (pub *pubSocket) SendMulti(msg Msg) error {
	msg.multipart = true
	ctx, cancel := context.WithTimeout(pub.sck.ctx, pub.sck.Timeout())
	defer cancel()
	return pub.sck.w.write(ctx, msg)
}

// Recv receives a complete message.
func (*pubSocket) Recv() (Msg, error) {
	msg := Msg{err: fmt.Errorf("zmq4: PUB sockets can't recv messages")}
	return msg, msg.err
}

// Listen connects a local endpoint to the Socket.
func (pub *pubSocket) Listen(ep string) error {
	return pub.sck.Listen(ep)
}

// Dial connects a remote endpoint to the Socket.
func (pub *pubSocket) Dial(ep string) error {
	return pub.sck.Dial(ep)
}

// Type returns the type of this Socket (PUB, SUB, ...)
func (pub *pubSocket) Type() SocketType {
	return pub.sck.Type()
}

// Addr returns the listener's address.
// Addr returns nil if the socket isn't a listener.
func (pub *pubSocket) Addr() net.Addr {
	return pub.sck.Addr()
}

// GetOption is used to retrieve an option for a socket.
func (pub *pubSocket) GetOption(name string) (interface{}, error) {
	return pub.sck.GetOption(name)
}

// SetOption is used to set an option for a socket.
func (pub *pubSocket) SetOption(name string, value interface{}) error {
	err := pub.sck.SetOption(name, value)
	if err != nil {
		return err
	}

	if name != OptionHWM {
		return ErrBadProperty
	}

	hwm, ok := value.(int)
	if !ok {
		return ErrBadProperty
	}

	pub.sck.w.(*pubMWriter).setHWM(hwm)
	return nil
}

// Topics returns the sorted list of topics a socket is subscribed to.
func (pub *pubSocket) Topics() []string {
	return pub.sck.topics()
}

// pubQReader is a queued-message reader. It applies the subscription
// messages its connections send; an XPUB socket's reader also passes them,
// and any other message, on to Recv (patched for gotrain, see PATCHES.md:
// upstream kept subscriptions from an XPUB's Recv and queued other messages
// for a PUB's Recv, which always fails, until its queue was full).
type pubQReader struct {
	ctx     context.Context
	forward bool // XPUB: Recv returns what subscribers send
	manual  bool // XPUB with WithXPubManual: subscribing waits for ApplySubscription

	mu sync.RWMutex
	rs []*Conn
	c  chan Msg

	sem *semaphore // ready when a connection is live.
}

func newPubQReader(ctx context.Context, forward, manual bool) *pubQReader {
	const qrsize = 10
	return &pubQReader{
		ctx:     ctx,
		forward: forward,
		manual:  manual,
		c:       make(chan Msg, qrsize),
		sem:     newSemaphore(),
	}
}

func (q *pubQReader) Close() error {
	q.mu.RLock()
	var err error
	for _, r := range q.rs {
		e := r.Close()
		if e != nil && err == nil {
			err = e
		}
	}
	q.rs = nil
	q.mu.RUnlock()
	return err
}

func (q *pubQReader) addConn(r *Conn) {
	q.mu.Lock()
	q.sem.enable()
	q.rs = append(q.rs, r)
	q.mu.Unlock()
	go q.listen(q.ctx, r)
}

func (q *pubQReader) rmConn(r *Conn) {
	q.mu.Lock()
	defer q.mu.Unlock()

	cur := -1
	for i := range q.rs {
		if q.rs[i] == r {
			cur = i
			break
		}
	}
	if cur >= 0 {
		q.rs = append(q.rs[:cur], q.rs[cur+1:]...)
	}
}

func (q *pubQReader) read(ctx context.Context, msg *Msg) error {
	q.sem.lock(ctx)
	select {
	case <-ctx.Done():
	case *msg = <-q.c:
	}
	return msg.err
}

func (q *pubQReader) listen(ctx context.Context, r *Conn) {
	defer q.rmConn(r)
	defer r.Close()

	for {
		msg := r.read()
		select {
		case <-ctx.Done():
			return
		default:
			if msg.err != nil {
				return
			}
			if q.topic(msg) && !(q.manual && msg.Frames[0][0] == 1) {
				r.subscribe(msg)
			}
			if !q.forward {
				continue
			}
			msg.from = r
			select {
			case q.c <- msg:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (q *pubQReader) topic(msg Msg) bool {
	if len(msg.Frames) != 1 {
		return false
	}
	frame := msg.Frames[0]
	if len(frame) == 0 {
		return false
	}
	topic := frame[0]
	return topic == 0 || topic == 1
}

// pubMWriter sends a PUB or XPUB socket's messages to its subscribers. Each
// subscriber has its own bounded queue and its own sending goroutine, so a
// subscriber that reads slowly, or not at all, delays nobody else (patched
// for gotrain, see PATCHES.md; upstream had one unbounded queue and one
// goroutine that wrote to each subscriber in turn).
type pubMWriter struct {
	ctx context.Context

	// sendMu serializes write and flush, so each subscriber's queue gets
	// messages in the order they were sent.
	sendMu sync.Mutex

	mu     sync.Mutex
	cfg    PubQueue // with defaults filled in; guarded by mu
	subs   []*pubSub
	closed bool
}

func newPubMWriter(ctx context.Context, cfg PubQueue) *pubMWriter {
	return &pubMWriter{ctx: ctx, cfg: cfg.withDefaults()}
}

// Close stops every subscriber's sending goroutine, closes its connection
// and waits for the goroutine to return. What is still queued is dropped;
// call flush first to give it a chance.
func (w *pubMWriter) Close() error {
	w.mu.Lock()
	w.closed = true
	subs := w.subs
	w.subs = nil
	w.mu.Unlock()
	for _, s := range subs {
		s.stop()
	}
	return nil
}

func (mw *pubMWriter) addConn(w *Conn) {
	s := newPubSub(w)
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.closed {
		w.Close()
		return
	}
	mw.subs = append(mw.subs, s)
	go s.run()
}

func (mw *pubMWriter) rmConn(w *Conn) {
	mw.mu.Lock()
	var gone *pubSub
	for i, s := range mw.subs {
		if s.conn == w {
			gone = s
			mw.subs = append(mw.subs[:i:i], mw.subs[i+1:]...)
			break
		}
	}
	mw.mu.Unlock()
	if gone != nil {
		gone.stop()
	}
}

func (w *pubMWriter) setHWM(hwm int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cfg.Len = hwm
	w.cfg = w.cfg.withDefaults()
}

// write queues msg for every subscriber whose subscriptions match its first
// frame. A message that does not fit a subscriber's queue is dropped for
// that subscriber, unless msg.MustDeliver is set: then write waits up to
// PubQueue.Wait for room, and disconnects a subscriber that still has none.
func (w *pubMWriter) write(ctx context.Context, msg Msg) error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	var topic string
	if len(msg.Frames) > 0 {
		topic = string(msg.Frames[0])
	}
	w.mu.Lock()
	cfg := w.cfg
	subs := append([]*pubSub(nil), w.subs...)
	w.mu.Unlock()

	var full []*pubSub
	for _, s := range subs {
		if !s.conn.subscribed(topic) {
			continue
		}
		switch s.offer(msg, &cfg) {
		case offerDropped:
			cfg.dropped(s, msg, false)
		case offerFull:
			full = append(full, s)
		}
	}
	if len(full) == 0 {
		return nil
	}
	deadline := time.NewTimer(cfg.Wait)
	defer deadline.Stop()
	expired := false
	for _, s := range full {
		if !expired && s.waitOffer(ctx, msg, &cfg, deadline.C) {
			continue
		}
		expired = true
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.conn.Close()
		cfg.dropped(s, msg, true)
	}
	return nil
}

// applySubscription queues first for the subscriber that sent sub, then
// applies sub to it, while no other message can be queued: the subscriber
// receives first before anything else, and every later message that
// matches sub. It fails if that subscriber is gone, or if first does not
// fit its queue.
func (w *pubMWriter) applySubscription(sub Msg, first []Msg) error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	w.mu.Lock()
	cfg := w.cfg
	var s *pubSub
	for _, x := range w.subs {
		if x.conn == sub.from {
			s = x
		}
	}
	w.mu.Unlock()
	if s == nil {
		return ErrSubscriberGone
	}
	for _, m := range first {
		if s.offer(m, &cfg) != offerQueued {
			cfg.dropped(s, m, false)
			return errors.New("zmq4: no room in a new subscriber's queue for its first messages")
		}
	}
	sub.from.subscribe(sub)
	return nil
}

// flush waits until every subscriber's queue is empty or d has passed.
func (w *pubMWriter) flush(d time.Duration) {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	w.mu.Lock()
	subs := append([]*pubSub(nil), w.subs...)
	w.mu.Unlock()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for _, s := range subs {
		for !s.drained() {
			select {
			case <-s.room:
			case <-s.done:
			case <-deadline.C:
				return
			}
		}
	}
}

// pubSub is one subscriber of a PUB or XPUB socket: its queue and the
// goroutine that sends from it.
type pubSub struct {
	conn *Conn

	wake  chan struct{} // buffered 1: the queue got a message
	room  chan struct{} // buffered 1: a message left the queue
	quit  chan struct{} // closed by stop
	done  chan struct{} // closed when run returns
	once  sync.Once
	mu    sync.Mutex
	q     []Msg // guarded by mu; q[0] is being sent
	bytes int   // guarded by mu; the sum of the sizes of q's messages
	dead  bool  // guarded by mu; sending failed, or stop was called
}

func newPubSub(c *Conn) *pubSub {
	return &pubSub{
		conn: c,
		wake: make(chan struct{}, 1),
		room: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
}

type offerResult int

const (
	offerQueued offerResult = iota
	offerDropped
	offerFull // a MustDeliver message found no room, not even in the reserve
)

// offer queues msg if it fits the queue's bounds. A message always fits an
// empty queue, so a message larger than the bounds still reaches a
// subscriber that keeps up.
func (s *pubSub) offer(msg Msg, cfg *PubQueue) offerResult {
	size := msg.size()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return offerQueued // gone: nobody to deliver to, nothing to count
	}
	n := len(s.q)
	fits := n == 0 || (n < cfg.Len && s.bytes+size <= cfg.Bytes)
	if !fits && msg.MustDeliver {
		fits = n < cfg.Len+cfg.Reserve && s.bytes+size <= cfg.Bytes+cfg.ReserveBytes
	}
	switch {
	case fits:
	case msg.MustDeliver:
		return offerFull
	default:
		return offerDropped
	}
	s.q = append(s.q, msg)
	s.bytes += size
	notify(s.wake)
	return offerQueued
}

// waitOffer retries offer each time a message leaves the queue, until msg
// is queued (true) or expired fires or ctx ends (false).
func (s *pubSub) waitOffer(ctx context.Context, msg Msg, cfg *PubQueue, expired <-chan time.Time) bool {
	for {
		select {
		case <-s.room:
			if s.offer(msg, cfg) == offerQueued {
				return true
			}
		case <-s.done:
			return true
		case <-expired:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (s *pubSub) drained() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.q) == 0 || s.dead
}

// queued returns the number of messages in the queue.
func (s *pubSub) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.q)
}

func (s *pubSub) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.q) == 0 || s.dead {
			dead := s.dead
			s.mu.Unlock()
			if dead {
				return
			}
			select {
			case <-s.wake:
				continue
			case <-s.quit:
				return
			}
		}
		msg := s.q[0]
		s.mu.Unlock()

		err := s.conn.SendMsg(msg)

		s.mu.Lock()
		s.q[0] = Msg{}
		s.q = s.q[1:]
		s.bytes -= msg.size()
		if len(s.q) == 0 {
			s.q = nil // let the backing array go
		}
		if err != nil {
			s.dead = true
			s.q, s.bytes = nil, 0
		}
		s.mu.Unlock()
		notify(s.room)
	}
}

// stop ends the sending goroutine: it closes the connection, which ends a
// send blocked on a peer that does not read, and waits for run to return.
func (s *pubSub) stop() {
	s.once.Do(func() {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		close(s.quit)
		s.conn.Close()
	})
	<-s.done
}

// notify wakes the receiver of c, a channel buffered 1, without blocking.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

var (
	_ rpool  = (*pubQReader)(nil)
	_ wpool  = (*pubMWriter)(nil)
	_ Socket = (*pubSocket)(nil)
	_ Topics = (*pubSocket)(nil)
)
