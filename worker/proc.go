package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// proc is one worker process as the kernel sees it. Its goroutine (run)
// owns the process: it waits for the link, reads every frame, and on the
// link's end reaps the process and fails whatever was waiting.
type proc struct {
	c       *Client
	cred    credential // what the worker proves it holds; cred.id keys Client.mu.waiting
	cmd     *exec.Cmd
	process atomic.Pointer[os.Process] // cmd.Process, for stop, once started
	linkc   chan *link                 // the authenticated link, from the accept loop
	ready   chan struct{}              // closed when the session takes requests
	dead    chan struct{}              // closed when the process is reaped; how and summary are set
	started time.Time

	// An attached worker (Config.Attach) has no cmd: its launcher's owner
	// closes gone, with goneWhy set, when the launcher ended.
	gone     chan struct{}
	goneOnce sync.Once
	goneWhy  string
	lastSeen atomic.Int64 // when the link last carried a frame, in Unix nanoseconds
	silent   atomic.Bool  // the link closed because the worker stopped answering pings

	diag     tail     // the worker's diagnostics and crash output
	errText  tail     // the worker's fd 2: what it copied as it read, then what was left in the pipe
	errPipe  *os.File // a copy of the read end of the worker's fd 2, read after it died
	stopping atomic.Bool
	isReady  atomic.Bool
	how      string   // "exit status 3", "killed by signal SIGKILL"; set before dead closes
	summary  []string // the lines of diag that say why; set before dead closes

	linkMu sync.Mutex
	link   *link // nil until connected

	mu struct {
		sync.Mutex
		cell   *cellCall
		nextID uint64
		exited bool // finish has failed the waiting calls; no new ones
	}
	replies map[uint64]chan replyMsg // guarded by mu
}

// cellCall is the execute_request a worker runs now.
type cellCall struct {
	out    kernel.Output
	result chan resultMsg // buffered; receives once
}

func (p *proc) wasReady() bool { return p.isReady.Load() }

// run starts the process and serves its link until the end.
func (p *proc) run() {
	defer close(p.dead)
	if p.cmd == nil {
		p.runAttached()
		return
	}
	diagDone, err := p.start()
	if err != nil {
		p.how = "could not start: " + err.Error()
		p.c.died(p)
		return
	}
	defer p.errPipe.Close()
	p.c.log.Debug("worker: started", "pid", p.cmd.Process.Pid)
	waited := make(chan error, 1)
	go func() {
		err := p.cmd.Wait()
		// The diagnostics pipe ends when the worker does; a `!cmd` child
		// that outlives it does not hold it, since it is close-on-exec.
		<-diagDone
		waited <- err
	}()

	var l *link
	timeout := time.NewTimer(p.c.cfg.StartTimeout)
	defer timeout.Stop()
	select {
	case l = <-p.linkc:
	case err := <-waited:
		p.finish(err, "")
		return
	case <-timeout.C:
		p.cmd.Process.Kill()
		p.finish(<-waited, fmt.Sprintf("did not connect within %s, then ", p.c.cfg.StartTimeout))
		return
	}
	p.connect(l)
	p.serve(l)
	l.close()
	// The link ends a moment before the process does; give it the time an
	// exit takes, then make sure.
	select {
	case err := <-waited:
		p.finish(err, "")
	case <-time.After(3 * time.Second):
		p.cmd.Process.Kill()
		p.finish(<-waited, "closed its link and did not exit, then ")
	}
}

// connect records the worker's link; a worker stopped while it connected
// is told to shut down at once.
func (p *proc) connect(l *link) {
	p.linkMu.Lock()
	p.link = l
	p.linkMu.Unlock()
	if p.stopping.Load() {
		p.send(kindShutdown, nil)
	}
}

// runAttached serves an attached worker's link: the worker another
// launcher started. Its end is the link's end, or the launcher's.
func (p *proc) runAttached() {
	var l *link
	timeout := time.NewTimer(p.c.cfg.StartTimeout)
	defer timeout.Stop()
	select {
	case l = <-p.linkc:
	case <-p.gone:
		p.finishAttached("it never connected")
		return
	case <-timeout.C:
		p.finishAttached(fmt.Sprintf("it did not connect within %s", p.c.cfg.StartTimeout))
		return
	}
	p.connect(l)
	served := make(chan struct{})
	go p.heartbeat(l, served)
	p.serve(l)
	close(served)
	l.close()
	if p.silent.Load() {
		p.finishAttached(fmt.Sprintf("it answered no ping for %s: its host or the network to it may be down", silence))
		return
	}
	// The launcher says why a moment after a worker's link ends (mpirun
	// notices the process's exit).
	select {
	case <-p.gone:
	case <-time.After(3 * time.Second):
	}
	p.finishAttached("its link to the kernel closed")
}

