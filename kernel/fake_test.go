package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

// wait is how long a test waits for something that should happen; it is
// generous because -race on a shared two-core machine is slow. Nothing
// asserts on elapsed time.
const wait = 10 * time.Second

// floodLines is how many 64 KiB lines the "flood" cell prints.
const floodLines = 640

// floodWait bounds the "flood" cell's request: its 40 MiB of streams took
// 3.4 s under -race on the two-core machine at a load of 5, and more than
// wait at a load of 13 (another package's -race tests beside it). The
// bound only tells a kernel that stopped serving from a slow one.
const floodWait = 6 * wait

// quiet is how long a test waits to be fairly sure something does not
// happen (a reply to a forged message).
const quiet = 300 * time.Millisecond

// fakeExec is an Executor driven by a table of cells. Cells not in the
// table succeed silently.
type fakeExec struct {
	interrupt chan struct{} // one token per Interrupt call
	gate      chan struct{} // the "gate" cell waits for it to close

	mu       sync.Mutex
	requests []kernel.ExecuteRequest
}

func newFakeExec() *fakeExec {
	return &fakeExec{interrupt: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (f *fakeExec) Requests() []kernel.ExecuteRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]kernel.ExecuteRequest(nil), f.requests...)
}

var cellError = &kernel.ExecError{Name: "CompileError", Value: "1:1: undefined: x", Traceback: []string{"cell line 1: undefined: x"}}

func (f *fakeExec) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	switch req.Code {
	case "print":
		out.Stream("stdout", "hello\n")
		return kernel.ExecuteResult{Value: kernel.MIMEBundle{"text/plain": "42"}}
	case "1+1":
		return kernel.ExecuteResult{Value: kernel.MIMEBundle{"text/plain": "2"}}
	case "page":
		return kernel.ExecuteResult{Pages: []kernel.MIMEBundle{{"text/plain": "func Println(a ...any)"}}}
	case "fail", "x":
		return kernel.ExecuteResult{Err: cellError}
	case "display":
		out.Display(kernel.MIMEBundle{"text/plain": "0%"}, nil, "bar", false)
		out.Display(kernel.MIMEBundle{"text/plain": "100%"}, map[string]any{"k": "v"}, "bar", true)
		out.ClearOutput(true)
		out.Stream("stderr", "done\n")
	case "input":
		v, err := out.Input("name? ", false)
		if err != nil {
			return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "InputError", Value: err.Error()}}
		}
		out.Stream("stdout", "hi "+v)
	case "block":
		out.Stream("stdout", "started\n")
		select {
		case <-f.interrupt:
			return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted"}}
		case <-ctx.Done():
			return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "Cancelled", Value: ctx.Err().Error()}}
		}
	case "gate":
		select {
		case <-f.gate:
		case <-ctx.Done():
		}
		return kernel.ExecuteResult{Err: cellError}
	case "gate-ok":
		select {
		case <-f.gate:
		case <-ctx.Done():
		}
	case "panic":
		panic("boom")
	case "flood":
		// 40 MiB of output, far more than a subscriber that never reads
		// holds in its socket buffers.
		line := strings.Repeat("x", 64<<10-1) + "\n"
		for range floodLines {
			out.Stream("stdout", line)
		}
	}
	return kernel.ExecuteResult{}
}

func (f *fakeExec) Complete(code string, cursorPos int) kernel.CompleteResult {
	if strings.HasPrefix(code, "fmt.Pr") {
		return kernel.CompleteResult{Matches: []string{"fmt.Printf", "fmt.Println"}, CursorStart: 0, CursorEnd: cursorPos}
	}
	return kernel.CompleteResult{CursorStart: cursorPos, CursorEnd: cursorPos}
}

func (f *fakeExec) Inspect(code string, cursorPos, detailLevel int) kernel.InspectResult {
	if strings.Contains(code, "Println") {
		return kernel.InspectResult{Found: true, Data: kernel.MIMEBundle{"text/plain": "func fmt.Println(a ...any) (n int, err error)"}}
	}
	return kernel.InspectResult{}
}

func (f *fakeExec) IsComplete(code string) kernel.IsCompleteResult {
	switch {
	case strings.HasSuffix(code, "{"):
		return kernel.IsCompleteResult{Status: "incomplete", Indent: "\t"}
	case strings.HasSuffix(code, ")"):
		return kernel.IsCompleteResult{Status: "invalid"}
	case code == "":
		return kernel.IsCompleteResult{}
	}
	return kernel.IsCompleteResult{Status: "complete"}
}

