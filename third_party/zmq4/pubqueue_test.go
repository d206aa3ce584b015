// Tests of the per-subscriber queue patch (gotrain, see PATCHES.md).

package zmq4

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// drops records what OnDrop reports.
type drops struct {
	mu  sync.Mutex
	all []Drop
}

func (d *drops) add(x Drop) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.all = append(d.all, x)
}

func (d *drops) list() []Drop {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Drop(nil), d.all...)
}

// recvWithin receives one message from s or fails the test after d.
func recvWithin(t *testing.T, s Socket, d time.Duration) Msg {
	t.Helper()
	type result struct {
		msg Msg
		err error
	}
	c := make(chan result, 1)
	go func() {
		m, err := s.Recv()
		c <- result{m, err}
	}()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("Recv: %v", r.err)
		}
		return r.msg
	case <-time.After(d):
		t.Fatalf("no message within %v", d)
	}
	panic("unreachable")
}

// pubWithSubs listens on a new socket made by newPub and connects two SUB
// sockets subscribed to everything: a healthy one, and a stuck one whose
// owner never calls Recv, so that its connection stops reading once a few
// messages and the TCP buffers are full. It returns when a message sent
// reaches the healthy subscriber.
func pubWithSubs(t *testing.T, newPub func(context.Context, ...Option) Socket, q PubQueue) (pub, healthy Socket) {
	t.Helper()
	pub = newPub(context.Background(), WithPubQueue(q))
	t.Cleanup(func() { pub.Close() })
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ep := "tcp://" + pub.Addr().String()
	var subs []Socket
	for i := 0; i < 2; i++ {
		sub := NewSub(context.Background())
		t.Cleanup(func() { sub.Close() })
		if err := sub.Dial(ep); err != nil {
			t.Fatal(err)
		}
		if err := sub.SetOption(OptionSubscribe, ""); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	// Wait until both subscriptions have reached the publisher.
	for deadline := time.Now().Add(10 * time.Second); subscribers(pub) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 subscriptions arrived", subscribers(pub))
		}
	}
	return pub, subs[0]
}

// subscribers returns the number of pub's connections that subscribe to
// everything.
func subscribers(pub Socket) int {
	var sck *socket
	switch p := pub.(type) {
	case *pubSocket:
		sck = p.sck
	case *xpubSocket:
		sck = p.sck
	}
	sck.mu.RLock()
	defer sck.mu.RUnlock()
	n := 0
	for _, c := range sck.conns {
		if c.subscribed("") {
			n++
		}
	}
	return n
}

var pubTypes = []struct {
	name string
	new  func(context.Context, ...Option) Socket
}{
	{"PUB", NewPub},
	{"XPUB", NewXPub},
}

// TestPubSlowSubscriber checks that a subscriber that never reads does not
// stop the messages to another one, and that what is dropped for it is
// reported and its queue stays bounded. Upstream, the healthy subscriber
// stopped receiving once the stuck one's TCP buffers were full.
func TestPubSlowSubscriber(t *testing.T) {
	for _, pt := range pubTypes {
		t.Run(pt.name, func(t *testing.T) {
			var d drops
			const qlen = 8
			pub, healthy := pubWithSubs(t, pt.new, PubQueue{Len: qlen, OnDrop: d.add})
			// 400 messages of 64 KiB, 25 MiB in all, are far more than the
			// stuck subscriber's socket buffers hold.
			payload := bytes.Repeat([]byte("x"), 64<<10)
			for i := 0; i < 400; i++ {
				id := []byte(fmt.Sprint(i))
				if err := pub.Send(NewMsgFrom(id, payload)); err != nil {
					t.Fatal(err)
				}
				// One at a time, so the healthy subscriber never falls behind.
				if got := recvWithin(t, healthy, 10*time.Second); !bytes.Equal(got.Frames[0], id) {
					t.Fatalf("healthy subscriber got message %q, want %q", got.Frames[0], id)
				}
			}
			all := d.list()
			if len(all) == 0 {
				t.Fatal("nothing dropped for the stuck subscriber")
			}
			for _, x := range all {
				if x.Queued > qlen || x.MustDeliver || x.Disconnected {
					t.Fatalf("drop %+v, want Queued ≤ %d, no MustDeliver, not disconnected", x, qlen)
				}
			}
			t.Logf("dropped %d of 400 messages for the stuck subscriber", len(all))
		})
	}
}

