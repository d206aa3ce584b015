package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/worker/internal/cfault"
)

// The test binary is its own worker: with beWorkerEnv set, TestMain serves
// fakeExec over the link instead of running tests.
const beWorkerEnv = "GOTRAIN_WORKER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(beWorkerEnv) == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

func childMain() int {
	if os.Getenv(ClusterEnv) == "mpi" && os.Getenv(FDsEnv) == "" {
		if err := Supervise(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		return 1
	}
	var cfg ServeConfig
	for i := 1; i+1 < len(os.Args); i++ {
		switch os.Args[i] {
		case "--connect":
			cfg.Address = Address(os.Args[i+1])
		case "--memory-limit":
			cfg.MemoryLimit, _ = strconv.ParseInt(os.Args[i+1], 10, 64)
		}
	}
	cfg.Rank = fakeRank()
	cfg.NewExecutor = func() (kernel.Executor, error) {
		if path := os.Getenv(closedFileEnv); path != "" {
			return closingExec{newFakeExec(), path}, nil
		}
		return newFakeExec(), nil
	}
	if err := Serve(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeRank is a fake worker's rank: from its loopback cluster, or from
// mpirun.
func fakeRank() int {
	spec := os.Getenv(ClusterEnv)
	if spec == "mpi" {
		r, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
		return r
	}
	var rank, size int
	var kind, sock string
	fmt.Sscan(spec, &kind, &rank, &size, &sock)
	return rank
}

// fakeExec stands in for the session: each line of a cell is a command.
type fakeExec struct {
	mu        sync.Mutex
	vars      map[string]string
	interrupt chan struct{}
	running   atomic.Bool // as in the session, Interrupt is ignored while false
}

func newFakeExec() *fakeExec {
	return &fakeExec{vars: map[string]string{}, interrupt: make(chan struct{}, 1)}
}

var sink []byte

func overflow(n int) int { return overflow(n+1) + 1 }

func (f *fakeExec) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	select {
	case <-f.interrupt:
	default:
	}
	if strings.HasPrefix(req.Code, "slowstart") {
		time.Sleep(200 * time.Millisecond) // the session setting up the cell
	}
	f.running.Store(true)
	defer f.running.Store(false)
	var res kernel.ExecuteResult
	for i, line := range strings.Split(req.Code, "\n") {
		// "onrank R LINE" runs LINE only on worker R of a Group's cluster.
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "onrank "); ok {
			r, cmdLine, _ := strings.Cut(rest, " ")
			if strconv.Itoa(fakeRank()) != r {
				continue
			}
			line = cmdLine
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch cmd {
		case "", "slowstart":
		case "print": // straight to fd 1
			os.Stdout.WriteString(arg)
		case "eprint":
			os.Stderr.WriteString(arg)
		case "out": // through the session's Output
			out.Stream("stdout", arg)
		case "display":
			out.Display(kernel.MIMEBundle{"text/plain": arg}, nil, "", false)
		case "cprintf":
			cfault.Printf(strings.ReplaceAll(arg, `\n`, "\n"))
		case "lines":
			n, _ := strconv.Atoi(arg)
			for i := range n {
				fmt.Println("line", i)
			}
		case "later": // "later FILE TEXT": a goroutine prints TEXT after the cell ended, then makes FILE
			file, text, _ := strings.Cut(arg, " ")
			go func() {
				time.Sleep(100 * time.Millisecond)
				fmt.Print(text)
				os.WriteFile(file, nil, 0o600)
			}()
		case "set":
			k, v, _ := strings.Cut(arg, "=")
			f.mu.Lock()
			f.vars[k] = v
			f.mu.Unlock()
		case "get":
			f.mu.Lock()
			v, ok := f.vars[arg]
			f.mu.Unlock()
			if !ok {
				return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "NameError", Value: "undefined: " + arg}}
			}
			res.Value = kernel.MIMEBundle{"text/plain": v}
		case "env":
			res.Value = kernel.MIMEBundle{"text/plain": os.Getenv(arg)}
		case "panic": // as the session shows a cell's panic at line i+1
			return kernel.ExecuteResult{Err: fakePanic(arg, i+1)}
		case "exitif": // "exitif FILE": the process exits if FILE exists
			if _, err := os.Stat(arg); err == nil {
				os.Exit(5)
			}
		case "need": // "need FILE": panics unless FILE exists
			if _, err := os.Stat(arg); err != nil {
				return kernel.ExecuteResult{Err: fakePanic(err.Error(), i+1)}
			}
		case "input":
			v, err := out.Input(arg, false)
			if err != nil {
				return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "InputError", Value: err.Error()}}
			}
			res.Value = kernel.MIMEBundle{"text/plain": v}
		case "sleep":
			select {
			case <-f.interrupt:
				// The session's context must stay alive: an interrupt
				// reaches a safe point, it does not cancel the cell.
				if ctx.Err() != nil {
					return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "ContextCancelled", Value: "an interrupt cancelled the session's context"}}
				}
				return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted"}}
			case <-time.After(30 * time.Second):
			}
		case "overflow":
			overflow(0)
		case "oom":
			sink = make([]byte, 1<<40)
		case "alloc":
			n, _ := ParseSize(arg)
			sink = make([]byte, n)
			for i := 0; i < len(sink); i += 4096 {
				sink[i] = 1
			}
		case "exit":
			n, _ := strconv.Atoi(arg)
			os.Exit(n)
		case "kill":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		case "stuck": // a cell no interrupt stops
			time.Sleep(30 * time.Second)
		case "freeze": // alive, its link open, answering nothing: a lost host
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		case "abort":
			cfault.Abort()
		case "segv":
			cfault.Segv()
		default:
			res.Value = kernel.MIMEBundle{"text/plain": line}
		}
	}
	return res
}

