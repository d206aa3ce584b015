package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Version is the kernel's implementation_version in kernel_info_reply when
// Config.Version is empty. The build may set it with -ldflags -X.
var Version = "0.1.0-dev"

// ErrClosed is returned by Run after Close, Shutdown or a shutdown_request,
// and by Output.Input when the kernel stops while waiting for input.
var ErrClosed = errors.New("kernel: closed")

// shutdownGrace bounds how long a shutdown_request waits for the running
// cell to reach a safe point after it has been interrupted.
const shutdownGrace = 5 * time.Second

// Config configures a Kernel.
type Config struct {
	// Connection says where to listen and how to sign; usually the result
	// of ReadConnectionFile. A zero port picks a free one (tcp only); see
	// Kernel.Connection.
	Connection ConnectionInfo
	// Logger receives dropped messages, unknown message types and recovered
	// panics. Nil means slog.Default().
	Logger *slog.Logger
	// HistoryFile, when set, is a file the kernel appends each stored
	// input to, one JSON object per line, and reads earlier sessions from.
	HistoryFile string
	// AllowUnsigned lets a connection with an empty key listen on tcp.
	// With no key no message is authenticated, so anyone who can reach a
	// port can run code as the kernel's user; on ipc the socket files'
	// permissions guard it instead, and an empty key is accepted there
	// without this.
	AllowUnsigned bool
	// Version is reported as implementation_version; empty means Version.
	Version string
	// Banner is shown by consoles at start-up; empty means a default.
	Banner string
	// Notice, when set, is what this build lacks that a user would
	// otherwise find out as slowness or a refusal. It ends the banner, and
	// the first cell that is not silent shows it on stderr, once, so a
	// notebook shows it too.
	Notice string
	// CommTargets are the comm targets a front end may open, by name.
	CommTargets map[string]CommOpenFunc
	// ReplayWindow is how long the kernel remembers the header (msg_id,
	// session, msg_type, date) of each message it has verified: a message
	// whose header comes again within it is a replay, and is logged and
	// dropped. Zero means 10 minutes. At most 65536 headers are
	// remembered; past that the oldest are forgotten early.
	ReplayWindow time.Duration
}

// Kernel serves one Executor over the Jupyter protocol. Its methods are safe
// for concurrent use. A Kernel must not be reused after Close or Shutdown.
type Kernel struct {
	cfg      Config
	exec     Executor
	log      *slog.Logger
	conn     ConnectionInfo // as bound; immutable
	sign     *signer
	ids      *idSource
	session  string // header.session of every message we send
	socks    *sockets
	handlers map[string]handlerFunc // immutable after New
	onCtl    map[string]bool        // msg_types served on control; immutable
	hist     *history
	comms    *comms
	replay   *replayGuard
	drops    *iopubDrops

	ctx    context.Context // cancelled by Close; parent of every cell's context
	cancel context.CancelFunc

	shellQ      *shellQueue   // shell reader → shell worker
	stopShell   chan struct{} // closed by Shutdown: the worker takes no more requests
	workerDone  chan struct{} // closed when the shell worker returns
	shutdownReq chan struct{} // buffered: a shutdown_request asks Run to stop
	closed      chan struct{} // closed by Close once the sockets are closed
	wg          sync.WaitGroup
	stopOnce    sync.Once
	closeOnce   sync.Once
	closeErr    error
	inputMu     sync.Mutex // one input_request at a time

	// last is the last status published for a request, sent again after
	// each new subscriber's iopub_welcome (see welcome). Its lock is held
	// across each status send, so a repeat is never older than what a
	// subscriber has already received.
	last struct {
		sync.Mutex
		parent *message // nil until a request has been served
		state  string
	}

	// Owned by the shell worker goroutine.
	count int // the execution count the next stored cell gets
	// noticed: Config.Notice has been shown by a cell. Shell handlers
	// run one at a time, so it needs no lock.
	noticed bool

	mu struct {
		sync.Mutex
		state   runState
		started bool // Run started the loops; workerDone will close
		restart bool
		running bool       // a cell is executing
		input   *inputWait // the Input call waiting for input_reply, if any
		parent  *message   // the shell request being served, for comm sends
	}
}

