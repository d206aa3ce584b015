package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// TokenEnv is the environment variable that carries a worker's credential
// from the kernel that starts it: an ID, a secret and, when the kernel
// listens on TCP, its certificate's fingerprint (auth.go). Serve removes
// it from the environment before any cell runs.
const TokenEnv = "GOTRAIN_WORKER_TOKEN"

// maxStack is the worker's limit on one goroutine's stack, 64 MiB against
// Go's default of 1 GiB. A stack overflow makes the runtime walk the whole
// stack for its traceback; measured on the 2-core development machine
// under load, a recursion of small frames took 4 to 11 s to fail at
// 256 MiB and about 1 s at 64 MiB, which still holds two million frames of
// 32 bytes.
const maxStack = 64 << 20

// ServeConfig configures the worker side of a link.
type ServeConfig struct {
	// Address is the kernel's listening address (from --connect), or
	// several separated by commas: the first that answers is used.
	Address Address
	// Rank is this worker's rank when a launcher started several with one
	// token (mpirun; see Group).
	Rank int
	// Token is the worker's credential, as the kernel gives it in
	// TokenEnv; empty means the value of TokenEnv.
	Token string
	// MemoryLimit, when positive, is applied at start as `%limit memory`
	// would.
	MemoryLimit int64
	// NewExecutor creates the session once fds 1 and 2 are captured, so
	// that whatever it sets up writes into the cells' streams.
	NewExecutor func() (kernel.Executor, error)
}

// Serve connects to the kernel, captures fds 1 and 2, starts the session
// and serves the kernel's requests until the kernel says shutdown or the
// link closes. A worker whose kernel is gone has nobody to serve, so the
// link closing is not an error: Serve returns nil and the process should
// exit. Whichever way Serve returns once the session started, it closes
// the session when it is an io.Closer (the session's build folder holds
// the cells' source); so does a SIGTERM or SIGHUP, after which the process
// ends by that signal.
func Serve(cfg ServeConfig) error {
	token := cfg.Token
	if token == "" {
		token = os.Getenv(TokenEnv)
	}
	os.Unsetenv(TokenEnv)
	if token == "" {
		return fmt.Errorf("worker: no credential: set %s or pass one", TokenEnv)
	}
	cred, err := parseCredential(token)
	if err != nil {
		return err
	}
	l, err := cfg.Address.dial(10*time.Second, cred, cfg.Rank)
	if err != nil {
		return fmt.Errorf("worker: connecting to the kernel at %s: %w", cfg.Address, err)
	}
	defer l.close()

	s := &server{link: l, inputs: make(chan inputReply, 1)}
	s.out.init(l)
	lineBufferC()
	capt, diag, err := startCapture(s.out.capture)
	if err != nil {
		return err
	}
	s.capt = capt
	// The runtime writes a fatal error to fd 2 with the world stopped; the
	// copy to the original stderr is what the kernel reads after the
	// process died.
	if err := debug.SetCrashOutput(diag, debug.CrashOptions{}); err != nil {
		fmt.Fprintf(diag, "worker: crash output: %v\n", err)
	}
	s.log = slog.New(slog.NewTextHandler(diag, nil))
	debug.SetMaxStack(maxStack)
	if cfg.MemoryLimit > 0 {
		if _, err := setMemoryLimit(cfg.MemoryLimit); err != nil {
			fmt.Fprintf(diag, "worker: %v\n", err)
		}
	}
	if s.exec, err = cfg.NewExecutor(); err != nil {
		return fmt.Errorf("worker: starting the session: %w", err)
	}
	stop := closeOnSignal(s.exec, s.log)
	defer stop()
	if err := l.send(kindReady, nil); err != nil {
		return err
	}
	return s.serve()
}

// server is the worker's side of one link.
type server struct {
	link   *link
	exec   kernel.Executor
	capt   *capture
	out    outbox
	log    *slog.Logger
	inputs chan inputReply // the answer to the pending input request

	mu struct {
		sync.Mutex
		// cancel stops the running cell's shell commands; nil between
		// cells. It is not the session's context: an interrupt must only
		// reach a safe point.
		cancel context.CancelFunc
		done   chan struct{} // closed when the running cell has ended
	}
	cells sync.WaitGroup
}