// fakePanic is the error the session makes of a panic at a cell's line.
func fakePanic(value string, line int) *kernel.ExecError {
	return &kernel.ExecError{Name: "Panic", Value: value,
		Traceback: []string{"panic: " + value, "  main.cell()", fmt.Sprintf("      cell:%d", line)}}
}

func (f *fakeExec) Complete(code string, pos int) kernel.CompleteResult {
	return kernel.CompleteResult{Matches: []string{code + "_done"}, CursorStart: 0, CursorEnd: pos}
}

func (f *fakeExec) Inspect(code string, pos, level int) kernel.InspectResult {
	return kernel.InspectResult{Found: true, Data: kernel.MIMEBundle{"text/plain": "doc of " + code}}
}

func (f *fakeExec) IsComplete(code string) kernel.IsCompleteResult {
	if strings.HasSuffix(code, "{") {
		return kernel.IsCompleteResult{Status: "incomplete", Indent: "\t"}
	}
	return kernel.IsCompleteResult{Status: "complete"}
}

func (f *fakeExec) Running() bool { return f.running.Load() }

// GoGet and ModuleFile make the fake a session with a go.mod, which %go
// calls: a module got is the variable gomod, the go.mod is the
// repository's.
func (f *fakeExec) GoGet(module string) error {
	if strings.HasPrefix(module, "bad") {
		return errors.New("go get " + module + ": no such module")
	}
	f.mu.Lock()
	f.vars["gomod"] = module
	f.mu.Unlock()
	return nil
}

func (f *fakeExec) ModuleFile() string { return "../go.mod" }

func (f *fakeExec) Interrupt() {
	if !f.running.Load() {
		return
	}
	select {
	case f.interrupt <- struct{}{}:
	default:
	}
}

