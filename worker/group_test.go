package worker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// newTestGroup starts a Group whose workers are this test binary (fakeExec,
// which joins no cluster: these tests are about the kernel's side).
func newTestGroup(t *testing.T) *Group {
	t.Helper()
	g, err := NewGroup(Config{Command: []string{os.Args[0]}, Env: []string{beWorkerEnv + "=1"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func runGroup(g *Group, code string, out *recorder) kernel.ExecuteResult {
	return g.Execute(context.Background(), kernel.ExecuteRequest{Code: code, AllowStdin: true}, out)
}

// TestGroup drives %workers through its cases: worker 0's output alone,
// a failure on another worker alone, shared input, a worker that dies,
// restart and off.
func TestGroup(t *testing.T) {
	g := newTestGroup(t)
	out := &recorder{}
	if res := runGroup(g, "%workers 3", out); res.Err != nil {
		t.Fatalf("%%workers 3: %v", res.Err)
	}
	if !strings.Contains(out.text("stdout"), "3 workers") {
		t.Errorf("%%workers 3 said %q", out.text("stdout"))
	}

	// Each worker runs the cell; worker 0's output is the cell's.
	out = &recorder{}
	res := runGroup(g, "out hello\nenv "+ClusterEnv, out)
	if res.Err != nil || out.text("stdout") != "hello" {
		t.Fatalf("a cell on 3 workers: %v, output %q", res.Err, out.text("stdout"))
	}
	if v := res.Value["text/plain"].(string); !strings.HasPrefix(v, "loopback 0 3 ") {
		t.Errorf("the cell's value is %q, want worker 0's cluster", v)
	}

	// One line of input, read by worker 0 from the front end, reaches all.
	out = &recorder{input: func(string) (string, error) { return "42", nil }}
	res = runGroup(g, "input n?\nonrank 2 get nothing", out)
	if res.Err == nil || res.Err.Name != "Diverged" {
		t.Fatalf("a cell failing on worker 2 alone: %+v", res.Err)
	}
	if !strings.Contains(res.Err.Value, "worker 2 failed (NameError: undefined: nothing)") {
		t.Errorf("Diverged says %q", res.Err.Value)
	}

	// Another worker asking for more input than worker 0 read fails
	// instead of waiting for ever.
	res = runGroup(g, "onrank 1 input more?", &recorder{})
	if res.Err == nil || res.Err.Name != "Diverged" || !strings.Contains(res.Err.Value, "worker 0 read no more input") {
		t.Errorf("input on worker 1 alone: %+v", res.Err)
	}

	// A failure everywhere is worker 0's, noting the others.
	res = runGroup(g, "get nothing", &recorder{})
	if res.Err == nil || res.Err.Name != "NameError" || !strings.Contains(res.Err.Value, "(also on workers 1, 2)") {
		t.Errorf("a failure on every worker: %+v", res.Err)
	}

	// A worker that dies stops them all, promptly, naming it.
	start := time.Now()
	res = runGroup(g, "onrank 1 kill\nsleep", &recorder{})
	if res.Err == nil || res.Err.Name != "WorkerLost" || !strings.Contains(res.Err.Value, "worker 1 of 3") {
		t.Fatalf("a worker killed: %+v", res.Err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("WorkerLost took %v", d)
	}
	if res := runGroup(g, "out after", &recorder{}); res.Err == nil || res.Err.Name != "WorkersStopped" {
		t.Errorf("a cell after a lost worker: %+v", res.Err)
	}
	out = &recorder{}
	if res := runGroup(g, "%workers restart\nout again", out); res.Err != nil || !strings.HasSuffix(out.text("stdout"), "again") {
		t.Errorf("%%workers restart: %+v, output %q", res.Err, out.text("stdout"))
	}
	out = &recorder{}
	if res := runGroup(g, "%workers off\nenv "+ClusterEnv, out); res.Err != nil || res.Value["text/plain"] != "" {
		t.Errorf("%%workers off: %+v, cluster %q", res.Err, res.Value["text/plain"])
	}
	if res := runGroup(g, "%workers zero", &recorder{}); res.Err == nil || res.Err.Name != "UsageError" {
		t.Errorf("%%workers zero: %+v", res.Err)
	}
}