// silence is how long an attached worker may leave its link without a
// frame before the kernel counts it lost. A worker answers pings on its
// link's read loop whatever its cell does; a host that is lost, or cut off,
// leaves the link open and silent (TCP notices after hours), and its peers
// wait in a collective for ever.
const silence = 5 * time.Second

// heartbeat pings an attached worker every second until served is closed,
// and closes the link when the worker has been silent for longer than
// silence, or when the launcher ended.
func (p *proc) heartbeat(l *link, served <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-served:
			return
		case <-p.gone:
			l.close()
			return
		case <-tick.C:
			if time.Since(time.Unix(0, p.lastSeen.Load())) > silence && !p.stopping.Load() {
				p.silent.Store(true)
				l.close()
				return
			}
			l.send(kindPing, nil)
		}
	}
}

// abandon closes gone once, recording why the launcher ended.
func (p *proc) abandon(why string) {
	p.goneOnce.Do(func() {
		p.goneWhy = why
		close(p.gone)
	})
}

// finishAttached is finish for an attached worker.
func (p *proc) finishAttached(how string) {
	select {
	case <-p.gone:
		if p.goneWhy != "" {
			how += "; " + p.goneWhy
		}
	default:
	}
	p.how = how
	p.summary = crashSummary(p.diag.bytes())
	p.ended()
}

// start creates the worker's pipes (see FDsEnv) and starts the process.
// diagDone is closed when the diagnostics and stderr-copy pipes have been
// read to their end.
func (p *proc) start() (diagDone chan struct{}, err error) {
	var files []*os.File // the child's ends, closed here once it has them
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, w)
		return r, w
	}
	outR, outW := pipe()
	errR, errW := pipe()
	diagR, diagW := pipe()
	copyR, copyW := pipe()
	if err != nil {
		return nil, err
	}
	files = append(files, outR)
	// A fatal error's traceback is written with the world stopped; the
	// pipe must hold it (see pipeSize).
	if rc, err := errW.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, pipeSize) })
	}
	p.cmd.Stdout, p.cmd.Stderr = outW, errW
	p.cmd.ExtraFiles = []*os.File{outR, errR, diagW, copyW} // fds 3, 4, 5, 6
	if err := p.cmd.Start(); err != nil {
		errR.Close()
		diagR.Close()
		copyR.Close()
		return nil, err
	}
	p.process.Store(p.cmd.Process)
	p.errPipe = errR
	diagDone = make(chan struct{})
	var copies sync.WaitGroup
	for _, c := range []struct {
		r *os.File
		t *tail
	}{{diagR, &p.diag}, {copyR, &p.errText}} {
		copies.Add(1)
		go func() {
			defer copies.Done()
			io.Copy(c.t, c.r)
			c.r.Close()
		}()
	}
	go func() {
		copies.Wait()
		close(diagDone)
	}()
	return diagDone, nil
}

// leftover reads what the dead worker wrote to fd 2 and never read.
func (p *proc) leftover() {
	p.errPipe.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 64<<10)
	for {
		n, err := p.errPipe.Read(buf)
		p.errText.Write(buf[:n])
		if err != nil || n == 0 {
			return
		}
	}
}

// finish records how the process ended, fails the waiting calls and tells
// the client.
func (p *proc) finish(waitErr error, why string) {
	p.how = why + describeExit(p.cmd, waitErr)
	p.leftover()
	// The runtime prints "fatal error: …" to fd 2 only; the traceback that
	// follows goes to the crash output too.
	p.summary = crashSummary(p.errText.bytes(), p.diag.bytes())
	p.ended()
}

// ended logs the worker's end unless it was stopped, fails the waiting
// calls and tells the client.
func (p *proc) ended() {
	if !p.stopping.Load() {
		p.c.log.Warn("worker: exited", "how", p.how, "summary", strings.Join(p.summary, " | "))
	}
	what := "the worker process running this session exited"
	if p.silent.Load() {
		what = "the worker process running this session is lost"
	}
	err := p.exitError(enameWorkerExited, what)
	// The client replaces the worker before the waiting cell hears of the
	// exit, so that the cell after it already finds the fresh one.
	p.c.died(p)
	p.mu.Lock()
	p.mu.exited = true
	if cell := p.mu.cell; cell != nil {
		p.mu.cell = nil
		cell.result <- resultMsg{Err: &execError{Name: err.e.Name, Value: err.e.Value, Traceback: err.e.Traceback}}
	}
	for id, ch := range p.replies {
		close(ch)
		delete(p.replies, id)
	}
	p.mu.Unlock()
}