// recorder is a kernel.Output that keeps what a cell showed, in order.
type recorder struct {
	mu     sync.Mutex
	events []string // "stdout:text", "stderr:text", "display:text", "clear"
	input  func(prompt string) (string, error)
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Adjacent stream text is one stream as a notebook shows it.
	if n := len(r.events); n > 0 {
		for _, s := range []string{"stdout:", "stderr:"} {
			if strings.HasPrefix(e, s) && strings.HasPrefix(r.events[n-1], s) {
				r.events[n-1] += strings.TrimPrefix(e, s)
				return
			}
		}
	}
	r.events = append(r.events, e)
}

func (r *recorder) Stream(name, text string) { r.add(name + ":" + text) }
func (r *recorder) Display(data kernel.MIMEBundle, _ map[string]any, _ string, _ bool) {
	r.add(fmt.Sprintf("display:%v", data["text/plain"]))
}
func (r *recorder) ClearOutput(bool) { r.add("clear") }
func (r *recorder) Input(prompt string, _ bool) (string, error) {
	if r.input == nil {
		return "", fmt.Errorf("no input")
	}
	return r.input(prompt)
}

func (r *recorder) text(stream string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		if t, ok := strings.CutPrefix(e, stream+":"); ok {
			b.WriteString(t)
		}
	}
	return b.String()
}

// newTestClient starts a Client whose workers are this test binary.
func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	cfg.Command = []string{os.Args[0]}
	cfg.Env = append(cfg.Env, beWorkerEnv+"=1")
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(t *testing.T, c *Client, code string) (kernel.ExecuteResult, *recorder) {
	t.Helper()
	out := &recorder{}
	res := c.Execute(context.Background(), kernel.ExecuteRequest{Code: code, AllowStdin: true}, out)
	return res, out
}

func mustRun(t *testing.T, c *Client, code string) (string, *recorder) {
	t.Helper()
	res, out := run(t, c, code)
	if res.Err != nil {
		t.Fatalf("cell %q: %s: %s\n%s", code, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
	}
	v, _ := res.Value["text/plain"].(string)
	return v, out
}

func TestOutputInOrder(t *testing.T) {
	c := newTestClient(t, Config{})
	// Text written to fd 1 before a display or a write through the
	// session's Output comes before it.
	// C's stdout is line-buffered, so a whole line of printf comes in
	// order too.
	_, out := mustRun(t, c, "print a\nout b\ndisplay c\nprint d\ncprintf e\\n\nprint f\neprint g\n")
	want := []string{"stdout:ab", "display:c", "stdout:de\nf", "stderr:g"}
	if got := out.events; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

func TestCPrintfWithoutNewline(t *testing.T) {
	c := newTestClient(t, Config{})
	// C keeps text without a newline in its buffer; the cell's end
	// flushes it into the cell that printed it.
	_, out := mustRun(t, c, "cprintf no newline")
	if got := out.text("stdout"); got != "no newline" {
		t.Errorf("stdout = %q, want %q", got, "no newline")
	}
}

func TestManyLinesInOrder(t *testing.T) {
	c := newTestClient(t, Config{})
	const n = 20000
	_, out := mustRun(t, c, "lines "+strconv.Itoa(n))
	lines := strings.Split(strings.TrimSuffix(out.text("stdout"), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("got %d lines, want %d", len(lines), n)
	}
	for i, ln := range lines {
		if want := "line " + strconv.Itoa(i); ln != want {
			t.Fatalf("line %d = %q, want %q", i, ln, want)
		}
	}
}

// printLater runs a cell whose goroutine prints text after the cell ended,
// and waits until it has.
func printLater(t *testing.T, c *Client, text string) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "printed")
	mustRun(t, c, "later "+mark+" "+text)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			return
		}
	}
	t.Fatal("the goroutine never printed")
}