// serve is the read loop. Execute runs on its own goroutine, so that
// interrupts and input replies are read while a cell runs; the kernel sends
// no other request until the cell's result arrives. When the link closes,
// serve returns at once, whatever a cell is doing: the kernel is gone.
func (s *server) serve() error {
	for {
		f, err := s.link.read()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("worker: reading from the kernel: %w", err)
		}
		switch f.kind {
		case kindExecute:
			var m executeMsg
			if err := decode(f, &m); err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			s.mu.Lock()
			s.mu.cancel, s.mu.done = cancel, done
			s.mu.Unlock()
			s.cells.Add(1)
			go func() {
				defer s.cells.Done()
				s.execute(ctx, m)
				s.mu.Lock()
				s.mu.cancel, s.mu.done = nil, nil
				s.mu.Unlock()
				cancel()
				close(done)
			}()
		case kindRequest:
			var m requestMsg
			if err := decode(f, &m); err != nil {
				return err
			}
			s.out.pushJSON(kindReply, s.answer(m))
		case kindInputReply:
			var m inputReply
			if err := decode(f, &m); err != nil {
				return err
			}
			select {
			case s.inputs <- m:
			default:
				s.log.Warn("worker: input reply with no input request pending")
			}
		case kindInterrupt:
			s.mu.Lock()
			cancel, done := s.mu.cancel, s.mu.done
			s.mu.Unlock()
			if cancel == nil {
				s.exec.Interrupt()
				continue
			}
			cancel() // stops a shell command; the session stops at a safe point
			s.interrupt(done)
		case kindPing:
			// Read on this goroutine whatever a cell does, so the answer
			// says the process and its link are alive.
			s.link.send(kindPong, nil)
		case kindShutdown:
			// The cell gets a moment to reach a safe point; the process
			// exits after Serve returns either way.
			s.exec.Interrupt()
			done := make(chan struct{})
			go func() { s.cells.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(shutdownGrace):
			}
			return nil
		default:
			s.log.Warn("worker: unknown frame", "kind", string(rune(f.kind)))
		}
	}
}

// runner is what a session that can say whether a cell is running
// implements; package session's Session does.
type runner interface{ Running() bool }

// interrupt interrupts the cell that done belongs to. The execute frame is
// read before the cell's goroutine has handed it to the session, and a
// session ignores an interrupt while it runs nothing; so an interrupt that
// arrives first waits until the session runs the cell, or the cell ends
// without it (a cell of magics only).
func (s *server) interrupt(done chan struct{}) {
	r, ok := s.exec.(runner)
	if !ok || r.Running() {
		s.exec.Interrupt()
		return
	}
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for !r.Running() {
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
		s.exec.Interrupt()
	}()
}

func (s *server) answer(m requestMsg) replyMsg {
	r := replyMsg{ID: m.ID}
	switch m.Op {
	case "complete":
		c := s.exec.Complete(m.Code, m.CursorPos)
		r.Matches, r.CursorStart, r.CursorEnd, r.Metadata = c.Matches, c.CursorStart, c.CursorEnd, c.Metadata
	case "inspect":
		c := s.exec.Inspect(m.Code, m.CursorPos, m.DetailLevel)
		r.Found, r.Data = c.Found, c.Data
	case "is_complete":
		if ms, rest := splitMagics(m.Code); ms != nil && strings.TrimSpace(rest) == "" {
			r.Status = "complete"
			break
		}
		c := s.exec.IsComplete(m.Code)
		r.Status, r.Indent = c.Status, c.Indent
	default:
		r.Status = "unknown"
	}
	return r
}

// execute runs one cell: its magics in order, then its Go code, and sends
// the result after everything the cell wrote. shellCtx ends on interrupt
// and stops the cell's `!cmd`s; the session gets a context of its own.
func (s *server) execute(shellCtx context.Context, m executeMsg) {
	// What was written before the cell began belongs to no cell: drain it
	// first, so begin shows it in this cell or keeps it past a silent one.
	flushC()
	s.capt.Flush()
	s.out.begin(m.Silent)
	out := &cellOutput{s: s, allowStdin: m.AllowStdin}
	res := s.run(shellCtx, m, out)
	flushC()
	s.capt.Flush()
	s.out.end(resultFrom(res))
}

