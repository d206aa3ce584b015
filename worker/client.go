package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// Config configures a Client.
type Config struct {
	// Command starts a worker: a program and its first arguments, such as
	// {"/usr/local/bin/gotrain", "worker"}. The client appends
	// `--connect ADDRESS` and, with a memory limit, `--memory-limit BYTES`,
	// and passes the worker's credential in TokenEnv.
	Command []string
	// Env is added to the kernel's environment for the worker.
	Env []string
	// Listen is where workers connect; empty means a Unix socket in a new
	// directory only this user can enter. On TCP the link is TLS, with a
	// certificate made for this client and pinned by the workers.
	Listen Address
	// MemoryLimit is the memory limit each worker starts with (0: none);
	// %limit changes it for the running worker and the ones after it.
	MemoryLimit int64
	// StartTimeout bounds how long a worker may take to connect and start
	// its session; 0 means 60 s.
	StartTimeout time.Duration
	// Logger receives the workers' own diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// NoRestart keeps a worker that died from being replaced: one of
	// several workers of a cluster cannot rejoin it alone (Group).
	NoRestart bool
	// Attach makes a client whose worker another launcher starts (the
	// Group's mpirun): it neither listens nor starts a process, and
	// Command may be empty. The launcher's owner hands it the worker's
	// link (attach) and says when the launcher ended (abandon).
	Attach bool
	// NoMPI, when set, says why this binary cannot run workers under
	// mpirun (it was built without -tags mpi): %workers -np is refused
	// with it.
	NoMPI string
}

// Client runs the session in a worker process and serves it to the kernel:
// it implements kernel.Executor. A worker that dies turns the running cell
// into a WorkerExited error, and a fresh worker starts in the background;
// the next cell is told once that the session's state was lost. A Client
// is safe for concurrent use as kernel.Executor requires, and must not be
// used after Close.
type Client struct {
	cfg      Config
	log      *slog.Logger
	ln       net.Listener
	sockDir  string      // removed by Close; empty for TCP
	tls      *tls.Config // the listener's TLS, on TCP; nil on a Unix socket
	cert     []byte      // the SHA-256 of tls's certificate, which workers pin
	acceptWG sync.WaitGroup

	mu struct {
		sync.Mutex
		w        *proc            // the current worker; nil before the first start and after Close
		waiting  map[string]*proc // started workers not yet connected, by credential ID
		notice   string           // shown at the start of the next cell
		memLimit int64
		closed   bool
		gone     bool   // the worker died and NoRestart keeps it so
		spawned  uint64 // the worker processes started: each a session of its own
		silent   bool   // it died because it stopped answering pings (attached)
		// A cell waits for a starting worker (waitingCell), and an
		// interrupt came meanwhile (interrupted).
		waitingCell, interrupted bool
	}
}