func TestOutputBetweenCells(t *testing.T) {
	c := newTestClient(t, Config{})
	printLater(t, c, "from a goroutine")
	_, out := mustRun(t, c, "out next")
	if got, want := out.text("stdout"), "from a goroutinenext"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// TestWorkerDeath is the heart of the package: each way a process can die
// becomes the cell's error, and the next cell runs in a fresh worker that
// says the state is gone.
func TestWorkerDeath(t *testing.T) {
	tests := []struct {
		name, cell string
		want       []string // substrings of the error's value
	}{
		{"stack overflow", "overflow", []string{"exit status 2", "fatal error: stack overflow"}},
		{"refused allocation", "oom", []string{"exit status 2", "out of memory"}},
		{"os.Exit", "exit 3", []string{"exit status 3"}},
		{"SIGKILL", "kill", []string{"killed by signal 9 (SIGKILL)"}},
		{"abort in C", "abort", []string{"exit status 2", "SIGABRT"}},
		{"SIGSEGV in C", "segv", []string{"exit status 2", "SIGSEGV"}},
	}
	c := newTestClient(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustRun(t, c, "set x=1")
			res, _ := run(t, c, "print before\n"+tt.cell)
			if res.Err == nil || res.Err.Name != "WorkerExited" {
				t.Fatalf("cell %q: got %+v, want a WorkerExited error", tt.cell, res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Err.Value, w) {
					t.Errorf("error value %q does not say %q\ntraceback:\n%s", res.Err.Value, w, strings.Join(res.Err.Traceback, "\n"))
				}
			}
			// The fresh worker has none of the old state, and says so once.
			res, out := run(t, c, "get x")
			if res.Err == nil || res.Err.Name != "NameError" {
				t.Errorf("get x after the crash: %+v, want NameError from a fresh session", res)
			}
			if got := out.text("stderr"); !strings.Contains(got, "fresh session") {
				t.Errorf("the next cell's stderr = %q, want the notice that the session is fresh", got)
			}
			if _, out := mustRun(t, c, "out again"); strings.Contains(out.text("stderr"), "fresh session") {
				t.Errorf("the notice was repeated: %q", out.text("stderr"))
			}
		})
	}
}

func TestRequestsWhileDying(t *testing.T) {
	c := newTestClient(t, Config{})
	mustRun(t, c, "set x=1")
	done := make(chan kernel.ExecuteResult)
	go func() {
		res, _ := run(t, c, "sleep\nkill")
		done <- res
	}()
	time.Sleep(200 * time.Millisecond)
	c.Interrupt()
	<-done
	// Whatever state the worker is in, every request gets an answer.
	if got := c.Complete("fm", 2); len(got.Matches) != 1 || got.Matches[0] != "fm_done" {
		t.Errorf("Complete = %+v, want fm_done from the worker", got)
	}
	if got := c.IsComplete("for {"); got.Status != "incomplete" {
		t.Errorf("IsComplete = %+v", got)
	}
	if got := c.Inspect("x", 1, 0); !got.Found {
		t.Errorf("Inspect = %+v", got)
	}
}

