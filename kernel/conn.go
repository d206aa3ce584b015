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

// CheckConnectionFileMode returns an error saying so when the connection
// file at path may be read by users other than its owner: its key lets
// whoever reads it run code in the kernel. jupyter_client writes it 0600;
// a kernel started on a file others can read should warn.
func CheckConnectionFileMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("kernel: connection file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o044 != 0 {
		return fmt.Errorf("kernel: connection file %s is readable by others (mode %04o, want 0600): whoever reads its key can run code in this kernel", path, perm)
	}
	return nil
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

// The limits on what one peer may make a socket hold. Anyone
// who can reach a port may connect, key or not, since messages are signed
// but connections are not; these keep such a peer from exhausting the
// kernel's memory or file descriptors. A request's frames are the routing
// identities, the delimiter, the signature, four JSON parts and the
// buffers of a comm message; its bytes are those of a cell or a comm's
// payload (a browser's reach jupyter_server's websocket, which takes 10 MiB
// by default). iopub and heartbeat peers send subscriptions and pings only.
const (
	maxRequestBytes  = 64 << 20
	maxRequestFrames = 1024
	maxSmallBytes    = 64 << 10
	maxSmallFrames   = 16
	// maxPeers is per socket: a front end uses one connection per
	// channel, so this is room for many clients at once, and five
	// sockets' worth stay below the usual file limit of 1024.
	maxPeers = 64
	// maxTopics is per iopub subscriber: Jupyter clients subscribe to
	// everything, the empty topic.
	maxTopics = 64
)

// peerLimits returns the zmq4 options bounding the peers of the channel
// named name.
func peerLimits(name string) []zmq4.Option {
	opts := []zmq4.Option{zmq4.WithMaxConns(maxPeers)}
	switch name {
	case "shell", "control", "stdin":
		return append(opts, zmq4.WithMaxMessageSize(maxRequestBytes), zmq4.WithMaxFrames(maxRequestFrames))
	default:
		return append(opts, zmq4.WithMaxMessageSize(maxSmallBytes), zmq4.WithMaxFrames(maxSmallFrames),
			zmq4.WithMaxSubscriptions(maxTopics))
	}
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
		// And every socket bounds what a peer may send and how many peers
		// it keeps: see peerLimits.
		opts := append([]zmq4.Option{zmq4.WithLogger(zlog)}, peerLimits(sp.name)...)
		opts = append(opts, sp.opts...)
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
