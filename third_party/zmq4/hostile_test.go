// Tests of the patches for hostile peers (gotrain issue 31, see
// PATCHES.md): bounded parsing, connection limits, one connection per
// identity on ROUTER.

package zmq4

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// greetingBytes is a valid ZMTP 3.0 greeting for the NULL mechanism.
func greetingBytes() []byte {
	g := greeting{Version: defaultVersion}
	g.Sig.Header, g.Sig.Footer = sigHeader, sigFooter
	copy(g.Mechanism[:], NullSecurity)
	return g.marshal()
}

// frameHeader is the header of one frame of size bytes with flags fl.
func frameHeader(fl byte, size uint64) []byte {
	if size > 255 {
		h := []byte{fl | isLongBitFlag, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(h[1:], size)
		return h
	}
	return []byte{fl, byte(size)}
}

// readyCmd is a READY command frame whose metadata is md, raw.
func readyCmd(md []byte) []byte {
	body := append([]byte{byte(len(CmdReady))}, CmdReady...)
	body = append(body, md...)
	return append(frameHeader(isCommandBitFlag, uint64(len(body))), body...)
}

// dealerMeta is the READY metadata of a DEALER with identity id.
func dealerMeta(t testing.TB, id string) []byte {
	t.Helper()
	md, err := Metadata{sysSockType: string(Dealer), sysSockID: id}.MarshalZMTP()
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// rawPeer connects to addr and sends first; the test's end closes it.
func rawPeer(t *testing.T, addr net.Addr, first ...[]byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, b := range first {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// handshaken is a raw DEALER peer with identity id that has completed the
// handshake with the socket at addr: what it sends next is a message.
func handshaken(t *testing.T, addr net.Addr, id string) net.Conn {
	t.Helper()
	c := rawPeer(t, addr, greetingBytes(), readyCmd(dealerMeta(t, id)))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var g [zmtpMsgLen]byte
	if _, err := io.ReadFull(c, g[:]); err != nil {
		t.Fatalf("reading the socket's greeting: %v", err)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("reading the socket's READY: %v", err)
	}
	if _, err := io.CopyN(io.Discard, c, int64(hdr[1])); err != nil {
		t.Fatalf("reading the socket's READY: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	return c
}

// hungUp reports whether the socket closed c within 10 s.
func hungUp(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// roundTrip checks that a DEALER with identity id still gets an answer
// from router.
func roundTrip(t *testing.T, router Socket, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dealer := NewDealer(ctx, WithID(SocketIdentity(id)))
	defer dealer.Close()
	if err := dealer.Dial("tcp://" + router.Addr().String()); err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if err := dealer.Send(NewMsgString("6*7")); err != nil {
		t.Fatal(err)
	}
	got, err := router.Recv()
	if err != nil {
		t.Fatalf("router Recv: %v", err)
	}
	if len(got.Frames) != 2 || string(got.Frames[0]) != id || string(got.Frames[1]) != "6*7" {
		t.Fatalf("router received %q, want [%s 6*7]", got.Frames, id)
	}
	if err := router.Send(NewMsgFrom([]byte(id), []byte("42"))); err != nil {
		t.Fatal(err)
	}
	reply, err := dealer.Recv()
	if err != nil {
		t.Fatalf("dealer Recv: %v", err)
	}
	if len(reply.Frames) != 1 || string(reply.Frames[0]) != "42" {
		t.Fatalf("dealer received %q, want [42]", reply.Frames)
	}
}

// quietRouter is a ROUTER on a free loopback port whose log is discarded,
// closed at the test's end.
func quietRouter(t *testing.T, opts ...Option) Socket {
	t.Helper()
	opts = append([]Option{WithLogger(discardLogger())}, opts...)
	router := NewRouter(context.Background(), opts...)
	t.Cleanup(func() { router.Close() })
	if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return router
}

// TestIssue31Property checks that the READY metadata parser refuses, and
// never panics on, properties whose lengths pass the end of the data.
func TestIssue31Property(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"key length only", []byte{0}},
		{"key past the end", []byte{5, 'a', 'b'}},
		{"no value length", []byte{1, 'k', 0, 0}},
		{"value past the end", []byte{1, 'k', 0, 0, 0, 9, 'v'}},
		{"value length 2^32-1", []byte{1, 'k', 0xff, 0xff, 0xff, 0xff}},
		{"good then short", []byte{1, 'k', 0, 0, 0, 1, 'v', 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := make(Metadata)
			if err := md.UnmarshalZMTP(tt.data); err == nil {
				t.Errorf("UnmarshalZMTP(%q) = nil error, want one; got %v", tt.data, md)
			}
		})
	}
	md := make(Metadata)
	if err := md.UnmarshalZMTP([]byte{1, 'k', 0, 0, 0, 1, 'v'}); err != nil || md["K"] != "v" {
		t.Errorf("UnmarshalZMTP(good) = %v, %v; want map[K:v], nil", md, err)
	}
}

// TestIssue31HostilePeers checks that what a peer sends, in the handshake
// or after it, ends that peer's connection at worst: the socket keeps
// serving a well-behaved DEALER afterwards.
func TestIssue31HostilePeers(t *testing.T) {
	many := func(n int, fl byte) []byte {
		var b []byte
		for i := 0; i < n; i++ {
			b = append(b, frameHeader(fl, 0)...)
		}
		return b
	}
	tests := []struct {
		name      string
		opts      []Option
		handshake bool   // send after a complete handshake
		send      []byte // what the peer sends
	}{
		{"READY metadata \\x00", nil, false, append(greetingBytes(), readyCmd([]byte{0})...)},
		{"READY metadata short value", nil, false, append(greetingBytes(), readyCmd([]byte{1, 'k', 0, 0, 1, 0})...)},
		{"READY with an unknown socket type", nil, false, append(greetingBytes(), readyCmd([]byte{11, 'S', 'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 3, 'F', 'O', 'O'})...)},
		{"READY with no socket type", nil, false, append(greetingBytes(), readyCmd(nil)...)},
		{"READY of 2^46 bytes", nil, false, append(greetingBytes(), frameHeader(isCommandBitFlag, 1<<46)...)},
		{"READY of 2^62 bytes", nil, false, append(greetingBytes(), frameHeader(isCommandBitFlag, 1<<62)...)},
		{"READY of 2^64-1 bytes", nil, false, append(greetingBytes(), frameHeader(isCommandBitFlag, ^uint64(0))...)},
		{"handshake frame over 64 KiB", nil, false, append(greetingBytes(), frameHeader(isCommandBitFlag, 64<<10+1)...)},
		{"handshake frame count", nil, false, append(greetingBytes(), many(100, isCommandBitFlag|hasMoreBitFlag)...)},
		{"frame of 2^46 bytes, no limit", nil, true, frameHeader(0, 1<<46)},
		{"frame of 2^62 bytes, no limit", nil, true, frameHeader(0, 1<<62)},
		{"frame of 2^46 bytes, limit", []Option{WithMaxMessageSize(1 << 20)}, true, frameHeader(0, 1<<46)},
		{"frames over the limit together", []Option{WithMaxMessageSize(1000)}, true,
			append(append(frameHeader(hasMoreBitFlag, 600), make([]byte, 600)...), frameHeader(0, 600)...)},
		{"frame count", []Option{WithMaxFrames(64)}, true, many(1000, hasMoreBitFlag)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			router := quietRouter(t, tt.opts...)
			var c net.Conn
			if tt.handshake {
				c = handshaken(t, router.Addr(), "hostile")
				if _, err := c.Write(tt.send); err != nil {
					t.Fatal(err)
				}
			} else {
				c = rawPeer(t, router.Addr(), tt.send)
			}
			if strings.Contains(tt.name, "no limit") {
				// Nothing to refuse: the peer hangs up mid-frame.
				c.Close()
			} else if !hungUp(c) {
				t.Fatal("the socket kept the hostile peer's connection")
			}
			roundTrip(t, router, "healthy")
		})
	}
}

// TestIssue31MessageLimits checks that messages within WithMaxMessageSize
// and WithMaxFrames pass whole.
func TestIssue31MessageLimits(t *testing.T) {
	router := quietRouter(t, WithMaxMessageSize(1<<20), WithMaxFrames(8))
	c := handshaken(t, router.Addr(), "peer")
	big := bytes.Repeat([]byte{'x'}, 1<<20-10)
	var msg []byte
	msg = append(msg, frameHeader(hasMoreBitFlag, uint64(len(big)))...)
	msg = append(msg, big...)
	for i := 0; i < 6; i++ {
		msg = append(msg, frameHeader(hasMoreBitFlag, 1)...)
		msg = append(msg, 'y')
	}
	msg = append(msg, frameHeader(0, 4)...)
	msg = append(msg, "last"...)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got, err := router.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != 9 || !bytes.Equal(got.Frames[1], big) || string(got.Frames[8]) != "last" {
		t.Fatalf("got %d frames, want 9: the identity, %d bytes, 6 of 1 byte, \"last\"", len(got.Frames), len(big))
	}
}

// panicSecurity is the NULL mechanism with a Handshake or a Decrypt that
// panics, standing for a bug that a peer's bytes reach.
type panicSecurity struct {
	nullSecurity
	inHandshake bool
}

func (s panicSecurity) Type() SecurityType { return "PANIC" }

func (s panicSecurity) Handshake(conn *Conn, server bool) error {
	if s.inHandshake {
		panic("handshake bug")
	}
	return s.nullSecurity.Handshake(conn, server)
}

func (panicSecurity) Decrypt(w io.Writer, data []byte) (int, error) {
	if string(data) == "boom" {
		panic("decrypt bug")
	}
	return w.Write(data)
}

// TestIssue31PanicClosesConnOnly checks that a panic while serving one
// connection closes that connection and leaves the socket serving others.
func TestIssue31PanicClosesConnOnly(t *testing.T) {
	for _, inHandshake := range []bool{true, false} {
		t.Run(fmt.Sprintf("in handshake %v", inHandshake), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sec := panicSecurity{inHandshake: inHandshake}
			router := NewRouter(ctx, WithSecurity(sec), WithLogger(discardLogger()))
			defer router.Close()
			if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			dealer := NewDealer(ctx, WithSecurity(panicSecurity{}), WithID(SocketIdentity("victim")), WithDialerMaxRetries(0))
			defer dealer.Close()
			err := dealer.Dial("tcp://" + router.Addr().String())
			if inHandshake {
				if err == nil {
					t.Fatal("Dial succeeded, want the router to hang up after its handshake panicked")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if err := dealer.Send(NewMsgString("boom")); err != nil {
					t.Fatal(err)
				}
				// The router's reader panics in Decrypt and hangs up: the
				// dealer's next receive fails instead of hanging.
				if _, err := dealer.Recv(); err == nil {
					t.Fatal("dealer Recv succeeded, want the connection closed")
				}
			}
		})
	}
}

// TestIssue31DuplicateIdentity checks that a ROUTER refuses a second
// connection with an identity already connected, and that the first one's
// messages reach it alone.
func TestIssue31DuplicateIdentity(t *testing.T) {
	router := quietRouter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	victim := NewDealer(ctx, WithID(SocketIdentity("victim")))
	defer victim.Close()
	if err := victim.Dial("tcp://" + router.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := victim.Send(NewMsgString("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := router.Recv(); err != nil {
		t.Fatal(err)
	}

	impostor := handshaken(t, router.Addr(), "victim")
	if !hungUp(impostor) {
		t.Fatal("the router kept a second connection with identity \"victim\"")
	}
	if err := router.Send(NewMsgFrom([]byte("victim"), []byte("reply"))); err != nil {
		t.Fatal(err)
	}
	got, err := victim.Recv()
	if err != nil || len(got.Frames) != 1 || string(got.Frames[0]) != "reply" {
		t.Fatalf("victim received %q, %v; want [reply]", got.Frames, err)
	}
}

// TestIssue31SlowPeer checks that a ROUTER peer that never reads delays
// no send to another peer, and is disconnected once its queue is full.
func TestIssue31SlowPeer(t *testing.T) {
	router := quietRouter(t)
	slow := handshaken(t, router.Addr(), "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fast := NewDealer(ctx, WithID(SocketIdentity("fast")))
	defer fast.Close()
	if err := fast.Dial("tcp://" + router.Addr().String()); err != nil {
		t.Fatal(err)
	}
	// The router only knows a peer once its handshake is over; the first
	// message from fast says it is.
	if err := fast.Send(NewMsgString("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := router.Recv(); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<10)
	var refused error
	for i := 0; i < 2*routerQueueLen && refused == nil; i++ {
		refused = router.Send(NewMsgFrom([]byte("slow"), big))
		if i%100 == 0 {
			if err := router.Send(NewMsgFrom([]byte("fast"), []byte("tick"))); err != nil {
				t.Fatal(err)
			}
			if m, err := fast.Recv(); err != nil || string(m.Frames[0]) != "tick" {
				t.Fatalf("fast received %q, %v; want [tick]", m.Frames, err)
			}
		}
	}
	if refused == nil {
		t.Fatalf("%d messages of 64 KiB queued for a peer that never reads, want an error once %d are queued", 2*routerQueueLen, routerQueueLen)
	}
	if !hungUp(slow) {
		t.Fatal("the peer that never read was not disconnected")
	}
}

// TestIssue31MaxConns checks that a socket with WithMaxConns refuses the
// connections past its limit and accepts again once one leaves.
func TestIssue31MaxConns(t *testing.T) {
	router := quietRouter(t, WithMaxConns(2))
	sck := router.(*routerSocket).sck
	// waitConns waits until the router holds n connections, and counts
	// them, none still in its handshake.
	waitConns := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for sck.nconns() != n || sck.held.Load() != int32(n) {
			if time.Now().After(deadline) {
				t.Fatalf("the router holds %d connections and counts %d, want %d", sck.nconns(), sck.held.Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a := handshaken(t, router.Addr(), "a")
	handshaken(t, router.Addr(), "b")
	waitConns(2)
	third := rawPeer(t, router.Addr(), greetingBytes())
	if !hungUp(third) {
		t.Fatal("a third connection was kept, want it refused with WithMaxConns(2)")
	}
	a.Close()
	// The router forgets a once its reader sees the hang-up.
	waitConns(1)
	roundTrip(t, router, "healthy")
}

// TestIssue31MaxSubscriptions checks that a subscriber cannot make an XPUB
// keep more topics than WithMaxSubscriptions.
func TestIssue31MaxSubscriptions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pub := NewPub(ctx, WithMaxSubscriptions(3), WithLogger(discardLogger()))
	defer pub.Close()
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	md, err := Metadata{sysSockType: string(Sub)}.MarshalZMTP()
	if err != nil {
		t.Fatal(err)
	}
	c := rawPeer(t, pub.Addr(), greetingBytes(), readyCmd(md))
	for i := 0; i < 10; i++ {
		topic := append([]byte{1}, fmt.Sprintf("topic-%d", i)...)
		c.Write(append(frameHeader(0, uint64(len(topic))), topic...))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		topics := pub.(Topics).Topics()
		if len(topics) == 3 {
			break
		}
		if len(topics) > 3 || time.Now().After(deadline) {
			t.Fatalf("the PUB keeps topics %q, want the first 3", topics)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the rest have arrived by now, and must be ignored
	if topics := pub.(Topics).Topics(); len(topics) != 3 {
		t.Fatalf("the PUB keeps topics %q, want 3", topics)
	}
}

// failingListener is a net.Listener whose Accept always fails, as it does
// when the process has no file descriptor left.
type failingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.accepts.Add(1)
	return nil, errors.New("accept: too many open files")
}

// TestIssue31AcceptBackoff checks that a socket whose accepts fail waits
// between them rather than spinning: over 300 ms a back-off starting at
// 5 ms and doubling allows about 7 tries, a spinning loop millions.
func TestIssue31AcceptBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sck := newSocket(ctx, Router, WithLogger(discardLogger()))
	l := &failingListener{}
	sck.listener = l
	done := make(chan struct{})
	go func() {
		defer close(done)
		sck.accept()
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done
	if n := l.accepts.Load(); n > 20 {
		t.Errorf("%d accepts in 300 ms of failures, want at most 20 (a back-off from %v)", n, acceptBackoffMin)
	}
}

// discardLogger is a logger for sockets whose refusals a test provokes.
func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