func TestInterruptAndInput(t *testing.T) {
	c := newTestClient(t, Config{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		c.Interrupt()
	}()
	res, _ := run(t, c, "sleep")
	if res.Err == nil || res.Err.Name != "Interrupted" {
		t.Fatalf("sleep: got %+v, want Interrupted", res)
	}
	out := &recorder{input: func(prompt string) (string, error) { return "answer to " + prompt, nil }}
	res = c.Execute(context.Background(), kernel.ExecuteRequest{Code: "input name?", AllowStdin: true}, out)
	if got, _ := res.Value["text/plain"].(string); got != "answer to name?" {
		t.Errorf("input: got %+v", res)
	}
	res = c.Execute(context.Background(), kernel.ExecuteRequest{Code: "input name?"}, &recorder{})
	if res.Err == nil || !strings.Contains(res.Err.Value, "allow_stdin") {
		t.Errorf("input without stdin: %+v, want an error naming allow_stdin", res)
	}
}

func TestMagics(t *testing.T) {
	c := newTestClient(t, Config{})
	if _, out := mustRun(t, c, "!echo from the shell; echo to stderr >&2"); out.text("stdout") != "from the shell\n" || out.text("stderr") != "to stderr\n" {
		t.Errorf("!echo: %q", out.events)
	}
	res, _ := run(t, c, "!exit 7")
	if res.Err == nil || res.Err.Name != "ShellError" || !strings.Contains(res.Err.Value, "exit status 7") {
		t.Errorf("!exit 7: %+v, want a ShellError naming exit status 7", res)
	}
	if _, out := mustRun(t, c, "%env GOTRAIN_MAGIC_TEST=on"); out.text("stdout") != "env: GOTRAIN_MAGIC_TEST=on\n" {
		t.Errorf("%%env set: %q", out.events)
	}
	if v, _ := mustRun(t, c, "env GOTRAIN_MAGIC_TEST"); v != "on" {
		t.Errorf("the cell sees GOTRAIN_MAGIC_TEST=%q, want on", v)
	}
	if _, out := mustRun(t, c, "!echo $GOTRAIN_MAGIC_TEST"); out.text("stdout") != "on\n" {
		t.Errorf("a shell command sees %q, want on", out.text("stdout"))
	}
	if v, _ := mustRun(t, c, "env "+TokenEnv); v != "" {
		t.Errorf("the worker's token is visible to cells")
	}
	if _, out := mustRun(t, c, "%time\nout x"); !strings.Contains(out.text("stdout"), "CPU times: user") || !strings.Contains(out.text("stdout"), "Wall time:") {
		t.Errorf("%%time: %q", out.events)
	}
	res, _ = run(t, c, "%timeit\nout x")
	if res.Err == nil || res.Err.Name != "UnknownMagic" || !strings.Contains(res.Err.Value, "%timeit") || !strings.Contains(res.Err.Value, "%reset") {
		t.Errorf("%%timeit: %+v, want UnknownMagic naming it and listing the magics", res)
	}
	if _, out := mustRun(t, c, "%go get example.com/m@v1.2.0"); out.text("stdout") != "go get example.com/m@v1.2.0: done\n" {
		t.Errorf("%%go get: %q", out.events)
	}
	if v, _ := mustRun(t, c, "get gomod"); v != "example.com/m@v1.2.0" {
		t.Errorf("the session was asked to get %q, want example.com/m@v1.2.0", v)
	}
	if _, out := mustRun(t, c, "%go mod"); !strings.HasPrefix(out.text("stdout"), "module github.com/gotrain/gotrain\n") {
		t.Errorf("%%go mod: %q", out.events)
	}
	if res, _ := run(t, c, "%go get bad/module"); res.Err == nil || res.Err.Name != "GoGetError" || res.Err.Value != "go get bad/module: no such module" {
		t.Errorf("%%go get of a bad module: %+v, want its GoGetError", res.Err)
	}
	if res, _ := run(t, c, "%go  list  all"); res.Err == nil || res.Err.Name != "UsageError" || res.Err.Value != "want %go get MODULE[@VERSION] or %go mod, got %go list  all" {
		t.Errorf("%%go list all: %+v, want the usage", res.Err)
	}
	if _, out := mustRun(t, c, "%help"); !strings.Contains(strings.Join(out.events, ""), "%reset") {
		t.Errorf("%%help: %q", out.events)
	}
	mustRun(t, c, "set x=1")
	if _, out := mustRun(t, c, "%reset"); !strings.Contains(out.text("stdout"), "reset") {
		t.Errorf("%%reset: %q", out.events)
	}
	res, out := run(t, c, "get x")
	if res.Err == nil || res.Err.Name != "NameError" {
		t.Errorf("get x after %%reset: %+v, want NameError", res)
	}
	if strings.Contains(out.text("stderr"), "fresh session") {
		t.Errorf("a reset asked for is not a lost session: %q", out.text("stderr"))
	}
}

func TestMemoryLimit(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit an address-space limit")
	}
	c := newTestClient(t, Config{})
	if _, out := mustRun(t, c, "%limit memory 512MiB"); !strings.Contains(out.text("stdout"), "512MiB") {
		t.Errorf("%%limit: %q", out.events)
	}
	res, _ := run(t, c, "alloc 1GiB")
	if res.Err == nil || res.Err.Name != "WorkerExited" || !strings.Contains(res.Err.Value, "out of memory") {
		t.Fatalf("alloc past the limit: %+v, want WorkerExited out of memory", res)
	}
	// The fresh worker starts with the same limit.
	if _, out := mustRun(t, c, "%limit"); !strings.Contains(out.text("stdout"), "512MiB") {
		t.Errorf("the limit after a restart: %q", out.events)
	}
	mustRun(t, c, "alloc 256MiB")
}

