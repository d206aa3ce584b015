// Tests of the patches to closing sockets (gotrain, see PATCHES.md).

package zmq4

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestCloseAfterPeerLeft checks that closing a socket whose connection was
// already closed, because its peer left and the reaper has not yet removed
// it, reports no error.
func TestCloseAfterPeerLeft(t *testing.T) {
	router := NewRouter(context.Background())
	if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	// A connection as its reader leaves it when the peer hangs up: closed,
	// still listed.
	c, err := net.Dial("tcp", router.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	sck := router.(*routerSocket).sck
	sck.mu.Lock()
	sck.conns = append(sck.conns, &Conn{rw: c})
	sck.mu.Unlock()
	if err := router.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestCloseWithFullQueue checks that closing a SUB socket whose owner
// stopped calling Recv, with more messages arrived than its queue holds,
// ends the connection's reader.
func TestCloseWithFullQueue(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	pub := NewPub(context.Background())
	defer pub.Close()
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	sub := NewSub(context.Background())
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
	for i := 0; i < 100; i++ {
		if err := pub.Send(NewMsgString("m")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // let the reader fill its queue
	sub.Close()
	pub.Close()
	goleak.VerifyNone(t, ignore)
}