// serve reads frames until the link ends.
func (p *proc) serve(l *link) {
	for {
		p.lastSeen.Store(time.Now().UnixNano())
		f, err := l.read()
		if err != nil {
			if errors.Is(err, errFrame) {
				p.c.log.Error("worker: bad frame; stopping the worker", "err", err)
			}
			return
		}
		p.mu.Lock()
		cell := p.mu.cell
		p.mu.Unlock()
		switch f.kind {
		case kindPong:
		case kindReady:
			p.isReady.Store(true)
			close(p.ready)
		case kindStdout, kindStderr:
			if cell != nil {
				name := "stdout"
				if f.kind == kindStderr {
					name = "stderr"
				}
				cell.out.Stream(name, string(f.body))
			}
		case kindDisplay:
			var m displayMsg
			if decode(f, &m) == nil && cell != nil {
				cell.out.Display(m.Data, m.Metadata, m.ID, m.Update)
			}
		case kindClear:
			var m clearMsg
			if decode(f, &m) == nil && cell != nil {
				cell.out.ClearOutput(m.Wait)
			}
		case kindInputReq:
			var m inputReq
			if decode(f, &m) != nil || cell == nil {
				p.sendJSON(kindInputReply, inputReply{Err: "worker: input: no cell is running"})
				continue
			}
			// Waiting for the front end must not stop the reading of
			// frames: an interrupt's effects arrive here too.
			go func() {
				v, err := cell.out.Input(m.Prompt, m.Password)
				r := inputReply{Value: v}
				if err != nil {
					r.Err = err.Error()
				}
				p.sendJSON(kindInputReply, r)
			}()
		case kindResult:
			var m resultMsg
			if err := decode(f, &m); err != nil {
				m = resultMsg{Err: &execError{Name: enameWorkerError, Value: err.Error()}}
			}
			p.mu.Lock()
			if c := p.mu.cell; c != nil {
				p.mu.cell = nil
				c.result <- m
			}
			p.mu.Unlock()
		case kindReply:
			var m replyMsg
			if decode(f, &m) != nil {
				continue
			}
			p.mu.Lock()
			if ch, ok := p.replies[m.ID]; ok {
				delete(p.replies, m.ID)
				ch <- m
			}
			p.mu.Unlock()
		default:
			p.c.log.Warn("worker: unknown frame from worker", "kind", string(rune(f.kind)))
		}
	}
}

// connected returns the link, or an error before the worker connected.
func (p *proc) connected() (*link, error) {
	p.linkMu.Lock()
	defer p.linkMu.Unlock()
	if p.link == nil {
		return nil, errors.New("worker: not connected")
	}
	return p.link, nil
}

func (p *proc) send(k kind, body []byte) error {
	l, err := p.connected()
	if err != nil {
		return err
	}
	return l.send(k, body)
}

func (p *proc) sendJSON(k kind, v any) error {
	l, err := p.connected()
	if err != nil {
		return err
	}
	return l.sendJSON(k, v)
}

// execute sends one cell and waits for its result or the worker's end.
func (p *proc) execute(ctx context.Context, req parsedCell, out kernel.Output) kernel.ExecuteResult {
	call := &cellCall{out: out, result: make(chan resultMsg, 1)}
	p.mu.Lock()
	if p.mu.exited {
		p.mu.Unlock()
		return resultOf(p.exitError(enameWorkerExited, "the worker process running this session exited"))
	}
	p.mu.cell = call
	p.mu.Unlock()
	p.errText.reset() // a crash report reads this cell's stderr, not an earlier one's
	err := p.sendJSON(kindExecute, executeMsg{Code: req.Code, Magics: req.magics, Silent: req.Silent, StoreHistory: req.StoreHistory,
		AllowStdin: req.AllowStdin, ExecutionCount: req.ExecutionCount})
	if err != nil {
		// The read loop sees the broken link too and reports the exit.
		p.c.log.Warn("worker: sending a cell", "err", err)
	}
	var m resultMsg
	select {
	case m = <-call.result:
	case <-ctx.Done():
		// The kernel is closing: the worker stops with it.
		p.send(kindInterrupt, nil)
		return errResult(kernel.EnameInterrupted, "the kernel is shutting down")
	}
	res := kernel.ExecuteResult{Value: m.Value}
	if m.Err != nil {
		res.Err = &kernel.ExecError{Name: m.Err.Name, Value: m.Err.Value, Traceback: m.Err.Traceback}
	}
	for _, pg := range m.Pages {
		res.Pages = append(res.Pages, pg)
	}
	return res
}

