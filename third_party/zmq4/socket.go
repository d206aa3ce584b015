// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	defaultRetry      = 250 * time.Millisecond
	defaultTimeout    = 5 * time.Minute
	defaultMaxRetries = 10

	// defaultHandshakeTimeout bounds the ZMTP greeting and handshake of a
	// new connection (patched for gotrain, see PATCHES.md).
	defaultHandshakeTimeout = 10 * time.Second

	// An accept that fails (too many open files, most often) is retried
	// after a pause that starts at acceptBackoffMin and doubles up to
	// acceptBackoffMax, and starts over after a success (patched for
	// gotrain, see PATCHES.md: upstream retried at once, spinning a core
	// for as long as the process had no file descriptor left).
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

var (
	errInvalidAddress = errors.New("zmq4: invalid address")

	ErrBadProperty = errors.New("zmq4: bad property")
)

// socket implements the ZeroMQ socket interface
type socket struct {
	ep            string // socket end-point
	typ           SocketType
	id            SocketIdentity
	retry         time.Duration
	maxRetries    int
	sec           Security
	log           *log.Logger
	subTopics     func() []string
	autoReconnect bool
	timeout       time.Duration
	handshake     time.Duration // ZMTP handshake timeout; 0 means none
	pubq          PubQueue      // PUB and XPUB subscriber queues
	xpubManual    bool          // XPUB: subscriptions wait for ApplySubscription
	maxMsgSize    int64         // WithMaxMessageSize; 0 means none
	maxFrames     int           // WithMaxFrames; 0 means none
	maxConns      int           // WithMaxConns; 0 means none
	maxTopics     int           // WithMaxSubscriptions; 0 means none
	held          atomic.Int32  // accepted connections in their handshake or in conns

	// peerLog rate-limits logPeer.
	peerLog struct {
		sync.Mutex
		last    time.Time
		skipped int
	}

	mu    sync.RWMutex
	conns []*Conn // ZMTP connections
	r     rpool
	w     wpool

	props map[string]interface{} // properties of this socket

	ctx      context.Context // life-line of socket
	cancel   context.CancelFunc
	listener net.Listener
	dialer   net.Dialer

	closedConns   []*Conn
	reaperCond    *sync.Cond
	reaperStarted bool
}

func newDefaultSocket(ctx context.Context, sockType SocketType) *socket {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	return &socket{
		typ:        sockType,
		retry:      defaultRetry,
		maxRetries: defaultMaxRetries,
		timeout:    defaultTimeout,
		handshake:  defaultHandshakeTimeout,
		sec:        nullSecurity{},
		conns:      nil,
		r:          newQReader(ctx),
		w:          newMWriter(ctx),
		props:      make(map[string]interface{}),
		ctx:        ctx,
		cancel:     cancel,
		dialer:     net.Dialer{Timeout: defaultTimeout},
		reaperCond: sync.NewCond(&sync.Mutex{}),
	}
}

func newSocket(ctx context.Context, sockType SocketType, opts ...Option) *socket {
	sck := newDefaultSocket(ctx, sockType)
	for _, opt := range opts {
		opt(sck)
	}
	if len(sck.id) == 0 {
		sck.id = SocketIdentity(newUUID())
	}
	if sck.log == nil {
		sck.log = log.New(os.Stderr, "zmq4: ", 0)
	}

	return sck
}

func (sck *socket) topics() []string {
	var (
		keys   = make(map[string]struct{})
		topics []string
	)
	sck.mu.RLock()
	for _, con := range sck.conns {
		con.mu.RLock()
		for topic := range con.topics {
			if _, dup := keys[topic]; dup {
				continue
			}
			keys[topic] = struct{}{}
			topics = append(topics, topic)
		}
		con.mu.RUnlock()
	}
	sck.mu.RUnlock()
	sort.Strings(topics)
	return topics
}