func TestOrphanExits(t *testing.T) {
	c := newTestClient(t, Config{})
	mustRun(t, c, "out up")
	p := c.mu.w
	pid := p.cmd.Process.Pid
	// The kernel vanishing looks like this to the worker: its link closes
	// with no shutdown frame.
	p.stopping.Store(true)
	p.linkMu.Lock()
	p.link.close()
	p.linkMu.Unlock()
	select {
	case <-p.dead:
	case <-time.After(10 * time.Second):
		t.Fatalf("worker %d still runs 10 s after its link closed", pid)
	}
	if !p.cmd.ProcessState.Exited() {
		t.Errorf("the orphan did not exit by itself: %s", p.cmd.ProcessState)
	}
}

func TestRefusesWrongToken(t *testing.T) {
	c := newTestClient(t, Config{Listen: "tcp:127.0.0.1:0"})
	network, addr, _ := c.Address().split()
	// A silent peer, a peer that does not speak TLS, and one that does but
	// names no waiting worker hold no slot and get nothing back.
	silent, err := dialTimeout(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	plain, err := dialTimeout(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	newLink(plain).sendJSON(kindHello, helloMsg{ID: "00", Nonce: make([]byte, 32)})
	plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := newLink(plain).read(); err == nil {
		t.Errorf("a peer without TLS got a frame back")
	}
	raw, err := dialTimeout(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	wrong := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	defer wrong.Close()
	l := newLink(wrong)
	l.sendJSON(kindHello, helloMsg{ID: "0123456789abcdef", Nonce: make([]byte, 32)})
	wrong.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := l.read(); err == nil {
		t.Errorf("a hello naming no waiting worker got a frame back")
	}
	if v, _ := mustRun(t, c, "over tcp"); v != "over tcp" {
		t.Errorf("the real worker over TCP: %q", v)
	}
}

func dialTimeout(network, addr string) (net.Conn, error) {
	return net.DialTimeout(network, addr, 5*time.Second)
}

func TestSilentCellKeepsGoroutineOutput(t *testing.T) {
	c := newTestClient(t, Config{})
	printLater(t, c, "from a goroutine")
	// A silent request (user_expressions, a front end's probe) shows
	// nothing, its own output included; what a goroutine printed before it
	// waits for a cell that shows output.
	if res := c.Execute(context.Background(), kernel.ExecuteRequest{Code: "print silent", Silent: true}, &recorder{}); res.Err != nil {
		t.Fatal(res.Err)
	}
	_, out := mustRun(t, c, "out next")
	if got, want := out.text("stdout"), "from a goroutinenext"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// TestInterruptBeforeTheSessionRuns sends the interrupt right behind the
// execute frame, before the session has taken the cell: it must still stop
// that cell, not vanish.
func TestInterruptBeforeTheSessionRuns(t *testing.T) {
	c := newTestClient(t, Config{})
	mustRun(t, c, "out ready")
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.Interrupt()
	}()
	res, _ := run(t, c, "slowstart\nsleep")
	if res.Err == nil || res.Err.Name != "Interrupted" {
		t.Fatalf("got %+v, want the cell Interrupted", res)
	}
}
