// A test of the gotrain patch to Read (see PATCHES.md).

package inproc

import (
	"io"
	"testing"
)

// TestReadAfterPeerClosed checks that what a peer wrote before closing is
// read before io.EOF. Upstream's TestRW failed now and then on it: its
// client wrote "QUIT" and closed before the server read.
func TestReadAfterPeerClosed(t *testing.T) {
	l, err := Listen("inproc://drain")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Accept makes the pipe Dial takes, so it comes first.
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	client, err := Dial("inproc://drain")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write([]byte("QUIT")); err != nil {
		t.Fatal(err)
	}
	client.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "QUIT" {
		t.Fatalf("read %q, %v after the peer closed; want \"QUIT\", nil", buf, err)
	}
	if n, err := server.Read(buf); err != io.EOF {
		t.Fatalf("second read = %d, %v; want io.EOF", n, err)
	}
}