// Close closes the open Socket
func (sck *socket) Close() error {
	// The Lock around Signal ensures the connReaper is running
	// and is in sck.reaperCond.Wait()
	sck.reaperCond.L.Lock()
	sck.cancel()
	sck.reaperCond.Signal()
	sck.reaperCond.L.Unlock()

	if sck.listener != nil {
		defer sck.listener.Close()
	}

	sck.mu.RLock()
	defer sck.mu.RUnlock()

	var err error
	for _, conn := range sck.conns {
		// A connection whose peer went away was closed by its reader and
		// waits for the reaper: closing it again is no error (patched for
		// gotrain, see PATCHES.md).
		e := conn.Close()
		if e != nil && err == nil && !errors.Is(e, net.ErrClosed) {
			err = e
		}
	}

	// Remove the unix socket file if created by net.Listen
	if sck.listener != nil && strings.HasPrefix(sck.ep, "ipc://") {
		os.Remove(sck.ep[len("ipc://"):])
	}

	return err
}

// Send puts the message on the outbound send queue.
// Send blocks until the message can be queued or the send deadline expires.
func (sck *socket) Send(msg Msg) error {
	ctx, cancel := context.WithTimeout(sck.ctx, sck.Timeout())
	defer cancel()
	return sck.w.write(ctx, msg)
}

// SendMulti puts the message on the outbound send queue.
// SendMulti blocks until the message can be queued or the send deadline expires.
// The message will be sent as a multipart message.
func (sck *socket) SendMulti(msg Msg) error {
	msg.multipart = true
	ctx, cancel := context.WithTimeout(sck.ctx, sck.Timeout())
	defer cancel()
	return sck.w.write(ctx, msg)
}

// Recv receives a complete message.
func (sck *socket) Recv() (Msg, error) {
	ctx, cancel := context.WithCancel(sck.ctx)
	defer cancel()
	var msg Msg
	err := sck.r.read(ctx, &msg)
	return msg, err
}

// Listen connects a local endpoint to the Socket.
func (sck *socket) Listen(endpoint string) error {
	sck.ep = endpoint
	network, addr, err := splitAddr(endpoint)
	if err != nil {
		return err
	}

	trans, ok := drivers.get(network)
	if !ok {
		return UnknownTransportError{Name: network}
	}

	l, err := trans.Listen(sck.ctx, addr)
	if err != nil {
		return fmt.Errorf("zmq4: could not listen to %q: %w", endpoint, err)
	}
	sck.listener = l

	go sck.accept()
	if !sck.reaperStarted {
		sck.reaperCond.L.Lock()
		go sck.connReaper()
		sck.reaperStarted = true
	}

	return nil
}

