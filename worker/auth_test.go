package worker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// closedFileEnv names a file a test worker creates when its session is
// closed (closingExec).
const closedFileEnv = "GOTRAIN_WORKER_TEST_CLOSED"

// closingExec is fakeExec with the session's Close, which makes a file.
type closingExec struct {
	*fakeExec
	path string
}

func (c closingExec) Close() error { return os.WriteFile(c.path, nil, 0o600) }

// tee records what a peer sent on a connection.
type tee struct {
	net.Conn
	mu  sync.Mutex
	got bytes.Buffer
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	t.mu.Lock()
	t.got.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

func (t *tee) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.got.Bytes())
}

// listen is a listener on a fresh Unix socket, or TCP on loopback.
func listen(t *testing.T, network string) (net.Listener, Address) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, Address(network + ":" + ln.Addr().String())
}

// TestIssue31FakeKernelLearnsNothing: a peer that answers at the kernel's
// address without its secret (on a Unix socket) or its certificate (on
// TCP) gets neither the secret nor a proof from the worker, and no worker:
// Serve fails before it starts the session. A worker given such a peer
// first goes on to the real kernel.
func TestIssue31FakeKernelLearnsNothing(t *testing.T) {
	_, realSum, err := linkCert()
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			cred := newCredential(nil)
			if network == "tcp" {
				cred = newCredential(realSum)
			}
			ln, addr := listen(t, network)
			// The fake kernel: its own certificate on TCP; it reads the
			// hello, answers with a challenge whose proof it cannot make,
			// and keeps everything it is sent.
			fakeCert, _, err := linkCert()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte, 1)
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					got <- nil
					return
				}
				rec := &tee{Conn: conn}
				var c net.Conn = rec
				if network == "tcp" {
					tc := tls.Server(rec, serverTLS(fakeCert))
					if tc.Handshake() != nil {
						conn.Close()
						got <- rec.bytes()
						return
					}
					c = tc
				}
				l := newLink(c)
				var h helloMsg
				if l.readJSON(kindHello, maxHello, &h) == nil {
					l.sendJSON(kindChallenge, challengeMsg{Nonce: nonce(), Proof: nonce()})
				}
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				io.Copy(io.Discard, c)
				got <- rec.bytes()
			}()
			started := false
			err = Serve(ServeConfig{Address: addr, Token: cred.String(), NewExecutor: func() (kernel.Executor, error) {
				started = true
				return newFakeExec(), nil
			}})
			if err == nil || !errors.Is(err, errAuth) || started {
				t.Fatalf("Serve against a fake kernel: err %v, session started %v; want an authentication error and no session", err, started)
			}
			t.Logf("the worker said: %v", err)
			sent := <-got
			for _, secret := range [][]byte{cred.secret, []byte(hex.EncodeToString(cred.secret))} {
				if bytes.Contains(sent, secret) {
					t.Errorf("the fake kernel received the secret")
				}
			}
			if network == "unix" {
				// One frame, the hello; no proof followed it.
				if n := binary.BigEndian.Uint32(sent); len(sent) != 4+int(n) || sent[4] != byte(kindHello) {
					t.Errorf("the fake kernel received %d bytes: %q; want the hello alone", len(sent), sent)
				}
			}
		})
	}

	// A fake kernel first in the list, the real one second: the worker
	// connects to the real one.
	cred := newCredential(nil)
	fake, fakeAddr := listen(t, "unix")
	go func() {
		if conn, err := fake.Accept(); err == nil {
			l := newLink(conn)
			var h helloMsg
			l.readJSON(kindHello, maxHello, &h)
			l.sendJSON(kindChallenge, challengeMsg{Nonce: nonce(), Proof: nonce()})
			io.Copy(io.Discard, conn)
		}
	}()
	real, realAddr := listen(t, "unix")
	accepted := make(chan error, 1)
	go func() {
		conn, err := real.Accept()
		if err == nil {
			_, _, err = acceptLink(conn, nil, func(h helloMsg) ([]byte, bool) { return cred.secret, h.ID == cred.id })
		}
		accepted <- err
	}()
	l, err := (fakeAddr + "," + realAddr).dial(5*time.Second, cred, 0)
	if err != nil {
		t.Fatalf("dialing a fake kernel, then the real one: %v", err)
	}
	l.close()
	if err := <-accepted; err != nil {
		t.Errorf("the real kernel refused the worker: %v", err)
	}
}