type runState int

const (
	stateNew runState = iota
	stateRunning
	stateStopping
	stateClosed
)

// pendingReq is a queued shell request; abort says it is answered with
// status "aborted", as the execute_requests queued behind a failed cell
// with stop_on_error are.
type pendingReq struct {
	msg   *message
	abort bool
}

// New binds the kernel's sockets and returns a kernel ready to Run. It
// fails if the connection info is unusable or a port cannot be bound.
func New(cfg Config, exec Executor) (*Kernel, error) {
	if exec == nil {
		return nil, errors.New("kernel: new: nil Executor")
	}
	if err := cfg.Connection.validate(); err != nil {
		return nil, fmt.Errorf("kernel: new: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Connection.Key == "" && cfg.Connection.Transport != "ipc" {
		if !cfg.AllowUnsigned {
			return nil, errors.New("kernel: new: the connection's key is empty, so no message would be authenticated and anyone who can reach the tcp ports could run code; " +
				"want a key, or the ipc transport, or an explicit --allow-unsigned")
		}
		logger.Warn("kernel: the connection's key is empty: messages are not authenticated, and anyone who can reach the kernel's tcp ports can run code", "ip", cfg.Connection.IP)
	}
	hist, err := openHistory(cfg.HistoryFile, logger)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The sockets get their own context: Close cancels ctx to stop a cell
	// before the sockets close, and the last status must still go out.
	drops := &iopubDrops{log: logger}
	iopubQ := iopubQueue
	iopubQ.OnDrop = drops.onDrop
	socks, conn, err := bind(context.Background(), cfg.Connection, iopubQ, logger)
	if err != nil {
		cancel()
		hist.close()
		return nil, err
	}
	k := &Kernel{
		cfg:         cfg,
		exec:        exec,
		log:         logger,
		conn:        conn,
		sign:        newSigner([]byte(conn.Key)),
		ids:         newIDSource(),
		session:     newUUID(),
		socks:       socks,
		hist:        hist,
		replay:      newReplayGuard(cfg.ReplayWindow),
		drops:       drops,
		ctx:         ctx,
		cancel:      cancel,
		shellQ:      newShellQueue(),
		stopShell:   make(chan struct{}),
		workerDone:  make(chan struct{}),
		shutdownReq: make(chan struct{}, 1),
		closed:      make(chan struct{}),
		count:       1,
	}
	k.handlers, k.onCtl = newHandlers()
	k.comms = newComms(k, cfg.CommTargets)
	return k, nil
}

// Connection returns the connection info with the ports actually bound.
func (k *Kernel) Connection() ConnectionInfo { return k.conn }

// RestartRequested reports whether the kernel stopped because of a
// shutdown_request with restart set; the caller may start a new kernel.
func (k *Kernel) RestartRequested() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mu.restart
}