func (sck *socket) accept() {
	ctx, cancel := context.WithCancel(sck.ctx)
	defer cancel()
	var backoff time.Duration
	for {
		conn, err := sck.listener.Accept()
		if ctx.Err() != nil {
			if conn != nil {
				conn.Close()
			}
			return
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if backoff == 0 {
				backoff = acceptBackoffMin
				sck.log.Printf("could not accept a connection on %q, retrying with a back-off: %+v", sck.ep, err)
			} else {
				backoff = min(2*backoff, acceptBackoffMax)
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		backoff = 0

		if sck.maxConns > 0 && int(sck.held.Load()) >= sck.maxConns {
			// Refused before any byte is read, so a flood of connections
			// costs an accept and a close each.
			conn.Close()
			continue
		}

		// Each handshake runs on its own goroutine, under a deadline, so
		// that a peer that never completes it cannot hold up the
		// connections accepted after it (upstream issue #131).
		sck.held.Add(1)
		go sck.open(conn)
	}
}

// logPeer logs line, about a peer's connection that failed or was refused,
// at most once a second per socket, so that a peer that connects again and
// again cannot flood the log; the next line logged says how many were left
// out (patched for gotrain, see PATCHES.md).
func (sck *socket) logPeer(line string) {
	sck.peerLog.Lock()
	now := time.Now()
	if now.Sub(sck.peerLog.last) < time.Second {
		sck.peerLog.skipped++
		sck.peerLog.Unlock()
		return
	}
	skipped := sck.peerLog.skipped
	sck.peerLog.last, sck.peerLog.skipped = now, 0
	sck.peerLog.Unlock()
	if skipped > 0 {
		line += fmt.Sprintf(" (%d more like it left out since the last such line)", skipped)
	}
	sck.log.Print(line)
}

// nconns returns how many connections the socket holds.
func (sck *socket) nconns() int {
	sck.mu.RLock()
	defer sck.mu.RUnlock()
	return len(sck.conns)
}

// open performs the ZMTP handshake on an accepted connection and adds it to
// the socket. The handshake ends with an error when it takes longer than
// the socket's handshake timeout or when the socket closes.
func (sck *socket) open(conn net.Conn) {
	zconn, err := sck.handshakeConn(conn, true)
	if err != nil {
		// FIXME(sbinet): maybe bubble up this error to application code?
		if sck.ctx.Err() == nil {
			sck.logPeer(fmt.Sprintf("could not open a ZMTP connection with %q: %+v", sck.ep, err))
		}
		conn.Close()
		sck.held.Add(-1)
		return
	}
	sck.addConn(zconn)
}

// handshakeConn opens a ZMTP connection over conn, bounded by the socket's
// handshake timeout. An accepted connection's handshake also ends when the
// socket closes; Dial's does not, as upstream's did not.
func (sck *socket) handshakeConn(conn net.Conn, server bool) (*Conn, error) {
	if sck.handshake > 0 {
		if err := conn.SetDeadline(time.Now().Add(sck.handshake)); err != nil {
			return nil, fmt.Errorf("zmq4: could not set handshake deadline: %w", err)
		}
	}
	stop := func() bool { return true }
	if server {
		stop = context.AfterFunc(sck.ctx, func() { conn.Close() })
	}
	zconn, err := Open(conn, sck.sec, sck.typ, sck.id, server, sck.scheduleRmConn)
	if !stop() {
		if err == nil {
			err = sck.ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if sck.handshake > 0 {
		if err := conn.SetDeadline(time.Time{}); err != nil {
			return nil, fmt.Errorf("zmq4: could not clear handshake deadline: %w", err)
		}
	}
	zconn.maxMsgSize = sck.maxMsgSize
	zconn.maxFrames = sck.maxFrames
	zconn.maxTopics = sck.maxTopics
	zconn.held = server
	return zconn, nil
}

// Dial connects a remote endpoint to the Socket.
func (sck *socket) Dial(endpoint string) error {
	sck.ep = endpoint

	network, addr, err := splitAddr(endpoint)
	if err != nil {
		return err
	}

	var (
		conn      net.Conn
		trans, ok = drivers.get(network)
		retries   = 0
	)
	if !ok {
		return UnknownTransportError{Name: network}
	}

connect:
	conn, err = trans.Dial(sck.ctx, &sck.dialer, addr)
	if err != nil {
		// retry if retry count is lower than maximum retry count and context has not been canceled
		if (sck.maxRetries == -1 || retries < sck.maxRetries) && sck.ctx.Err() == nil {
			retries++
			time.Sleep(sck.retry)
			goto connect
		}
		return fmt.Errorf("zmq4: could not dial to %q (retry=%v): %w", endpoint, sck.retry, err)
	}

	if conn == nil {
		return fmt.Errorf("zmq4: got a nil dial-conn to %q", endpoint)
	}

	zconn, err := sck.handshakeConn(conn, false)
	if err != nil {
		conn.Close()
		return fmt.Errorf("zmq4: could not open a ZMTP connection: %w", err)
	}
	if zconn == nil {
		return fmt.Errorf("zmq4: got a nil ZMTP connection to %q", endpoint)
	}

	if !sck.reaperStarted {
		sck.reaperCond.L.Lock()
		go sck.connReaper()
		sck.reaperStarted = true
	}
	sck.addConn(zconn)
	return nil
}

func (sck *socket) addConn(c *Conn) {
	sck.mu.Lock()
	defer sck.mu.Unlock()
	if sck.ctx.Err() != nil {
		// The socket closed while this connection was being opened.
		c.Close()
		sck.release(c)
		return
	}
	if len(c.Peer.Meta[sysSockID]) == 0 {
		switch c.typ {
		case Router: // TODO: STREAM type when implemented
			// if empty Identity metadata is received from some client
			// need to assign an uuid such that router socket can reply to the correct client
			c.Peer.Meta[sysSockID] = newUUID()
		}
	}
	if c.typ == Router {
		// One live connection per identity, as libzmq's ROUTER with
		// ROUTER_HANDOVER off: a second peer that claims an identity in use
		// is refused, so it cannot receive the first one's messages
		// (patched for gotrain, see PATCHES.md).
		id := c.Peer.Meta[sysSockID]
		for _, o := range sck.conns {
			if o.Peer.Meta[sysSockID] == id && !o.Closed() {
				sck.logPeer(fmt.Sprintf("refused a connection on %q: identity %q is already connected (one connection per identity)", sck.ep, id))
				c.Close()
				sck.release(c)
				return
			}
		}
	}
	sck.conns = append(sck.conns, c)
	if sck.w != nil {
		sck.w.addConn(c)
	}
	if sck.r != nil {
		sck.r.addConn(c)
	}
	// resend subscriptions for topics if there are any
	if sck.subTopics != nil {
		for _, topic := range sck.subTopics() {
			_ = sck.Send(NewMsg(append([]byte{1}, topic...)))
		}
	}
}

func (sck *socket) rmConn(c *Conn) {
	sck.mu.Lock()
	defer sck.mu.Unlock()

	cur := -1
	for i := range sck.conns {
		if sck.conns[i] == c {
			cur = i
			break
		}
	}

	if cur == -1 {
		return
	}

	sck.conns = append(sck.conns[:cur], sck.conns[cur+1:]...)
	sck.release(c)
	if sck.r != nil {
		sck.r.rmConn(c)
	}
	if sck.w != nil {
		sck.w.rmConn(c)
	}
}

// release stops counting c against WithMaxConns, once: c was accepted,
// and has been refused or removed.
func (sck *socket) release(c *Conn) {
	if c.held {
		c.held = false
		sck.held.Add(-1)
	}
}

func (sck *socket) scheduleRmConn(c *Conn) {
	sck.reaperCond.L.Lock()
	sck.closedConns = append(sck.closedConns, c)
	sck.reaperCond.Signal()
	sck.reaperCond.L.Unlock()

	if sck.autoReconnect {
		sck.Dial(sck.ep)
	}
}

// Type returns the type of this Socket (PUB, SUB, ...)
func (sck *socket) Type() SocketType {
	return sck.typ
}

// Addr returns the listener's address.
// Addr returns nil if the socket isn't a listener.
func (sck *socket) Addr() net.Addr {
	if sck.listener == nil {
		return nil
	}
	return sck.listener.Addr()
}

// GetOption is used to retrieve an option for a socket.
func (sck *socket) GetOption(name string) (interface{}, error) {
	v, ok := sck.props[name]
	if !ok {
		return nil, ErrBadProperty
	}
	return v, nil
}

// SetOption is used to set an option for a socket.
func (sck *socket) SetOption(name string, value interface{}) error {
	// FIXME(sbinet) different socket types support different options.
	sck.props[name] = value
	return nil
}

func (sck *socket) Timeout() time.Duration {
	return sck.timeout
}

func (sck *socket) connReaper() {
	// We are not locking here sck.reaperCond.L.Lock()
	// as it should be locked prior starting connReaper as goroutine
	// That would ensure that sck.reaperCond.Signal()
	// would be delivered only when reaper goroutine is really started
	// and is in sck.reaperCond.Wait()
	defer sck.reaperCond.L.Unlock()

	for {
		for len(sck.closedConns) == 0 && sck.ctx.Err() == nil {
			sck.reaperCond.Wait()
		}

		if sck.ctx.Err() != nil {
			return
		}

		// Clone the known closed connections to avoid data race
		// and remove those under reaper unlocked.
		// That should fix the deadlock reported in #149.
		cc := append([]*Conn{}, sck.closedConns...) // clone
		sck.closedConns = sck.closedConns[:0]
		sck.reaperCond.L.Unlock()
		for _, c := range cc {
			sck.rmConn(c)
		}
		sck.reaperCond.L.Lock()
	}
}

var (
	_ Socket = (*socket)(nil)
)