// TestPubMustDeliver checks that MustDeliver messages use the reserve, are
// never dropped for a subscriber that stays connected, and that a
// subscriber with no room even in the reserve is disconnected after Wait
// while the others still get every message.
func TestPubMustDeliver(t *testing.T) {
	var d drops
	q := PubQueue{Len: 4, Reserve: 4, Wait: 100 * time.Millisecond, OnDrop: d.add}
	pub, healthy := pubWithSubs(t, NewPub, q)
	payload := bytes.Repeat([]byte("x"), 64<<10)
	disconnected := false
	for i := 0; i < 2000 && !disconnected; i++ {
		id := []byte(fmt.Sprint(i))
		msg := NewMsgFrom(id, payload)
		msg.MustDeliver = i%2 == 1
		if err := pub.Send(msg); err != nil {
			t.Fatal(err)
		}
		if got := recvWithin(t, healthy, 10*time.Second); !bytes.Equal(got.Frames[0], id) {
			t.Fatalf("healthy subscriber got message %q, want %q", got.Frames[0], id)
		}
		for _, x := range d.list() {
			if x.MustDeliver && !x.Disconnected {
				t.Fatalf("message %d: MustDeliver message dropped without disconnecting: %+v", i, x)
			}
			disconnected = disconnected || x.Disconnected
		}
	}
	if !disconnected {
		t.Fatal("the stuck subscriber was never disconnected")
	}
	var ordinary int
	for _, x := range d.list() {
		if !x.MustDeliver {
			ordinary++
			if x.Queued > q.Len+q.Reserve {
				t.Errorf("drop %+v: more queued than Len+Reserve", x)
			}
		}
	}
	if ordinary == 0 {
		t.Error("no ordinary message was dropped before the disconnection")
	}
	// The disconnected subscriber leaves the socket; the healthy one stays.
	for deadline := time.Now().Add(10 * time.Second); subscribers(pub) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers after the disconnection, want 1", subscribers(pub))
		}
	}
	if err := pub.Send(NewMsgString("after")); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, healthy, 10*time.Second); string(got.Frames[0]) != "after" {
		t.Errorf("healthy subscriber got %q after the disconnection, want \"after\"", got.Frames[0])
	}
}

// TestXPubRecvSubscription checks that an XPUB socket's Recv returns the
// subscription messages its subscribers send, after it has applied them, so
// that a reply to the subscription reaches the new subscriber. Upstream
// kept them from Recv.
func TestXPubRecvSubscription(t *testing.T) {
	xpub := NewXPub(context.Background())
	defer xpub.Close()
	if err := xpub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	sub := NewSub(context.Background())
	defer sub.Close()
	if err := sub.Dial("tcp://" + xpub.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(OptionSubscribe, "news"); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, xpub, 10*time.Second); len(got.Frames) != 1 || string(got.Frames[0]) != "\x01news" {
		t.Fatalf("XPUB received %v, want the subscription \\x01news", got)
	}
	if err := xpub.Send(NewMsgFrom([]byte("news"), []byte("welcome"))); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, sub, 10*time.Second); len(got.Frames) != 2 || string(got.Frames[1]) != "welcome" {
		t.Fatalf("SUB received %v, want [news welcome]", got)
	}
	if err := sub.SetOption(OptionUnsubscribe, "news"); err != nil {
		t.Fatal(err)
	}
	if got := recvWithin(t, xpub, 10*time.Second); len(got.Frames) != 1 || string(got.Frames[0]) != "\x00news" {
		t.Fatalf("XPUB received %v, want the unsubscription \\x00news", got)
	}
}

// TestPubCloseStopsWriter checks that closing a PUB or XPUB socket stops
// every goroutine that sends to its subscribers, one of them blocked on a
// subscriber that does not read. Upstream's writer goroutine outlived the
// socket.
func TestPubCloseStopsWriter(t *testing.T) {
	for _, pt := range pubTypes {
		t.Run(pt.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			pub, _ := pubWithSubs(t, pt.new, PubQueue{})
			payload := bytes.Repeat([]byte("x"), 1<<20)
			for i := 0; i < 40; i++ {
				if err := pub.Send(NewMsgFrom([]byte("m"), payload)); err != nil {
					t.Fatal(err)
				}
			}
			if err := pub.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			goleak.VerifyNone(t, ignore,
				// The two SUB sockets close when the test ends.
				goleak.IgnoreTopFunction("github.com/go-zeromq/zmq4.(*qreader).listen"),
				goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*socket).connReaper"),
				goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*Conn).read"))
		})
	}
}

// TestPubLinger checks that Close lets the queued messages out first when
// PubQueue.Linger is set. Upstream closed the connections at once.
func TestPubLinger(t *testing.T) {
	pub := NewPub(context.Background(), WithPubQueue(PubQueue{Linger: 5 * time.Second}))
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	sub := NewSub(context.Background())
	defer sub.Close()
	if err := sub.Dial("tcp://" + pub.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); subscribers(pub) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("subscription never arrived")
		}
	}
	const n = 100
	for i := 0; i < n; i++ {
		if err := pub.Send(NewMsgString(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i := 0; i < n; i++ {
		if got := recvWithin(t, sub, 10*time.Second); string(got.Frames[0]) != fmt.Sprint(i) {
			t.Fatalf("message %d: got %q", i, got.Frames[0])
		}
	}
}