// NewClient listens for workers and starts the first one in the
// background, so that the kernel can answer kernel_info while it starts.
func NewClient(cfg Config) (*Client, error) {
	if len(cfg.Command) == 0 && !cfg.Attach {
		return nil, errors.New("worker: client: no worker command")
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	c := &Client{cfg: cfg, log: cfg.Logger}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.mu.waiting = map[string]*proc{}
	c.mu.memLimit = cfg.MemoryLimit
	if cfg.Attach {
		c.mu.Lock()
		c.mu.w = c.spawnLocked()
		c.mu.Unlock()
		return c, nil
	}
	if cfg.Listen == "" {
		dir, err := os.MkdirTemp("", "gotrain-worker-")
		if err != nil {
			return nil, fmt.Errorf("worker: socket folder: %w", err)
		}
		c.sockDir = dir
		cfg.Listen = Address("unix:" + filepath.Join(dir, "link"))
		c.cfg.Listen = cfg.Listen
	}
	network, addr, err := cfg.Listen.split()
	if err != nil {
		return nil, err
	}
	if c.ln, err = net.Listen(network, addr); err != nil {
		os.RemoveAll(c.sockDir)
		return nil, fmt.Errorf("worker: listening on %s: %w", cfg.Listen, err)
	}
	if network == "tcp" {
		c.cfg.Listen = Address("tcp:" + c.ln.Addr().String())
		cert, sum, err := linkCert()
		if err != nil {
			c.ln.Close()
			return nil, err
		}
		c.tls, c.cert = serverTLS(cert), sum
	}
	c.acceptWG.Add(1)
	go c.accept()
	c.mu.Lock()
	c.mu.w = c.spawnLocked()
	c.mu.Unlock()
	return c, nil
}

// Address is where the client listens, with the port a "tcp:…:0" got.
func (c *Client) Address() Address { return c.cfg.Listen }

// accept hands each connection that proves it holds a waiting worker's
// credential to that worker; any other connection is closed. Each
// handshake runs on its own goroutine and must end within
// handshakeTimeout, so a silent peer cannot hold a slot.
func (c *Client) accept() {
	defer c.acceptWG.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			l, h, err := acceptLink(conn, c.tls, func(h helloMsg) ([]byte, bool) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if p := c.mu.waiting[h.ID]; p != nil {
					return p.cred.secret, true
				}
				return nil, false
			})
			var p *proc
			if err == nil {
				c.mu.Lock()
				if p = c.mu.waiting[h.ID]; p != nil {
					delete(c.mu.waiting, h.ID)
				}
				c.mu.Unlock()
				if p == nil {
					err = fmt.Errorf("worker %s connected twice", h.ID)
				}
			}
			if err != nil {
				c.log.Warn("worker: refused a connection", "remote", conn.RemoteAddr().String(), "err", err)
				conn.Close()
				return
			}
			c.log.Debug("worker: connected", "pid", h.PID, "remote", conn.RemoteAddr().String())
			p.linkc <- l
		}()
	}
}

// attach hands an attached client's waiting worker its link; false when
// it has one already or is gone.
func (c *Client) attach(l *link, h helloMsg) bool {
	c.mu.Lock()
	p := c.mu.w
	ok := p != nil && c.mu.waiting[p.cred.id] == p
	if ok {
		delete(c.mu.waiting, p.cred.id)
	}
	c.mu.Unlock()
	if ok {
		c.log.Debug("worker: attached", "rank", h.Rank, "pid", h.PID, "remote", l.c.RemoteAddr().String())
		p.linkc <- l
	}
	return ok
}

// abandon tells an attached client that its worker's launcher ended, and
// why: a worker that has not connected never will, and one that has is
// gone or going.
func (c *Client) abandon(why string) {
	c.mu.Lock()
	p := c.mu.w
	c.mu.Unlock()
	if p != nil {
		p.abandon(why)
	}
}

// wentSilent reports whether the worker was counted lost for answering no
// pings, rather than seen to end.
func (c *Client) wentSilent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.silent
}

// note adds a line of the worker's stderr as its launcher relayed it.
func (c *Client) note(line string) {
	c.mu.Lock()
	p := c.mu.w
	c.mu.Unlock()
	if p != nil {
		p.diag.Write([]byte(line + "\n"))
	}
}

// spawnLocked starts a worker process and the goroutine that owns it.
func (c *Client) spawnLocked() *proc {
	c.mu.spawned++
	p := &proc{
		c:       c,
		cred:    newCredential(c.cert),
		linkc:   make(chan *link, 1),
		ready:   make(chan struct{}),
		dead:    make(chan struct{}),
		replies: map[uint64]chan replyMsg{},
		started: time.Now(),
		gone:    make(chan struct{}),
	}
	p.diag.log = c.log
	if c.cfg.Attach {
		c.mu.waiting[p.cred.id] = p
		go p.run()
		return p
	}
	args := append(append([]string{}, c.cfg.Command[1:]...), "--connect", string(c.cfg.Listen))
	if c.mu.memLimit > 0 {
		args = append(args, "--memory-limit", strconv.FormatInt(c.mu.memLimit, 10))
	}
	p.cmd = exec.Command(c.cfg.Command[0], args...)
	p.cmd.Env = append(append(os.Environ(), c.cfg.Env...), TokenEnv+"="+p.cred.String(), FDsEnv+"=3,4,5,6")
	// Its own process group: a signal a front end sends the kernel's group
	// (jupyter_client sends SIGINT that way) must not end the session; the
	// kernel forwards interrupts over the link instead.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.mu.waiting[p.cred.id] = p
	go p.run()
	return p
}

