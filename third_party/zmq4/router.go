// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// NewRouter returns a new ROUTER ZeroMQ socket.
// The returned socket value is initially unbound.
func NewRouter(ctx context.Context, opts ...Option) Socket {
	router := &routerSocket{newSocket(ctx, Router, opts...)}
	router.sck.r = newRouterQReader(router.sck.ctx)
	router.sck.w = newRouterMWriter(router.sck.ctx)
	return router
}

// routerSocket is a ROUTER ZeroMQ socket.
type routerSocket struct {
	sck *socket
}

// Close closes the open Socket
// It first waits up to routerLinger for the messages already queued to go
// out, then closes every connection and stops each peer's sending
// goroutine.
func (router *routerSocket) Close() error {
	w := router.sck.w.(*routerMWriter)
	w.flush(routerLinger)
	err := router.sck.Close()
	w.Close()
	return err
}

// Send puts the message on the outbound send queue.
// Send blocks until the message can be queued or the send deadline expires.
func (router *routerSocket) Send(msg Msg) error {
	ctx, cancel := context.WithTimeout(router.sck.ctx, router.sck.Timeout())
	defer cancel()
	return router.sck.w.write(ctx, msg)
}

// SendMulti puts the message on the outbound send queue.
// SendMulti blocks until the message can be queued or the send deadline expires.
// The message will be sent as a multipart message.
func (router *routerSocket) SendMulti(msg Msg) error {
	msg.multipart = true
	return router.Send(msg)
}

// Recv receives a complete message.
func (router *routerSocket) Recv() (Msg, error) {
	return router.sck.Recv()
}

// Listen connects a local endpoint to the Socket.
func (router *routerSocket) Listen(ep string) error {
	return router.sck.Listen(ep)
}

// Dial connects a remote endpoint to the Socket.
func (router *routerSocket) Dial(ep string) error {
	return router.sck.Dial(ep)
}

// Type returns the type of this Socket (PUB, SUB, ...)
func (router *routerSocket) Type() SocketType {
	return router.sck.Type()
}

// Addr returns the listener's address.
// Addr returns nil if the socket isn't a listener.
func (router *routerSocket) Addr() net.Addr {
	return router.sck.Addr()
}

// GetOption is used to retrieve an option for a socket.
func (router *routerSocket) GetOption(name string) (interface{}, error) {
	return router.sck.GetOption(name)
}

// SetOption is used to set an option for a socket.
func (router *routerSocket) SetOption(name string, value interface{}) error {
	return router.sck.SetOption(name, value)
}

// routerQReader is a queued-message reader.
type routerQReader struct {
	ctx context.Context

	mu sync.RWMutex
	rs []*Conn
	c  chan Msg

	sem *semaphore // ready when a connection is live.
}

func newRouterQReader(ctx context.Context) *routerQReader {
	const qrsize = 10
	return &routerQReader{
		ctx: ctx,
		c:   make(chan Msg, qrsize),
		sem: newSemaphore(),
	}
}