func (s *server) run(shellCtx context.Context, m executeMsg, out *cellOutput) kernel.ExecuteResult {
	c := parsedCell{ExecuteRequest: kernel.ExecuteRequest{Code: m.Code, Silent: m.Silent, StoreHistory: m.StoreHistory,
		AllowStdin: m.AllowStdin, ExecutionCount: m.ExecutionCount}, magics: m.Magics}
	r := &workerCell{shellCtx: shellCtx, out: out}
	c, done, err := c.runAt(inWorker, func(mg magic) *kernel.ExecError { return workerMagics[mg.Name](s, r, mg) })
	if err != nil {
		return kernel.ExecuteResult{Err: err}
	}
	var res kernel.ExecuteResult
	if !done {
		res = s.exec.Execute(context.Background(), c.ExecuteRequest, out)
	}
	if r.timer != nil {
		flushC()
		s.capt.Flush()
		out.Stream("stdout", r.timer.report())
	}
	return res
}

// workerCell is what the worker's magics of one cell share.
type workerCell struct {
	shellCtx context.Context // ends on interrupt: it stops the cell's `!cmd`s
	out      *cellOutput
	timer    *cellTimer // started by %time; nil without
}

// workerMagics are the magics the worker's server runs, by name (see
// magics).
var workerMagics = map[string]func(s *server, r *workerCell, m magic) *kernel.ExecError{
	"!": func(s *server, r *workerCell, m magic) *kernel.ExecError { return s.shell(r.shellCtx, m) },
	"env": func(_ *server, r *workerCell, m magic) *kernel.ExecError {
		return envMagic(m, r.out)
	},
	"limit": func(_ *server, r *workerCell, m magic) *kernel.ExecError {
		return limitMagic(m, r.out)
	},
	"time": func(_ *server, r *workerCell, _ magic) *kernel.ExecError {
		r.timer = startTimer()
		return nil
	},
	"go": func(s *server, r *workerCell, m magic) *kernel.ExecError {
		return goMagic(s.exec, m, r.out)
	},
}

// goModules is a session whose go.mod cells build with (package session's
// Session): %go's commands reach it as calls.
type goModules interface {
	GoGet(module string) error
	ModuleFile() string
}

// goMagic is %go: `get MODULE[@VERSION]` or `mod`.
func goMagic(exec kernel.Executor, m magic, out kernel.Output) *kernel.ExecError {
	mods, ok := exec.(goModules)
	f := strings.Fields(m.Arg)
	switch {
	case !ok:
		return errResult("UsageError", "%go: this worker's session has no go.mod").Err
	case len(f) == 2 && f[0] == "get":
		if err := mods.GoGet(f[1]); err != nil {
			return &kernel.ExecError{Name: "GoGetError", Value: err.Error(), Traceback: []string{err.Error()}}
		}
		out.Stream("stdout", "go get "+f[1]+": done\n")
		return nil
	case len(f) == 1 && f[0] == "mod":
		b, err := os.ReadFile(mods.ModuleFile())
		if err != nil {
			return &kernel.ExecError{Name: "GoModError", Value: err.Error()}
		}
		out.Stream("stdout", string(b))
		return nil
	}
	msg := "want %go get MODULE[@VERSION] or %go mod, got " + m.String()
	return &kernel.ExecError{Name: "UsageError", Value: msg, Traceback: []string{msg}}
}

// shell runs a `!cmd` line with /bin/sh. Its output goes to fds 1 and 2,
// which the capture reads like any other output of the cell; an interrupt
// kills its process group.
func (s *server) shell(ctx context.Context, m magic) *kernel.ExecError {
	if m.Arg == "" {
		return &kernel.ExecError{Name: "ShellError", Value: fmt.Sprintf("line %d: `!` needs a command, as in `!ls -l`", m.Line)}
	}
	s.capt.Flush()
	cmd := exec.Command("/bin/sh", "-c", m.Arg)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return &kernel.ExecError{Name: "ShellError", Value: fmt.Sprintf("!%s: %v", m.Arg, err)}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	if ctx.Err() != nil {
		return &kernel.ExecError{Name: kernel.EnameInterrupted, Value: "interrupted", Traceback: []string{fmt.Sprintf("Interrupted: !%s was killed", m.Arg)}}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &kernel.ExecError{Name: "ShellError", Value: fmt.Sprintf("!%s: %s", m.Arg, exit.ProcessState),
			Traceback: []string{fmt.Sprintf("ShellError: line %d: !%s: %s", m.Line, m.Arg, exit.ProcessState)}}
	}
	if err != nil {
		return &kernel.ExecError{Name: "ShellError", Value: fmt.Sprintf("!%s: %v", m.Arg, err)}
	}
	return nil
}

