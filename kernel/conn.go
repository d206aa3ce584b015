package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/go-zeromq/zmq4"
)

// ConnectionInfo is the content of a Jupyter connection file: where the five
// sockets listen and how messages are signed.
type ConnectionInfo struct {
	Transport       string `json:"transport"` // "tcp" or "ipc"
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	StdinPort       int    `json:"stdin_port"`
	IOPubPort       int    `json:"iopub_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`              // empty disables signing
	SignatureScheme string `json:"signature_scheme"` // "hmac-sha256"
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnectionFile reads and checks the connection file at path.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var ci ConnectionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return ci, fmt.Errorf("kernel: connection file: %w", err)
	}
	if err := json.Unmarshal(b, &ci); err != nil {
		return ci, fmt.Errorf("kernel: connection file %s: %w", path, err)
	}
	if err := ci.validate(); err != nil {
		return ci, fmt.Errorf("kernel: connection file %s: %w", path, err)
	}
	return ci, nil
}

// validate reports the first field a kernel could not start with. The
// messages omit the "kernel: " prefix; callers add it with context.
func (ci *ConnectionInfo) validate() error {
	switch ci.Transport {
	case "", "tcp", "ipc":
	default:
		return fmt.Errorf("unknown transport %q (want \"tcp\" or \"ipc\")", ci.Transport)
	}
	switch ci.SignatureScheme {
	case "hmac-sha256":
	case "":
		// jupyter_client always writes the scheme; an older or hand-written
		// file without it can only mean "no signing" if the key is empty too.
		if ci.Key != "" {
			return errors.New("signature_scheme is empty but key is set (want \"hmac-sha256\")")
		}
	default:
		return fmt.Errorf("unknown signature_scheme %q (want \"hmac-sha256\")", ci.SignatureScheme)
	}
	if ci.IP == "" && ci.Transport != "ipc" {
		return errors.New("no ip")
	}
	ports := []struct {
		name string
		port int
	}{
		{"shell_port", ci.ShellPort}, {"control_port", ci.ControlPort},
		{"stdin_port", ci.StdinPort}, {"iopub_port", ci.IOPubPort}, {"hb_port", ci.HBPort},
	}
	for _, p := range ports {
		if p.port < 0 || p.port > 65535 {
			return fmt.Errorf("%s: got %d, want 0..65535", p.name, p.port)
		}
	}
	return nil
}

// endpoint returns the ZeroMQ address of one port. An ipc "port" is a
// suffix of the socket path, as in jupyter_client: ip-port.
func (ci *ConnectionInfo) endpoint(port int) string {
	if ci.Transport == "ipc" {
		return "ipc://" + ci.IP + "-" + strconv.Itoa(port)
	}
	return "tcp://" + net.JoinHostPort(ci.IP, strconv.Itoa(port))
}

// channel is one bound socket. Sends are serialized by mu because several
// goroutines may reply on one channel (a cell's Input and the stdin
// reader, the control loop and Shutdown).
type channel struct {
	name string
	sock zmq4.Socket // immutable
	mu   sync.Mutex
}

// send sends one message. mustDeliver matters on iopub only: see
// iopub.go.
func (c *channel) send(frames [][]byte, mustDeliver bool) error {
	msg := zmq4.NewMsgFrom(frames...)
	msg.MustDeliver = mustDeliver
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.sock.SendMulti(msg); err != nil {
		return fmt.Errorf("kernel: send on %s: %w", c.name, err)
	}
	return nil
}

// sockets are the kernel's five channels.
type sockets struct {
	shell, control, stdin, iopub, hb *channel
}

func (s *sockets) all() []*channel {
	return []*channel{s.shell, s.control, s.stdin, s.iopub, s.hb}
}

// close closes every bound socket and returns the first error.
func (s *sockets) close() error {
	var first error
	for _, c := range s.all() {
		if c == nil {
			continue
		}
		if err := c.sock.Close(); err != nil && first == nil {
			first = fmt.Errorf("kernel: close %s: %w", c.name, err)
		}
	}
	return first
}

// bind creates and binds the five sockets, iopub with the queue policy
// iopubQ; zmq4's own messages (a failed handshake) go to logger. A zero port in ci means "pick a free one"; the returned info has
// the ports actually bound. On error, the sockets bound so far are closed.
func bind(ctx context.Context, ci ConnectionInfo, iopubQ zmq4.PubQueue, logger *slog.Logger) (*sockets, ConnectionInfo, error) {
	if ci.Transport == "" {
		ci.Transport = "tcp"
	}
	s := &sockets{}
	zlog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	zlog.SetPrefix("zmq4: ")
	specs := []struct {
		dst  **channel
		name string
		port *int
		mk   func(context.Context, ...zmq4.Option) zmq4.Socket
		opts []zmq4.Option
	}{
		{&s.shell, "shell", &ci.ShellPort, zmq4.NewRouter, nil},
		{&s.control, "control", &ci.ControlPort, zmq4.NewRouter, nil},
		{&s.stdin, "stdin", &ci.StdinPort, zmq4.NewRouter, nil},
		// XPUB rather than PUB, so the kernel sees each new subscription and
		// answers it with iopub_welcome (protocol 5.5, JEP 65); manual, so
		// that the welcome goes to the new subscriber alone (see welcome).
		{&s.iopub, "iopub", &ci.IOPubPort, zmq4.NewXPub, []zmq4.Option{zmq4.WithPubQueue(iopubQ), zmq4.WithXPubManual()}},
		{&s.hb, "heartbeat", &ci.HBPort, zmq4.NewRep, nil},
	}
	for _, sp := range specs {
		// Every socket gets zmq4's handshake timeout (10 s): a TCP peer
		// that never completes the ZMTP handshake blocks no other client.
		opts := append([]zmq4.Option{zmq4.WithLogger(zlog)}, sp.opts...)
		sock := sp.mk(ctx, opts...)
		ep := ci.endpoint(*sp.port)
		if err := sock.Listen(ep); err != nil {
			sock.Close()
			s.close()
			return nil, ci, fmt.Errorf("kernel: bind %s to %s: %w", sp.name, ep, err)
		}
		if a, ok := sock.Addr().(*net.TCPAddr); ok && *sp.port == 0 {
			*sp.port = a.Port
		}
		*sp.dst = &channel{name: sp.name, sock: sock}
	}
	return s, ci, nil
}
