// Fuzz tests of the parsers of a peer's bytes (gotrain issue 31, see
// PATCHES.md): the handshake and the frame reader.

package zmq4

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// scriptedConn is a net.Conn that reads a fixed script and discards what
// is written to it.
type scriptedConn struct {
	r *bytes.Reader
}

func (c scriptedConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (scriptedConn) Write(p []byte) (int, error)        { return len(p), nil }
func (scriptedConn) Close() error                       { return nil }
func (scriptedConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (scriptedConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (scriptedConn) SetDeadline(time.Time) error        { return nil }
func (scriptedConn) SetReadDeadline(t time.Time) error  { return nil }
func (scriptedConn) SetWriteDeadline(t time.Time) error { return nil }
func newScriptedConn(script []byte) net.Conn            { return scriptedConn{bytes.NewReader(script)} }
func concat(parts ...[]byte) []byte                     { return bytes.Join(parts, nil) }
func seedMeta(f *testing.F, md Metadata) []byte         { b, _ := md.MarshalZMTP(); return b }
func noPanic(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "panic") {
		t.Fatalf("%s: %v", what, err)
	}
}

// FuzzHandshake feeds a peer's side of the ZMTP handshake to a ROUTER's:
// any bytes may fail it, none may panic (a panic is recovered into an error
// that says so, which fails the test).
func FuzzHandshake(f *testing.F) {
	good := seedMeta(f, Metadata{sysSockType: string(Dealer), sysSockID: "client"})
	f.Add(concat(greetingBytes(), readyCmd(good)))
	f.Add(concat(greetingBytes(), readyCmd([]byte{0})))
	f.Add(concat(greetingBytes(), readyCmd([]byte{5, 'a'})))
	f.Add(concat(greetingBytes(), readyCmd([]byte{1, 'k', 0xff, 0xff, 0xff, 0xff})))
	f.Add(concat(greetingBytes(), frameHeader(isCommandBitFlag, 1<<46)))
	f.Add(concat(greetingBytes(), frameHeader(isCommandBitFlag, 1<<62)))
	f.Add(concat(greetingBytes(), frameHeader(isCommandBitFlag, ^uint64(0))))
	f.Add(concat(greetingBytes(), frameHeader(isCommandBitFlag|hasMoreBitFlag, 0), frameHeader(isCommandBitFlag, 0)))
	f.Add(greetingBytes()[:10])
	f.Fuzz(func(t *testing.T, script []byte) {
		conn, err := Open(newScriptedConn(script), nullSecurity{}, Router, SocketIdentity("server"), true, nil)
		noPanic(t, "Open", err)
		if err == nil && conn.Peer.Meta == nil {
			t.Fatal("Open succeeded with no peer metadata")
		}
	})
}

// FuzzReadFrame feeds a peer's messages, after the handshake, to a
// connection's reader under the limits a kernel sets: no bytes may panic
// it, and every message it returns keeps within the limits.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 3, 'a', 'b', 'c'})
	f.Add(concat(frameHeader(hasMoreBitFlag, 1), []byte{'x'}, frameHeader(0, 2), []byte("yz")))
	f.Add(frameHeader(0, 1<<46))
	f.Add(frameHeader(0, 1<<62))
	f.Add(frameHeader(0, ^uint64(0)))
	f.Add(frameHeader(isCommandBitFlag, 0))
	f.Add(bytes.Repeat(frameHeader(hasMoreBitFlag, 0), 100))
	f.Add(concat(frameHeader(0, 300), bytes.Repeat([]byte{'b'}, 300)))
	const maxSize, maxFrames = 1 << 16, 32
	f.Fuzz(func(t *testing.T, script []byte) {
		for _, limited := range []bool{false, true} {
			c := &Conn{rw: newScriptedConn(script), sec: nullSecurity{}, topics: map[string]struct{}{}}
			if limited {
				c.maxMsgSize, c.maxFrames, c.maxTopics = maxSize, maxFrames, 4
			}
			for i := 0; i < 1000; i++ {
				msg := c.read()
				noPanic(t, "read", msg.err)
				if msg.err != nil {
					break
				}
				if limited && (len(msg.Frames) > maxFrames || msg.size() > maxSize) {
					t.Fatalf("read returned %d frames of %d bytes, want at most %d and %d", len(msg.Frames), msg.size(), maxFrames, maxSize)
				}
				c.subscribe(msg)
				if limited && len(c.topics) > 4 {
					t.Fatalf("%d topics kept, want at most 4", len(c.topics))
				}
			}
		}
	})
}