func (f *fakeExec) Interrupt() {
	select {
	case f.interrupt <- struct{}{}:
	default:
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a running kernel with a connected, ready client.
type harness struct {
	t      *testing.T
	k      *kernel.Kernel
	c      *kerneltest.Client
	exec   *fakeExec
	log    *syncBuffer
	runErr chan error
	once   sync.Once
}

func endpoints(ci kernel.ConnectionInfo) kerneltest.Endpoints {
	return kerneltest.Endpoints{
		IP: ci.IP, ShellPort: ci.ShellPort, ControlPort: ci.ControlPort, StdinPort: ci.StdinPort,
		IOPubPort: ci.IOPubPort, HBPort: ci.HBPort, Key: ci.Key,
	}
}

// start runs a kernel on free ports of 127.0.0.1 and connects a client.
// edit, when non-nil, adjusts the configuration first.
func start(t *testing.T, edit func(*kernel.Config)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	cfg := kernel.Config{
		Connection: kernel.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: testKey, SignatureScheme: "hmac-sha256"},
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	h := &harness{t: t, exec: newFakeExec(), log: logs, runErr: make(chan error, 1)}
	k, err := kernel.New(cfg, h.exec)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.k = k
	go func() { h.runErr <- k.Run(context.Background()) }()
	c, err := kerneltest.Dial(endpoints(k.Connection()))
	if err != nil {
		k.Close()
		t.Fatalf("Dial: %v", err)
	}
	h.c = c
	t.Cleanup(h.stop)
	if err := c.Ready(wait); err != nil {
		t.Fatalf("%v\nkernel log:\n%s", err, logs)
	}
	return h
}

// stop closes client and kernel and checks Run's result, once.
func (h *harness) stop() { h.once.Do(h.stop1) }

func (h *harness) stop1() {
	h.c.Close()
	if err := h.k.Close(); err != nil {
		h.t.Errorf("Close: %v", err)
	}
	select {
	case err := <-h.runErr:
		if !errors.Is(err, kernel.ErrClosed) {
			h.t.Errorf("Run = %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		h.t.Errorf("Run did not return after Close")
	}
	if errs := h.c.DecodeErrors(); len(errs) > 0 {
		h.t.Errorf("client could not decode kernel messages: %v", errs)
	}
}

// startCell sends an execute_request of code (one of fakeExec's) and
// returns its message id once an iopub message of type until ("stream",
// "execute_input") has come for it.
func (h *harness) startCell(code, until string) string {
	h.t.Helper()
	id, err := h.c.Send(kerneltest.Shell, "execute_request", map[string]any{"code": code})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.c.WaitIOPub(id, wait, func(ms []*kerneltest.Msg) bool { return strings.Contains(types(ms), until) }); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// request sends msgType on ch and returns the reply and the request's
// iopub messages up to its idle status.
func (h *harness) request(ch kerneltest.Channel, msgType string, content any) (*kerneltest.Msg, []*kerneltest.Msg) {
	h.t.Helper()
	return h.requestWithin(ch, msgType, content, wait)
}

// requestWithin is request with its own bound on the reply and on the
// idle status that follows it.
func (h *harness) requestWithin(ch kerneltest.Channel, msgType string, content any, wait time.Duration) (*kerneltest.Msg, []*kerneltest.Msg) {
	h.t.Helper()
	id, err := h.c.Send(ch, msgType, content)
	if err != nil {
		h.t.Fatalf("send %s: %v", msgType, err)
	}
	reply, err := h.c.ReplyTo(ch, id, wait)
	if err != nil {
		h.t.Fatalf("%s: %v\nkernel log:\n%s", msgType, err, h.log)
	}
	io, err := h.c.WaitIdle(id, wait)
	if err != nil {
		h.t.Fatalf("%s: %v", msgType, err)
	}
	return reply, io
}

// types lists msg types, with the execution_state of status messages, so
// that one string comparison checks an iopub sequence.
func types(ms []*kerneltest.Msg) string {
	var parts []string
	for _, m := range ms {
		s := m.Type()
		if s == "status" {
			s += ":" + m.Content["execution_state"].(string)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago: all n listeners are open at once so the ports differ.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}
