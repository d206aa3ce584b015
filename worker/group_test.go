package worker

import (
	"context"
	"os"
	"os/exec"
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

// TestGroupMPI drives %workers -np: the workers mpirun starts attach to the
// kernel with the job's token and their ranks; a rank that dies is named,
// with mpirun's word, and restart starts a fresh job.
func TestGroupMPI(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun is not installed (install/setup.sh installs openmpi-bin)")
	}
	g := newTestGroup(t)
	out := &recorder{}
	if res := runGroup(g, "%workers -np 2", out); res.Err != nil {
		t.Fatalf("%%workers -np 2: %v", res.Err)
	}
	if !strings.Contains(out.text("stdout"), "2 workers under mpirun on this machine") {
		t.Errorf("%%workers -np 2 said %q", out.text("stdout"))
	}
	out = &recorder{}
	res := runGroup(g, "out hello\nenv "+ClusterEnv, out)
	if res.Err != nil || out.text("stdout") != "hello" || res.Value["text/plain"] != "mpi" {
		t.Fatalf("a cell on 2 ranks: %v, output %q, cluster %q", res.Err, out.text("stdout"), res.Value["text/plain"])
	}
	res = runGroup(g, "onrank 1 get nothing", &recorder{})
	if res.Err == nil || res.Err.Name != "Diverged" || !strings.Contains(res.Err.Value, "worker 1 failed") {
		t.Fatalf("a cell failing on rank 1 alone: %+v", res.Err)
	}

	// A spec that cannot start leaves the running workers alone.
	for _, tc := range []struct{ arg, want string }{
		{"-np 2 --hostfile /nonexistent/hosts", "/nonexistent/hosts: no such file"},
		{"-np 0", "want N ≥ 1, got 0"},
		{"-np 2 --bogus", "flag provided but not defined: -bogus"},
		{"-np 2 extra", `unexpected "extra"`},
	} {
		res := runGroup(g, "%workers "+tc.arg, &recorder{})
		if res.Err == nil || !strings.Contains(res.Err.Value, tc.want) {
			t.Errorf("%%workers %s: %+v, want an error saying %q", tc.arg, res.Err, tc.want)
		}
	}
	out = &recorder{}
	if res := runGroup(g, "out still", out); res.Err != nil || out.text("stdout") != "still" {
		t.Fatalf("after refused specs: %+v, output %q", res.Err, out.text("stdout"))
	}

	// Rank 1 killed mid-cell: mpirun names it, and ends the job.
	start := time.Now()
	res = runGroup(g, "onrank 1 kill\nsleep", &recorder{})
	if res.Err == nil || res.Err.Name != "WorkerLost" || !strings.Contains(res.Err.Value, "worker 1 of 2") ||
		!strings.Contains(res.Err.Value, "mpirun") || !strings.Contains(res.Err.Value, "rank 1") {
		t.Fatalf("rank 1 killed: %+v", res.Err)
	}
	t.Logf("rank 1 killed: %s", res.Err.Value)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("WorkerLost took %v, want under 10 s", d)
	}
	if res := runGroup(g, "out after", &recorder{}); res.Err == nil || res.Err.Name != "WorkersStopped" {
		t.Errorf("a cell after a lost rank: %+v", res.Err)
	}
	out = &recorder{}
	if res := runGroup(g, "%workers restart\nout again", out); res.Err != nil || !strings.HasSuffix(out.text("stdout"), "again") {
		t.Fatalf("%%workers restart: %+v, output %q", res.Err, out.text("stdout"))
	}
	if !strings.Contains(out.text("stdout"), "under mpirun") {
		t.Errorf("%%workers restart after -np restarted %q", out.text("stdout"))
	}

	// A rank that stops answering (its host lost: the process frozen, its
	// link open) is counted lost within seconds, though mpirun sees nothing.
	start = time.Now()
	res = runGroup(g, "onrank 1 freeze\nsleep", &recorder{})
	if res.Err == nil || res.Err.Name != "WorkerLost" || !strings.Contains(res.Err.Value, "worker 1 of 2") || !strings.Contains(res.Err.Value, "answered no ping") {
		t.Fatalf("rank 1 frozen: %+v", res.Err)
	}
	t.Logf("rank 1 frozen: %s", res.Err.Value)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("WorkerLost took %v for a frozen rank, want under 10 s", d)
	}
	if res := runGroup(g, "%workers restart\nout again", &recorder{}); res.Err != nil {
		t.Fatalf("%%workers restart after a frozen rank: %+v", res.Err)
	}

	// A crash report a rank writes reaches the cell's error.
	res = runGroup(g, "onrank 1 overflow\nsleep", &recorder{})
	t.Logf("rank 1 overflowed: %s\n%s", res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
	if res.Err == nil || res.Err.Name != "WorkerLost" || !strings.Contains(strings.Join(res.Err.Traceback, "\n"), "stack overflow") {
		t.Errorf("rank 1's stack overflow: %+v", res.Err)
	}
}

// TestGroupNoMPI: a binary without the binding says so.
func TestGroupNoMPI(t *testing.T) {
	g, err := NewGroup(Config{Command: []string{os.Args[0]}, Env: []string{beWorkerEnv + "=1"}, NoMPI: "built without MPI"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	res := runGroup(g, "%workers -np 2", &recorder{})
	if res.Err == nil || res.Err.Name != "WorkersFailed" || !strings.Contains(res.Err.Value, "built without MPI") {
		t.Errorf("%%workers -np 2 without MPI: %+v", res.Err)
	}
}
