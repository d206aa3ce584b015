// Tests of the handshake patch (gotrain, see PATCHES.md).

package zmq4

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// halfGreeting is the first 10 bytes of a ZMTP 3.0 greeting: the signature
// and the major version, with the rest never sent.
var halfGreeting = []byte{sigHeader, 0, 0, 0, 0, 0, 0, 0, 1, sigFooter}

// stalledPeers opens one TCP connection to addr that sends nothing and one
// that sends half a greeting; the test's end closes both.
func stalledPeers(t *testing.T, addr net.Addr) []net.Conn {
	t.Helper()
	var peers []net.Conn
	for _, first := range [][]byte{nil, halfGreeting} {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(first); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, c)
	}
	return peers
}

// TestIssue131 checks that peers that never finish the ZMTP handshake do
// not keep a listening socket from accepting the next connection.
func TestIssue131(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	router := NewRouter(ctx, WithHandshakeTimeout(time.Minute))
	defer router.Close()
	if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	stalledPeers(t, router.Addr())
	time.Sleep(50 * time.Millisecond) // let the listener take them first

	dealer := NewDealer(ctx, WithID(SocketIdentity("healthy")))
	defer dealer.Close()
	dialed := make(chan error, 1)
	go func() { dialed <- dealer.Dial("tcp://" + router.Addr().String()) }()
	select {
	case err := <-dialed:
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Dial did not complete while two peers stalled in their handshakes")
	}
	if err := dealer.Send(NewMsgString("ping")); err != nil {
		t.Fatal(err)
	}
	got, err := router.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != 2 || string(got.Frames[0]) != "healthy" || string(got.Frames[1]) != "ping" {
		t.Errorf("router received %v, want [healthy ping]", got)
	}
}

// TestHandshakeTimeout checks that a listening socket disconnects a peer
// that does not complete its handshake in time, and that closing the socket
// ends a handshake in progress when there is no timeout.
func TestHandshakeTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		close   bool // close the socket instead of waiting for the timeout
	}{
		{"timeout", 200 * time.Millisecond, false},
		{"close without timeout", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			router := NewRouter(context.Background(), WithHandshakeTimeout(tt.timeout))
			defer router.Close()
			if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			peers := stalledPeers(t, router.Addr())
			if tt.close {
				time.Sleep(50 * time.Millisecond)
				router.Close()
			}
			for i, c := range peers {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				// The socket sends its greeting, then hangs up.
				_, err := io.Copy(io.Discard, c)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("stalled peer %d still connected after 5s", i)
				}
			}
		})
	}
}