// session names the worker session the cells run in: it changes when a
// fresh worker starts, after a death or a %reset.
func (c *Client) session() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.spawned
}

// current returns the running worker, starting one if there is none.
func (c *Client) current() (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, kernel.ErrClosed
	}
	if c.mu.gone {
		return nil, errors.New("the worker process exited and is not restarted")
	}
	if c.mu.w == nil {
		c.mu.w = c.spawnLocked()
	}
	return c.mu.w, nil
}

// died is called by a worker's goroutine once it knows how the worker
// ended. Unless the worker was stopped on purpose, the next cell learns
// that its state is gone and a fresh worker starts now.
func (c *Client) died(p *proc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.waiting, p.cred.id)
	if c.mu.w != p || p.stopping.Load() || c.mu.closed {
		return
	}
	c.mu.silent = p.silent.Load()
	if c.cfg.NoRestart {
		c.mu.w, c.mu.gone = nil, true
		return
	}
	if !p.wasReady() {
		// A worker that cannot start would fail again at once: the next
		// request starts one instead of a loop doing it here.
		c.mu.w = nil
		return
	}
	c.mu.notice = fmt.Sprintf("gotrain: the worker process ended (%s); this cell runs in a fresh session, and the variables, functions and imports of earlier cells are gone\n", p.reason())
	c.mu.w = c.spawnLocked()
}

// ready waits until p takes requests or ends.
func (p *proc) waitReady(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-p.dead:
		return p.exitError(enameWorkerStartFailed, "the worker process could not start the session")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Execute runs a cell in the worker, as the kernel's executor when no
// Group runs the workers: it parses the cell's magics, which run returns
// to.
func (c *Client) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	cell := parseCell(req)
	if err := checkMagics(cell.magics); err != nil {
		return kernel.ExecuteResult{Err: err}
	}
	return c.run(ctx, cell, out)
}

// run runs the kernel's magics of a parsed cell (clientMagics) and sends
// the rest to the worker.
func (c *Client) run(ctx context.Context, cell parsedCell, out kernel.Output) kernel.ExecuteResult {
	cell, done, e := cell.runAt(inClient, func(m magic) *kernel.ExecError { return clientMagics[m.Name](c, ctx, m, out) })
	if e != nil || done {
		return kernel.ExecuteResult{Err: e}
	}
	p, err := c.current()
	if err != nil {
		return errResult(enameWorkerClosed, err.Error())
	}
	c.mu.Lock()
	c.mu.waitingCell, c.mu.interrupted = true, false
	c.mu.Unlock()
	err = p.waitReady(ctx)
	c.mu.Lock()
	notice, interrupted := c.mu.notice, c.mu.interrupted
	if !cell.Silent { // a silent request shows nothing: the notice waits
		c.mu.notice = ""
	}
	c.mu.waitingCell = false
	c.mu.Unlock()
	if err != nil {
		return resultOf(err)
	}
	if interrupted {
		// Interrupted while the worker was still starting: the cell never
		// ran, as a queued cell in IPython is cancelled by Ctrl-C.
		return errResult(kernel.EnameInterrupted, "interrupted before the cell started (the worker was starting)")
	}
	if notice != "" && !cell.Silent {
		out.Stream("stderr", notice)
	}
	return p.execute(ctx, cell, out)
}