// request sends m with a fresh ID and waits for the reply.
func (p *proc) request(m requestMsg) (replyMsg, bool) {
	ch := make(chan replyMsg, 1)
	p.mu.Lock()
	if p.mu.exited {
		p.mu.Unlock()
		return replyMsg{}, false
	}
	p.mu.nextID++
	m.ID = p.mu.nextID
	p.replies[m.ID] = ch
	p.mu.Unlock()
	if p.sendJSON(kindRequest, m) != nil {
		return replyMsg{}, false
	}
	r, ok := <-ch
	return r, ok
}

// stop ends the worker on purpose: a shutdown frame, stopGrace to exit
// (closing its session first), then SIGKILL. It returns once the process is reaped.
func (p *proc) stop() {
	p.stopping.Store(true)
	p.send(kindShutdown, nil)
	select {
	case <-p.dead:
		return
	case <-time.After(stopGrace):
	}
	switch {
	case p.cmd == nil:
		// The launcher's owner ends the process; the link is this side's.
		if l, err := p.connected(); err == nil {
			l.close()
		}
		p.abandon("")
	case p.process.Load() != nil:
		// Read through the atomic: run may be starting the process now.
		p.process.Load().Kill()
	}
	<-p.dead
}

// exitErr carries a cell's error about the worker's end.
type exitErr struct{ e *kernel.ExecError }

func (e *exitErr) Error() string { return e.e.Value }

// exitError describes the worker's end as the cell's error.
func (p *proc) exitError(name, what string) *exitErr {
	value := fmt.Sprintf("%s (%s); its variables are lost, and a fresh worker is starting", what, p.reason())
	switch {
	case p.c.cfg.NoRestart:
		// One of a Group's workers: the Group says what happens next.
		value = fmt.Sprintf("%s (%s)", what, p.reason())
	case name == enameWorkerStartFailed:
		value = fmt.Sprintf("%s (%s); the next cell tries again", what, p.reason())
	}
	tb := []string{name + ": " + value}
	if len(p.summary) > 0 {
		tb = append(tb, "", "the worker's last words:")
		for _, s := range p.summary {
			tb = append(tb, "    "+s)
		}
	}
	return &exitErr{&kernel.ExecError{Name: name, Value: value, Traceback: tb}}
}

// reason is how the worker ended and, when its stderr says, why: "exit
// status 2: fatal error: stack overflow".
func (p *proc) reason() string {
	for i := len(p.summary) - 1; i >= 0; i-- {
		if headline.MatchString(p.summary[i]) {
			return p.how + ": " + p.summary[i]
		}
	}
	if len(p.summary) > 0 {
		return p.how + ": " + p.summary[len(p.summary)-1]
	}
	return p.how
}

// headline matches the line of a crash report that names the crash.
var headline = regexp.MustCompile(`^(fatal error: |panic: |SIG[A-Z]+: )`)

// describeExit says how a process ended: "exit status 3", "killed by
// signal SIGKILL".
func describeExit(cmd *exec.Cmd, waitErr error) string {
	st := cmd.ProcessState
	if st == nil {
		if waitErr != nil {
			return waitErr.Error()
		}
		return "not started"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		s := fmt.Sprintf("killed by signal %d (%s)", int(sig), signalName(sig))
		if sig == syscall.SIGKILL {
			s += "; the system's out-of-memory killer also ends processes this way"
		}
		return s
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGBUS:
		return "SIGBUS"
	}
	return sig.String()
}

// crashLine matches the lines of a Go crash report that say what happened.
var crashLine = regexp.MustCompile(`^(fatal error: |panic: |runtime: |SIG[A-Z]+: |signal arrived|\[signal |worker: )`)

// crashSummary picks the lines of a dying worker's stderr that say why,
// at most eight, from each source in turn; with none, the last five lines
// of the last source that has any.
func crashSummary(sources ...[]byte) []string {
	var out, last []string
	for _, src := range sources {
		lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
		for _, ln := range lines {
			ln = strings.TrimRight(ln, "\r")
			if crashLine.MatchString(ln) && len(out) < 8 && !slices.Contains(out, ln) {
				out = append(out, ln)
			}
		}
		if len(src) > 0 {
			last = lines
		}
	}
	if len(out) > 0 {
		return out
	}
	if len(last) > 5 {
		last = last[len(last)-5:]
	}
	for _, ln := range last {
		if strings.TrimSpace(ln) != "" {
			out = append(out, ln)
		}
	}
	return out
}

// tailLimit is how much of a worker's stderr the kernel keeps.
const tailLimit = 64 << 10

// tail is an io.Writer that keeps the last tailLimit bytes written to it
// and logs each line.
type tail struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailLimit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailLimit/2:]...)
	}
	t.mu.Unlock()
	if t.log != nil {
		t.log.Debug("worker stderr", "text", string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (t *tail) reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