// fakeWorker is what a fake worker does on its connection to the kernel.
type fakeWorker func(t *testing.T, conn net.Conn, cred credential)

// sendHello sends a hello for cred and returns the challenge, if any.
func sendHello(conn net.Conn, id string) (challengeMsg, error) {
	l := newLink(conn)
	l.sendJSON(kindHello, helloMsg{ID: id, Nonce: nonce()})
	var ch challengeMsg
	err := l.readJSON(kindChallenge, maxHello, &ch)
	return ch, err
}

// TestIssue31FakeWorkerRefused: a peer that connects to the kernel's
// listener without the worker's secret is refused, and before it proved
// anything the kernel reads at most maxHello bytes of a frame: a hello
// announcing 256 MiB allocates nothing of that size.
func TestIssue31FakeWorkerRefused(t *testing.T) {
	cert, sum, err := linkCert()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		network string
		want    string // in acceptLink's error; "" means accepted
		worker  fakeWorker
	}{
		{"the real worker", "unix", "", func(t *testing.T, conn net.Conn, cred credential) {
			if _, err := connectLink(conn, "unix", cred, 0); err != nil {
				t.Errorf("the real worker: %v", err)
			}
		}},
		{"the real worker over TLS", "tcp", "", func(t *testing.T, conn net.Conn, cred credential) {
			if _, err := connectLink(conn, "tcp", cred, 0); err != nil {
				t.Errorf("the real worker: %v", err)
			}
		}},
		{"a 256 MiB hello", "unix", "length 268435456 (want 1 to 4096)", func(t *testing.T, conn net.Conn, cred credential) {
			conn.Write([]byte{0x10, 0, 0, 0, 'H'})
		}},
		{"garbage", "unix", "malformed frame", func(t *testing.T, conn net.Conn, cred credential) {
			conn.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		}},
		{"an ID nobody waits for", "unix", "no worker of rank 0 waits", func(t *testing.T, conn net.Conn, cred credential) {
			if _, err := sendHello(conn, "0123"); err == nil {
				t.Errorf("an unknown ID got a challenge")
			}
		}},
		{"the right ID without the secret", "unix", "the worker's proof is wrong", func(t *testing.T, conn net.Conn, cred credential) {
			if _, err := sendHello(conn, cred.id); err != nil {
				t.Fatal(err)
			}
			newLink(conn).sendJSON(kindProof, proofMsg{Proof: nonce()})
		}},
		{"another connection's proof replayed", "unix", "the worker's proof is wrong", func(t *testing.T, conn net.Conn, cred credential) {
			// The kernel's proof for this connection, sent back as the
			// worker's: the labels differ.
			ch, err := sendHello(conn, cred.id)
			if err != nil {
				t.Fatal(err)
			}
			newLink(conn).sendJSON(kindProof, proofMsg{Proof: ch.Proof})
		}},
		{"no TLS on TCP", "tcp", "TLS", func(t *testing.T, conn net.Conn, cred credential) {
			newLink(conn).sendJSON(kindHello, helloMsg{ID: cred.id, Nonce: nonce()})
		}},
		{"TLS without the secret", "tcp", "the worker's proof is wrong", func(t *testing.T, conn net.Conn, cred credential) {
			tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
			if _, err := sendHello(tc, cred.id); err != nil {
				t.Fatal(err)
			}
			newLink(tc).sendJSON(kindProof, proofMsg{Proof: nonce()})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tlsCfg *tls.Config
			cred := newCredential(nil)
			if tc.network == "tcp" {
				tlsCfg, cred = serverTLS(cert), newCredential(sum)
			}
			ln, addr := listen(t, tc.network)
			network, a, _ := addr.split()
			done := make(chan struct{})
			go func() {
				defer close(done)
				conn, err := net.Dial(network, a)
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				tc.worker(t, conn, cred)
			}()
			conn, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err = acceptLink(conn, tlsCfg, func(h helloMsg) ([]byte, bool) { return cred.secret, h.ID == cred.id })
			runtime.ReadMemStats(&after)
			conn.Close()
			<-done
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
			if d := after.TotalAlloc - before.TotalAlloc; tc.want != "" && d > 1<<20 {
				t.Errorf("refusing it allocated %d bytes", d)
			}
		})
	}
}

