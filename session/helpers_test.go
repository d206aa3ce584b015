package session

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/kernel"
)

// recorder is a kernel.Output that keeps what a cell showed.
type recorder struct {
	mu       sync.Mutex
	stdout   strings.Builder
	stderr   strings.Builder
	displays []kernel.MIMEBundle
	clears   int
	inputs   []string // lines Input returns, in order
	onStream func(name, text string)
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	if name == "stdout" {
		r.stdout.WriteString(text)
	} else {
		r.stderr.WriteString(text)
	}
	f := r.onStream
	r.mu.Unlock()
	if f != nil {
		f(name, text)
	}
}

func (r *recorder) Display(data kernel.MIMEBundle, _ map[string]any, _ string, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.displays = append(r.displays, data)
}

func (r *recorder) ClearOutput(bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clears++
}

func (r *recorder) Input(string, bool) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.inputs) == 0 {
		return "", errors.New("no input")
	}
	line := r.inputs[0]
	r.inputs = r.inputs[1:]
	return line, nil
}

func (r *recorder) Stdout() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stdout.String()
}

func (r *recorder) Stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

func newSession(t testing.TB) *Session {
	t.Helper()
	s, err := New(Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run executes code and returns the result and what it printed. Cells
// print to os.Stdout and os.Stderr, which the worker captures at fd level;
// here they are swapped for pipes while the cell runs.
func run(t testing.TB, s *Session, code string) (kernel.ExecuteResult, *recorder) {
	t.Helper()
	return runWith(t, s, code, &recorder{})
}

func runWith(t testing.TB, s *Session, code string, rec *recorder) (kernel.ExecuteResult, *recorder) {
	t.Helper()
	stdout, stderr := capture(t, &os.Stdout, "stdout", rec), capture(t, &os.Stderr, "stderr", rec)
	res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: code}, rec)
	stdout()
	stderr()
	return res, rec
}

// capture points *f at a pipe whose text goes to rec as stream name,
// until the returned function restores *f and drains the pipe.
func capture(t testing.TB, f **os.File, name string, rec *recorder) func() {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := *f
	*f = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				rec.Stream(name, string(buf[:n]))
			}
			if err != nil {
				return
			}
		}
	}()
	return func() {
		*f = old
		w.Close()
		<-done
		r.Close()
	}
}

// mustRun executes code, fails on an error and returns the value's text.
func mustRun(t testing.TB, s *Session, code string) string {
	t.Helper()
	res, rec := run(t, s, code)
	if res.Err != nil {
		t.Fatalf("cell %q: %s: %s\n%s\nstdout: %s", code, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"), rec.Stdout())
	}
	return text(res)
}

func text(res kernel.ExecuteResult) string {
	if res.Value == nil {
		return ""
	}
	s, _ := res.Value["text/plain"].(string)
	return s
}

// mustRunValue executes code, fails on an error and returns the value.
func mustRunValue(t testing.TB, s *Session, code string) kernel.MIMEBundle {
	t.Helper()
	res, _ := run(t, s, code)
	if res.Err != nil {
		t.Fatalf("cell %q: %s: %s", code, res.Err.Name, res.Err.Value)
	}
	return res.Value
}