// clientMagics are the magics the Client runs, by name (see magics).
var clientMagics = map[string]func(c *Client, ctx context.Context, m magic, out kernel.Output) *kernel.ExecError{
	"help": func(_ *Client, _ context.Context, _ magic, out kernel.Output) *kernel.ExecError {
		md, plain := helpText()
		out.Display(kernel.MIMEBundle{"text/markdown": md, "text/plain": plain}, nil, "", false)
		return nil
	},
	"reset": func(c *Client, ctx context.Context, _ magic, out kernel.Output) *kernel.ExecError {
		if err := c.reset(ctx); err != nil {
			return errResult("ResetFailed", err.Error()).Err
		}
		out.Stream("stdout", "gotrain: the session was reset: a fresh worker runs, and earlier cells' variables are gone\n")
		return nil
	},
	"limit": func(c *Client, _ context.Context, m magic, _ kernel.Output) *kernel.ExecError {
		// The worker sets its limit (workerMagics); a fresh worker
		// starts with the one it was last given.
		if n, set, err := parseLimit(m.Arg); err == nil && set {
			c.mu.Lock()
			c.mu.memLimit = n
			c.mu.Unlock()
		}
		return nil
	},
}

// reset replaces the worker with a fresh one and waits until it is ready.
func (c *Client) reset(ctx context.Context) error {
	c.mu.Lock()
	old := c.mu.w
	c.mu.w = nil
	c.mu.notice = ""
	c.mu.Unlock()
	if old != nil {
		old.stop()
	}
	p, err := c.current()
	if err != nil {
		return err
	}
	return p.waitReady(ctx)
}

// request sends a complete, inspect or is_complete request to a ready
// worker and waits for its reply; ok is false when there is no ready
// worker within a short wait or it died meanwhile.
func (c *Client) request(m requestMsg) (replyMsg, bool) {
	p, err := c.current()
	if err != nil {
		return replyMsg{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if p.waitReady(ctx) != nil {
		return replyMsg{}, false
	}
	return p.request(m)
}

func (c *Client) Complete(code string, cursorPos int) kernel.CompleteResult {
	r, ok := c.request(requestMsg{Op: "complete", Code: code, CursorPos: cursorPos})
	if !ok {
		return kernel.CompleteResult{CursorStart: cursorPos, CursorEnd: cursorPos}
	}
	return kernel.CompleteResult{Matches: r.Matches, CursorStart: r.CursorStart, CursorEnd: r.CursorEnd, Metadata: r.Metadata}
}

func (c *Client) Inspect(code string, cursorPos, detailLevel int) kernel.InspectResult {
	r, _ := c.request(requestMsg{Op: "inspect", Code: code, CursorPos: cursorPos, DetailLevel: detailLevel})
	return kernel.InspectResult{Found: r.Found, Data: r.Data}
}

func (c *Client) IsComplete(code string) kernel.IsCompleteResult {
	r, ok := c.request(requestMsg{Op: "is_complete", Code: code})
	if !ok {
		return kernel.IsCompleteResult{Status: "unknown"}
	}
	return kernel.IsCompleteResult{Status: r.Status, Indent: r.Indent}
}

// Interrupt asks the worker's running cell to stop at its next safe point.
func (c *Client) Interrupt() {
	c.mu.Lock()
	p := c.mu.w
	c.mu.interrupted = c.mu.waitingCell
	c.mu.Unlock()
	if p != nil {
		p.send(kindInterrupt, nil)
	}
}

// Close stops the worker (it gets 2 s to finish, then is killed), stops
// listening and removes the socket's folder. Close returns once the
// worker's process has been reaped.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil
	}
	c.mu.closed = true
	p := c.mu.w
	c.mu.w = nil
	c.mu.Unlock()
	if p != nil {
		p.stop()
	}
	var err error
	if c.ln != nil {
		err = c.ln.Close()
	}
	c.acceptWG.Wait()
	if c.sockDir != "" {
		os.RemoveAll(c.sockDir)
	}
	return err
}

// resultOf turns an error from waiting on a worker into a cell's result.
func resultOf(err error) kernel.ExecuteResult {
	var ee *exitErr
	if errors.As(err, &ee) {
		return kernel.ExecuteResult{Err: ee.e}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errResult(kernel.EnameInterrupted, "the kernel is shutting down")
	}
	return errResult(enameWorkerError, err.Error())
}