// TestIssue31CredentialParse: what a worker accepts in TokenEnv.
func TestIssue31CredentialParse(t *testing.T) {
	good := newCredential(make([]byte, 32))
	for _, tc := range []struct {
		in, want string // want: "" for a valid credential
	}{
		{good.String(), ""},
		{newCredential(nil).String(), ""},
		{"", "1 parts"},
		{"abcd", "1 parts"},
		{"zz." + hex.EncodeToString(good.secret), "the ID is not hex"},
		{"ab.1234", "the secret is not 16 or more bytes"},
		{"ab." + hex.EncodeToString(good.secret) + ".00", "the fingerprint is not a SHA-256"},
		{"a.b.c.d", "4 parts"},
	} {
		c, err := parseCredential(tc.in)
		switch {
		case tc.want == "" && (err != nil || c.String() != tc.in):
			t.Errorf("parseCredential(%q) = %v, %v; want it back", tc.in, c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("parseCredential(%q): %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

// FuzzAcceptLink feeds arbitrary bytes to the kernel's side of the
// handshake as a worker's: it never panics and never accepts, since no
// input holds a proof under a secret it does not know.
func FuzzAcceptLink(f *testing.F) {
	cred := credential{id: "00112233", secret: bytes.Repeat([]byte{7}, 32)}
	var hello bytes.Buffer
	l := &link{}
	l.mu.w = bufio.NewWriter(&hello)
	l.writeLocked(kindHello, []byte(`{"id":"00112233","nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","pid":1}`))
	l.mu.w.Flush()
	f.Add(hello.Bytes())
	f.Add(append(bytes.Clone(hello.Bytes()), 0, 0, 0, 12, 'a', '{', '"', 'p', 'r', 'o', 'o', 'f', '"', ':', '"', '"', '}'))
	f.Add([]byte{0x10, 0, 0, 0, 'H'})
	f.Add([]byte{0, 0, 0, 1, 'H'})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		go func() {
			go io.Copy(io.Discard, a)
			a.Write(data)
			a.Close()
		}()
		_, _, err := acceptLink(b, nil, func(h helloMsg) ([]byte, bool) { return cred.secret, h.ID == cred.id })
		b.Close()
		if err == nil {
			t.Fatalf("accepted %q", data)
		}
	})
}

// TestIssue31WorkerClosesSession: the worker closes its session (whose
// folder holds the cells' source) on each way it ends that it controls:
// the kernel's shutdown, with a cell stuck or not; the kernel gone; a
// SIGTERM (mpirun's).
func TestIssue31WorkerClosesSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell string // run in the background before the end, if any
		end  func(c *Client, p *proc)
		sig  syscall.Signal // the signal that should end the worker, if any
	}{
		{"shutdown", "", func(c *Client, p *proc) { c.Close() }, 0},
		{"shutdown with a cell stuck", "stuck", func(c *Client, p *proc) { c.Close() }, 0},
		{"the kernel gone", "", func(c *Client, p *proc) {
			p.stopping.Store(true)
			p.linkMu.Lock()
			p.link.close()
			p.linkMu.Unlock()
			<-p.dead
		}, 0},
		{"SIGTERM", "", func(c *Client, p *proc) {
			p.stopping.Store(true)
			p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.dead
		}, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := filepath.Join(t.TempDir(), "closed")
			c := newTestClient(t, Config{Env: []string{closedFileEnv + "=" + closed}})
			mustRun(t, c, "out up")
			p := c.mu.w
			if tc.cell != "" {
				go c.Execute(context.Background(), kernel.ExecuteRequest{Code: tc.cell}, &recorder{})
				time.Sleep(100 * time.Millisecond)
			}
			tc.end(c, p)
			<-p.dead
			if _, err := os.Stat(closed); err != nil {
				t.Errorf("the session was not closed (%s)", p.how)
			}
			ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tc.sig != 0 && (!ws.Signaled() || ws.Signal() != tc.sig):
				t.Errorf("the worker ended with %s, want signal %v", p.cmd.ProcessState, tc.sig)
			case tc.sig == 0 && !p.cmd.ProcessState.Exited():
				t.Errorf("the worker ended with %s, want an exit", p.cmd.ProcessState)
			}
		})
	}
}
