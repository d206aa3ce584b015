package loopback

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawHello is a joining worker's first bytes, for rank and an all-zero
// nonce.
func rawHello(rank int) []byte {
	return append(binary.LittleEndian.AppendUint32([]byte(joinMagic), uint32(rank)), make([]byte, nonceSize)...)
}

// TestIssue31UnauthenticatedPeersRefused: rank 0 drops every peer that
// does not prove it holds the cluster's token (the protocol before the
// token, a wrong token, a forged proof, a rank out of range, a silent
// peer) and goes on to take the real worker.
func TestIssue31UnauthenticatedPeersRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sock")
	token := NewToken()
	type result struct {
		c   *Cluster
		err error
	}
	listened := make(chan result, 1)
	go func() {
		c, err := Listen(path, 2, token, 20*time.Second)
		listened <- result{c, err}
	}()
	dial := func() net.Conn {
		t.Helper()
		for {
			conn, err := net.Dial("unix", path)
			if err == nil {
				return conn
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Each bad peer's connection must end without rank 0's ack.
	refused := func(name string, conn net.Conn) {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		rest, err := io.ReadAll(conn)
		conn.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if bytes.IndexByte(rest, joinedAck) == nonceSize+proofSize {
			t.Errorf("%s: rank 0 took it", name)
		}
	}
	// The protocol before issue 31: a rank alone.
	conn := dial()
	conn.Write([]byte{1, 0, 0, 0})
	conn.(*net.UnixConn).CloseWrite()
	refused("a bare rank", conn)
	// Rank out of range.
	conn = dial()
	conn.Write(rawHello(5))
	refused("rank 5 of 2", conn)
	// A forged proof.
	conn = dial()
	conn.Write(rawHello(1))
	answer := make([]byte, nonceSize+proofSize)
	if _, err := io.ReadFull(conn, answer); err != nil {
		t.Fatal(err)
	}
	conn.Write(make([]byte, proofSize))
	refused("a forged proof", conn)
	// A wrong token: the worker sees rank 0's proof fail and stops.
	if _, err := Dial(path, 1, 2, NewToken(), 5*time.Second); err == nil || !errors.Is(err, errJoin) {
		t.Errorf("a worker with another token: %v, want it refused", err)
	}
	// The real worker.
	c1, err := Dial(path, 1, 2, token, 5*time.Second)
	if err != nil {
		t.Fatalf("the real worker: %v", err)
	}
	defer c1.Close()
	r := <-listened
	if r.err != nil {
		t.Fatalf("rank 0: %v", r.err)
	}
	defer r.c.Close()
	done := make(chan error, 1)
	go func() { done <- c1.AllReduceF64([]float64{2}) }()
	x := []float64{1}
	if err := r.c.AllReduceF64(x); err != nil || x[0] != 3 {
		t.Errorf("a reduction after the refusals: %v, %v", x, err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// TestIssue31FakeRankZeroLearnsNothing: a peer listening where rank 0
// should, without the token, gets a hello (a rank and a nonce) and nothing
// else, and the worker does not join it.
func TestIssue31FakeRankZeroLearnsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer conn.Close()
		hello := make([]byte, len(rawHello(1)))
		io.ReadFull(conn, hello)
		conn.Write(make([]byte, nonceSize+proofSize)) // a proof it cannot make
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, _ := io.ReadAll(conn)
		got <- append(hello, rest...)
	}()
	token := NewToken()
	if _, err := Dial(path, 1, 2, token, 5*time.Second); err == nil || !strings.Contains(err.Error(), "did not prove it is rank 0") {
		t.Errorf("joining a fake rank 0: %v", err)
	}
	sent := <-got
	if len(sent) != len(rawHello(1)) || bytes.Contains(sent, token) {
		t.Errorf("the fake rank 0 received %d bytes: %x; want the hello alone", len(sent), sent)
	}
}

// TestIssue31OtherUserRefused: a worker of another user, holding the
// token, is refused by SO_PEERCRED. It needs root, to run one as nobody.
func TestIssue31OtherUserRefused(t *testing.T) {
	if spec := os.Getenv("LOOPBACK_TEST_OTHER_USER"); spec != "" {
		var path, tok string
		fmt.Sscan(spec, &path, &tok)
		token, _ := hex.DecodeString(tok)
		_, err := Dial(path, 1, 2, token, 5*time.Second)
		fmt.Println("dial:", err)
		return
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux, to start a worker as another user")
	}
	dir, err := os.MkdirTemp("", "loopback-other-user-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	// The test binary, where nobody may run it.
	exe := filepath.Join(dir, "loopback.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.sock")
	token := NewToken()
	listened := make(chan error, 1)
	go func() {
		c, err := Listen(path, 2, token, 3*time.Second)
		if err == nil {
			c.Close()
		}
		listened <- err
	}()
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Chmod(path, 0o777)
	cmd := exec.Command(exe, "-test.run=^TestIssue31OtherUserRefused$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOOPBACK_TEST_OTHER_USER="+path+" "+hex.EncodeToString(token))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("the other user's worker: %v\n%s", err, out)
	if !strings.Contains(string(out), "dial: loopback: rank 1: joining rank 0") || !strings.Contains(string(out), "runs as user 0, want 65534") {
		t.Errorf("the other user's worker was not refused for its user: %s", out)
	}
	err = <-listened
	if err == nil || !strings.Contains(err.Error(), "runs as user 65534, want 0") {
		t.Errorf("rank 0: %v, want the other user's worker refused", err)
	}
}

// joinRaw makes a cluster of 2 whose other end is a bare connection that
// passed the join: rank 0 real and rank 1 raw (realRank 0), or the other
// way round.
func joinRaw(t *testing.T, realRank int) (*Cluster, net.Conn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.sock")
	token := NewToken()
	if realRank == 0 {
		type result struct {
			c   *Cluster
			err error
		}
		listened := make(chan result, 1)
		go func() {
			c, err := Listen(path, 2, token, 10*time.Second)
			listened <- result{c, err}
		}()
		var conn net.Conn
		var err error
		for conn == nil {
			if conn, err = net.Dial("unix", path); err != nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if err := dialPeer(conn, token, 1, 2); err != nil {
			t.Fatal(err)
		}
		r := <-listened
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Cleanup(func() { r.c.Close(); conn.Close() })
		return r.c, conn
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			if _, err = acceptPeer(conn, token, 2, time.Now().Add(10*time.Second)); err == nil {
				conn.Write([]byte{joinedAck})
			}
		}
		if err != nil {
			t.Error(err)
		}
		accepted <- conn
	}()
	c, err := Dial(path, 1, 2, token, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn := <-accepted
	t.Cleanup(func() { c.Close(); conn.Close() })
	return c, conn
}

// TestIssue31FrameBounds: a frame announcing more than MaxPayload, or more
// than follows it, fails the collective on either side without allocating
// what it announced.
func TestIssue31FrameBounds(t *testing.T) {
	header := func(op byte, n uint64) []byte {
		return binary.LittleEndian.AppendUint64([]byte{op}, n)
	}
	cases := []struct {
		name     string
		realRank int
		op       byte
		sent     []byte // by the raw peer, which then closes
		call     func(c *Cluster) error
		want     string
	}{
		{"2^62 to rank 0", 0, opAllGather, header(opAllGather, 1<<62), func(c *Cluster) error { _, err := c.AllGather([]float64{1}); return err }, "over the limit"},
		{"2^40 broadcast to rank 0", 0, opBroadcast, header(opBroadcast, 1<<40), func(c *Cluster) error { _, err := c.Broadcast([]byte("x"), 0); return err }, "over the limit"},
		{"4 GiB announced, 10 bytes sent, to rank 0", 0, opAllGather, append(header(opAllGather, MaxPayload), make([]byte, 10)...), func(c *Cluster) error { _, err := c.AllGather([]float64{1}); return err }, "cut short at 10"},
		{"a reduction of another length, never sent", 0, opAllReduceF32, header(opAllReduceF32, 1<<31), func(c *Cluster) error { return c.AllReduceF32([]float32{1}) }, "EOF"},
		{"2^62 reply to rank 1", 1, 0, header(0, 1<<62), func(c *Cluster) error { _, err := c.AllGather([]float64{1}); return err }, "over the limit"},
		{"a 1 GiB error text to rank 1", 1, 0, header(opError, 1<<30), func(c *Cluster) error { return c.AllReduceF64([]float64{1}) }, "error text of 1073741824 bytes"},
		{"4 GiB reply announced, cut short, to rank 1", 1, 0, append(header(0, MaxPayload), 1, 2, 3), func(c *Cluster) error { _, err := c.Broadcast(nil, 0); return err }, "cut short at 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, raw := joinRaw(t, tc.realRank)
			go func() {
				if tc.realRank == 1 {
					// Read the worker's request before answering it.
					var hdr [9]byte
					io.ReadFull(raw, hdr[:])
					io.CopyN(io.Discard, raw, int64(binary.LittleEndian.Uint64(hdr[1:])))
				}
				raw.Write(tc.sent)
				raw.(*net.UnixConn).CloseWrite()
			}()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.call(c)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
				t.Errorf("it allocated %d bytes", d)
			}
		})
	}
}