// envMagic is %env: list, show one, or set one variable.
func envMagic(m magic, out kernel.Output) *kernel.ExecError {
	arg := m.Arg
	if arg == "" {
		env := os.Environ()
		sort.Strings(env)
		out.Stream("stdout", strings.Join(env, "\n")+"\n")
		return nil
	}
	name, value, set := strings.Cut(arg, "=")
	if !set {
		name, value, set = strings.Cut(arg, " ")
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if name == "" || strings.ContainsAny(name, " \t=") {
		return &kernel.ExecError{Name: "UsageError", Value: fmt.Sprintf("%%env %s: want %%env, %%env NAME, %%env NAME=VALUE or %%env NAME VALUE", arg)}
	}
	if !set {
		v, ok := os.LookupEnv(name)
		if !ok {
			return &kernel.ExecError{Name: "KeyError", Value: fmt.Sprintf("%%env: %s is not set in the worker's environment", name)}
		}
		out.Stream("stdout", v+"\n")
		return nil
	}
	if err := os.Setenv(name, value); err != nil {
		return &kernel.ExecError{Name: "UsageError", Value: fmt.Sprintf("%%env: setting %s: %v", name, err)}
	}
	out.Stream("stdout", fmt.Sprintf("env: %s=%s\n", name, value))
	return nil
}

// limitMagic is %limit: show or set the worker's memory limit.
func limitMagic(m magic, out kernel.Output) *kernel.ExecError {
	n, set, err := parseLimit(m.Arg)
	if err != nil {
		return &kernel.ExecError{Name: "UsageError", Value: err.Error()}
	}
	if set {
		msg, err := setMemoryLimit(n)
		if err != nil {
			return &kernel.ExecError{Name: "LimitError", Value: err.Error()}
		}
		out.Stream("stdout", msg+"\n")
		return nil
	}
	out.Stream("stdout", describeLimits()+"\n")
	return nil
}

func errResult(name, value string) kernel.ExecuteResult {
	return kernel.ExecuteResult{Err: &kernel.ExecError{Name: name, Value: value, Traceback: []string{name + ": " + value}}}
}

func resultFrom(r kernel.ExecuteResult) resultMsg {
	m := resultMsg{Value: r.Value}
	if r.Err != nil {
		m.Err = &execError{Name: r.Err.Name, Value: r.Err.Value, Traceback: r.Err.Traceback}
	}
	for _, p := range r.Pages {
		m.Pages = append(m.Pages, p)
	}
	return m
}

// cellOutput is the kernel.Output the session writes a cell's output to.
// Every call first drains fds 1 and 2, so that text a cell wrote there
// before a display, an input prompt or the result appears before it.
type cellOutput struct {
	s          *server
	allowStdin bool
}

func (o *cellOutput) Stream(name, text string) {
	o.s.capt.Flush()
	o.s.out.stream(streamIndex(name), []byte(text))
}

func (o *cellOutput) Display(data kernel.MIMEBundle, metadata map[string]any, id string, update bool) {
	o.s.capt.Flush()
	o.s.out.pushJSON(kindDisplay, displayMsg{Data: data, Metadata: metadata, ID: id, Update: update})
}

func (o *cellOutput) ClearOutput(wait bool) {
	o.s.capt.Flush()
	o.s.out.pushJSON(kindClear, clearMsg{Wait: wait})
}

// errNoStdin matches what the kernel says for allow_stdin false.
var errNoStdin = errors.New("worker: input: stdin not allowed by this execute_request (allow_stdin is false)")

func (o *cellOutput) Input(prompt string, password bool) (string, error) {
	if !o.allowStdin {
		return "", errNoStdin
	}
	flushC()
	o.s.capt.Flush()
	o.s.out.pushJSON(kindInputReq, inputReq{Prompt: prompt, Password: password})
	r := <-o.s.inputs
	if r.Err != "" {
		return "", errors.New(r.Err)
	}
	return r.Value, nil
}

func streamIndex(name string) int {
	if name == "stderr" {
		return 1
	}
	return 0
}