// Run serves requests until the kernel stops. It returns ErrClosed after
// Close, Shutdown or a shutdown_request, and ctx.Err() (after closing the
// kernel) when ctx ends first. Run may be called once.
func (k *Kernel) Run(ctx context.Context) error {
	k.mu.Lock()
	if k.mu.state != stateNew {
		k.mu.Unlock()
		return ErrClosed
	}
	k.mu.state = stateRunning
	k.mu.started = true
	// The loops are started under mu so that Close, which takes mu before
	// waiting, never waits on a WaitGroup that is still being added to.
	k.wg.Add(6)
	go k.readLoop(k.socks.shell, k.queueShell)
	go k.readLoop(k.socks.control, k.serveControl)
	go k.readLoop(k.socks.stdin, k.deliverInput)
	go k.heartbeat()
	go k.welcome()
	go k.serveShell()
	k.mu.Unlock()

	k.publish(nil, "status", statusContent{"starting"})
	select {
	case <-ctx.Done():
		k.Close()
		return ctx.Err()
	case <-k.shutdownReq:
		// Interrupt so the running cell, if any, stops at its next safe
		// point instead of holding the shutdown until it ends by itself.
		k.mu.Lock()
		running := k.mu.running
		k.mu.Unlock()
		if running {
			k.exec.Interrupt()
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := k.Shutdown(sctx); err != nil {
			k.log.Warn("kernel: shutdown_request: cell did not stop in time; closed", "err", err)
		}
	case <-k.closed:
	}
	k.wg.Wait()
	return ErrClosed
}

// Shutdown stops gracefully: it stops taking shell requests, lets the
// running cell finish (its reply and idle status are sent), then closes the
// sockets. If ctx ends first, Shutdown closes at once and returns ctx.Err().
func (k *Kernel) Shutdown(ctx context.Context) error {
	k.stopOnce.Do(func() { close(k.stopShell) })
	k.mu.Lock()
	started := k.mu.started
	if k.mu.state < stateStopping {
		k.mu.state = stateStopping
	}
	k.mu.Unlock()
	if started {
		select {
		case <-k.workerDone:
		case <-ctx.Done():
			k.Close()
			return ctx.Err()
		}
	}
	return k.Close()
}

// Close stops the kernel now: it cancels the running cell's context,
// interrupts it, closes the sockets and waits for the kernel's goroutines,
// the running cell included, to return.
func (k *Kernel) Close() error {
	k.closeOnce.Do(func() {
		k.mu.Lock()
		k.mu.state = stateClosed
		running := k.mu.running
		k.mu.Unlock()
		k.stopOnce.Do(func() { close(k.stopShell) })
		k.cancel()
		if running {
			k.exec.Interrupt()
		}
		// Closing iopub first lets its queues drain, for at most
		// iopubQueue.Linger, so the last status reaches the clients.
		k.closeErr = k.socks.close()
		if n := k.drops.dropped.Load(); n > 0 {
			k.log.Info("kernel: iopub messages dropped for slow subscribers while the kernel ran",
				"dropped", n, "disconnected", k.drops.disconnected.Load())
		}
		if err := k.hist.close(); err != nil && k.closeErr == nil {
			k.closeErr = err
		}
		close(k.closed)
	})
	k.wg.Wait()
	return k.closeErr
}

// readLoop receives messages on c, decodes and verifies them and hands the
// good ones to handle. Malformed and forged messages are logged and dropped.
func (k *Kernel) readLoop(c *channel, handle func(*message)) {
	defer k.wg.Done()
	for {
		raw, ok := k.recv(c)
		if !ok {
			return
		}
		m, err := k.sign.decode(raw.Frames)
		if err != nil {
			k.log.Warn("kernel: dropped message", "channel", c.name, "frames", len(raw.Frames), "err", err)
			continue
		}
		if !k.replay.first(m, time.Now()) {
			k.log.Warn("kernel: dropped replayed message (its header was seen within the replay window)",
				"channel", c.name, "msg_type", m.Header.MsgType, "msg_id", m.Header.MsgID, "session", m.Header.Session)
			continue
		}
		handle(m)
	}
}

// recv receives the next message on c. It returns false once the kernel
// is closing. A failed receive is logged and tried again after a pause, so
// a broken socket is not spun on.
func (k *Kernel) recv(c *channel) (zmq4.Msg, bool) {
	for {
		msg, err := c.sock.Recv()
		if k.ctx.Err() != nil {
			return msg, false
		}
		if err == nil {
			return msg, true
		}
		k.log.Warn("kernel: receive failed", "channel", c.name, "err", err)
		select {
		case <-k.ctx.Done():
			return msg, false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// queueShell hands a shell request to the worker, or answers a
// kernel_info_request at once. That request reads nothing a cell changes,
// and a client that has just connected waits for its reply before it does
// anything else (jupyter_client's wait_for_ready, JupyterLab's connection
// status): behind a burst of queued cells it would wait minutes. It waits
// its turn only when its own client has requests queued or running, whose
// replies must reach that client first.
func (k *Kernel) queueShell(m *message) {
	queued := false
	select {
	case <-k.stopShell:
	default:
		if m.Header.MsgType == "kernel_info_request" {
			if mine, all := k.shellQ.idle(m); mine {
				// Behind a running cell its statuses are not the kernel's;
				// with nothing queued they are, as a queued request's would be.
				m.aside = !all
				k.serve(k.socks.shell, m, false)
				return
			}
		}
		queued = k.shellQ.push(m, k.stopShell, k.ctx.Done())
	}
	if !queued {
		k.log.Info("kernel: dropped shell request: shutting down", "msg_type", m.Header.MsgType)
	}
}

// serveShell runs the queued shell requests one at a time, in arrival
// order.
func (k *Kernel) serveShell() {
	defer k.wg.Done()
	defer close(k.workerDone)
	for {
		p, ok := k.shellQ.pop(k.stopShell, k.ctx.Done())
		if !ok {
			return
		}
		select {
		case <-k.stopShell:
			return
		default:
		}
		k.mu.Lock()
		k.mu.parent = p.msg
		k.mu.Unlock()
		k.serve(k.socks.shell, p.msg, p.abort)
		k.shellQ.served(p.msg)
	}
}

// serveControl answers a control request on the control goroutine, so it
// runs while a cell is executing.
func (k *Kernel) serveControl(m *message) {
	k.serve(k.socks.control, m, false)
}

// serve handles one request between busy and idle status messages. A panic
// is recovered here, logged with its stack, and the kernel serves on.
func (k *Kernel) serve(c *channel, m *message, abort bool) {
	k.publishStatus(m, "busy")
	defer k.publishStatus(m, "idle")
	defer func() {
		if r := recover(); r != nil {
			k.log.Error("kernel: panic while handling request", "channel", c.name,
				"msg_type", m.Header.MsgType, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	t := m.Header.MsgType
	if abort {
		k.reply(c, m, replyType(t), abortedContent{Status: "aborted"})
		return
	}
	h, ok := k.handlers[t]
	if !ok {
		k.log.Warn("kernel: ignored unknown message type", "channel", c.name, "msg_type", t)
		return
	}
	if c == k.socks.control && !k.onCtl[t] {
		k.log.Warn("kernel: ignored message type not served on control (send it on shell)", "msg_type", t)
		return
	}
	h(k, &request{ch: c, msg: m})
}

// heartbeat echoes every ping on the heartbeat socket.
func (k *Kernel) heartbeat() {
	defer k.wg.Done()
	for {
		ping, ok := k.recv(k.socks.hb)
		if !ok {
			return
		}
		if err := k.socks.hb.send(ping.Frames, false); err != nil && k.ctx.Err() == nil {
			k.log.Warn("kernel: heartbeat echo failed", "err", err)
		}
	}
}

// newHeader returns the header of a message the kernel sends.
func (k *Kernel) newHeader(msgType string) header {
	return header{
		MsgID:    k.ids.next(),
		Session:  k.session,
		Username: "kernel",
		Date:     timestamp(time.Now()),
		MsgType:  msgType,
		Version:  protocolVersion,
	}
}

// sendTo encodes and sends one message to ids on c. Send failures are
// logged: a vanished client must not stop the kernel.
func (k *Kernel) sendTo(c *channel, ids [][]byte, parent *message, msgType string, metadata, content any) string {
	frames, id, err := k.encode(ids, parent, msgType, metadata, content)
	if err != nil {
		k.log.Error("kernel: could not encode message", "msg_type", msgType, "err", err)
		return ""
	}
	must := c == k.socks.iopub && mustDeliver[msgType]
	if err := c.send(frames, must); err != nil && k.ctx.Err() == nil {
		k.log.Warn("kernel: send failed", "msg_type", msgType, "err", err)
	}
	return id
}

// encode signs a new message of msgType with parent as its parent header
// (nil for none) and returns its frames and msg_id.
func (k *Kernel) encode(ids [][]byte, parent *message, msgType string, metadata, content any) ([][]byte, string, error) {
	h := k.newHeader(msgType)
	var ph json.RawMessage
	if parent != nil {
		ph = parent.rawHeader
	}
	frames, err := k.sign.encode(ids, &h, ph, metadata, content)
	return frames, h.MsgID, err
}

// reply answers m on the channel it came from.
func (k *Kernel) reply(c *channel, m *message, msgType string, content any) {
	k.sendTo(c, m.Identities, m, msgType, nil, content)
}

// publish broadcasts on iopub with parent as parent_header (nil for none).
// The channel's mutex serializes iopub sends from the shell worker, the
// control loop and goroutines a cell started.
func (k *Kernel) publish(parent *message, msgType string, content any) {
	k.sendTo(k.socks.iopub, [][]byte{[]byte(k.topic(msgType))}, parent, msgType, nil, content)
}

// publishStatus publishes the execution state for the request m and
// remembers it as the last status, to be repeated to later subscribers.
func (k *Kernel) publishStatus(m *message, state string) {
	k.last.Lock()
	defer k.last.Unlock()
	if !m.aside {
		// Only a copy of the header is kept: it is all a status needs of
		// its parent, and a request's content may be large.
		k.last.parent = &message{rawHeader: append(json.RawMessage(nil), m.rawHeader...)}
		k.last.state = state
	}
	k.publish(m, "status", statusContent{state})
}

// topic is the iopub topic of a message the kernel publishes.
func (k *Kernel) topic(msgType string) string {
	return "kernel." + k.session + "." + msgType
}

// inputWait is an Input call waiting for its input_reply.
type inputWait struct {
	msgID     string        // the input_request's msg_id
	reply     chan string   // buffered 1
	interrupt chan struct{} // closed by interrupt_request
}

// input sends an input_request to the client that sent parent and waits
// for the reply, an interrupt or the kernel closing.
func (k *Kernel) input(parent *message, prompt string, password bool) (string, error) {
	k.inputMu.Lock()
	defer k.inputMu.Unlock()
	w := &inputWait{reply: make(chan string, 1), interrupt: make(chan struct{})}
	h := k.newHeader("input_request")
	w.msgID = h.MsgID
	frames, err := k.sign.encode(parent.Identities, &h, parent.rawHeader, nil, inputRequestContent{prompt, password})
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	k.mu.input = w
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.mu.input = nil
		k.mu.Unlock()
	}()
	if err := k.socks.stdin.send(frames, false); err != nil {
		return "", fmt.Errorf("kernel: input: %w", err)
	}
	select {
	case v := <-w.reply:
		return v, nil
	case <-w.interrupt:
		return "", errors.New("kernel: input: interrupted")
	case <-k.ctx.Done():
		return "", ErrClosed
	}
}

// deliverInput passes an input_reply from the stdin channel to the waiting
// Input call.
func (k *Kernel) deliverInput(m *message) {
	if m.Header.MsgType != "input_reply" {
		k.log.Warn("kernel: ignored message on stdin", "msg_type", m.Header.MsgType)
		return
	}
	var c inputReplyContent
	if err := decodeContent(m, &c); err != nil {
		k.log.Warn("kernel: dropped message", "channel", "stdin", "err", err)
		return
	}
	k.mu.Lock()
	w := k.mu.input
	k.mu.Unlock()
	// jupyter_client's KernelClient.input sends the reply without a parent
	// header, so an empty parent counts as an answer to the pending request.
	if w == nil || (m.Parent.MsgID != "" && m.Parent.MsgID != w.msgID) {
		k.log.Warn("kernel: ignored input_reply nobody waits for", "parent_msg_id", m.Parent.MsgID)
		return
	}
	select {
	case w.reply <- c.Value:
	default: // a duplicate reply; the first one won
	}
}

// interruptInput wakes a waiting Input call with an error.
func (k *Kernel) interruptInput() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.mu.input; w != nil {
		select {
		case <-w.interrupt:
		default:
			close(w.interrupt)
		}
	}
}