func (q *routerQReader) Close() error {
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

func (q *routerQReader) addConn(r *Conn) {
	q.mu.Lock()
	q.sem.enable()
	q.rs = append(q.rs, r)
	q.mu.Unlock()
	go q.listen(q.ctx, r)
}

func (q *routerQReader) rmConn(r *Conn) {
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

func (q *routerQReader) read(ctx context.Context, msg *Msg) error {
	q.sem.lock(ctx)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case *msg = <-q.c:
	}
	return msg.err
}

func (q *routerQReader) listen(ctx context.Context, r *Conn) {
	defer q.rmConn(r)
	defer r.Close()

	id := []byte(r.Peer.Meta[sysSockID])
	for {
		msg := r.read()
		select {
		case <-ctx.Done():
			return
		default:
			if msg.err != nil {
				return
			}
			msg.Frames = append([][]byte{id}, msg.Frames...)
			q.c <- msg
		}
	}
}

// routerMWriter sends a ROUTER socket's messages, each to the one peer its
// first frame names. Each peer has its own bounded queue and sending
// goroutine, so Send never waits on a peer's network write and a peer that
// does not read delays nobody else (patched for gotrain, see PATCHES.md:
// upstream wrote to the peer while holding the writer's lock, so one peer
// that never read stopped every send of the socket).
type routerMWriter struct {
	ctx   context.Context
	mu    sync.Mutex
	peers []*routerPeer // guarded by mu
	sem   *semaphore
	wg    sync.WaitGroup // one per routerPeer.run
}

// routerQueueLen is how many messages a ROUTER peer's queue holds, as
// libzmq's default SNDHWM. A peer whose queue is full when a message comes
// is disconnected: it has stopped reading.
const routerQueueLen = 1000

// routerLinger bounds how long Close waits for the queued messages to go
// out, so that a reply sent just before Close (a kernel's shutdown_reply)
// still reaches its peer.
const routerLinger = time.Second

// routerPeer is one peer of a ROUTER socket: its queue and the goroutine
// that sends from it.
type routerPeer struct {
	conn    *Conn
	id      []byte
	q       chan Msg
	pending atomic.Int64  // messages queued or being sent
	stop    chan struct{} // closed once, by rmConn or Close
}

func newRouterMWriter(ctx context.Context) *routerMWriter {
	return &routerMWriter{
		ctx: ctx,
		sem: newSemaphore(),
	}
}

// Close stops every peer's sending goroutine, closing its connection, and
// waits for them.
func (w *routerMWriter) Close() error {
	w.mu.Lock()
	peers := w.peers
	w.peers = nil
	w.mu.Unlock()
	for _, p := range peers {
		close(p.stop)
		p.conn.Close()
	}
	w.wg.Wait()
	return nil
}

// flush waits until every peer's queue is empty or d has passed.
func (w *routerMWriter) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		busy := false
		for _, p := range w.peers {
			if p.pending.Load() > 0 && !p.conn.Closed() {
				busy = true
				break
			}
		}
		w.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (mw *routerMWriter) addConn(w *Conn) {
	p := &routerPeer{
		conn: w,
		id:   []byte(w.Peer.Meta[sysSockID]),
		q:    make(chan Msg, routerQueueLen),
		stop: make(chan struct{}),
	}
	mw.mu.Lock()
	mw.sem.enable()
	mw.peers = append(mw.peers, p)
	mw.wg.Add(1)
	mw.mu.Unlock()
	go func() {
		defer mw.wg.Done()
		p.run()
	}()
}

func (mw *routerMWriter) rmConn(w *Conn) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	for i, p := range mw.peers {
		if p.conn == w {
			mw.peers = append(mw.peers[:i], mw.peers[i+1:]...)
			close(p.stop)
			return
		}
	}
}

// write queues msg, whose first frame is the identity of the peer it goes
// to, for that peer. A message for no connected peer is dropped, as
// libzmq's ROUTER does. A peer whose queue is full is disconnected and the
// message dropped, with an error.
func (w *routerMWriter) write(ctx context.Context, msg Msg) error {
	w.sem.lock(ctx)
	if len(msg.Frames) == 0 {
		return errors.New("zmq4: a ROUTER message needs a first frame naming its peer")
	}
	id := msg.Frames[0]
	dmsg := NewMsgFrom(msg.Frames[1:]...)
	w.mu.Lock()
	var full *routerPeer
	for _, p := range w.peers {
		if !bytes.Equal(p.id, id) || p.conn.Closed() {
			continue
		}
		p.pending.Add(1)
		select {
		case p.q <- dmsg:
		default:
			p.pending.Add(-1)
			full = p
		}
		break
	}
	w.mu.Unlock()
	if full != nil {
		full.conn.Close()
		return fmt.Errorf("zmq4: ROUTER peer %q does not read: its queue of %d messages is full; disconnected", id, routerQueueLen)
	}
	return nil
}

// run sends the peer's queued messages until stop is closed. After a
// failed send it closes the connection and drops what comes next; the
// connection's reader then sees it closed, and the socket removes it.
func (p *routerPeer) run() {
	failed := false
	for {
		select {
		case <-p.stop:
			return
		case m := <-p.q:
			if !failed {
				if err := p.conn.SendMsg(m); err != nil {
					failed = true
					p.conn.Close()
				}
			}
			p.pending.Add(-1)
		}
	}
}

var (
	_ rpool  = (*routerQReader)(nil)
	_ wpool  = (*routerMWriter)(nil)
	_ Socket = (*routerSocket)(nil)
)
