package worker

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// cell runs code as a front end's cell with execution count n.
func cell(g *Group, n int, code string) (kernel.ExecuteResult, *recorder) {
	out := &recorder{}
	res := g.Execute(context.Background(), kernel.ExecuteRequest{Code: code, StoreHistory: true, ExecutionCount: n}, out)
	return res, out
}

// TestIssue24Replay kills the worker three ways (a stack overflow, an
// allocation the system refuses, os.Exit) and checks that %replay runs the
// cells that succeeded before, in order, into the fresh worker: not the
// failed cell, not the one that killed it, not a shell cell unless asked.
func TestIssue24Replay(t *testing.T) {
	for _, kill := range []string{"overflow", "exit 3", "%limit memory 256MiB\nalloc 1GiB"} {
		t.Run(strings.Fields(kill)[0], func(t *testing.T) {
			g := newTestGroup(t)
			cells := []struct {
				code string
				ok   bool
			}{
				{"set a=1", true},
				{"!echo outside", true},
				{"get missing", false}, // fails: not journaled
				{"set a=2\nset b=3", true},
				{"", true}, // empty: nothing to replay
				{"out silent", true},
			}
			for i, c := range cells {
				if res, _ := cell(g, i+1, c.code); (res.Err == nil) != c.ok {
					t.Fatalf("cell [%d] %q: %v", i+1, c.code, res.Err)
				}
			}
			// A silent request is no cell of the record.
			g.Execute(context.Background(), kernel.ExecuteRequest{Code: "set a=silent", Silent: true}, &recorder{})
			if res, _ := cell(g, 7, "set a=2"); res.Err != nil {
				t.Fatal(res.Err)
			}

			res, _ := cell(g, 8, kill)
			if res.Err == nil || res.Err.Name != "WorkerExited" {
				t.Fatalf("%q: %+v, want WorkerExited", kill, res.Err)
			}
			if tb := strings.Join(res.Err.Traceback, "\n"); !strings.Contains(tb, "%replay re-runs the 5 cells that succeeded before this one") {
				t.Errorf("WorkerExited's traceback does not offer %%replay:\n%s", tb)
			}
			if res, _ := cell(g, 9, "get a"); res.Err == nil {
				t.Fatalf("the fresh worker has a = %v before the replay", res.Value)
			}

			res, out := cell(g, 10, "%replay\nget b")
			if res.Err != nil {
				t.Fatalf("%%replay: %v\n%s", res.Err, out.text("stdout"))
			}
			want := "gotrain: replaying the session of the worker that died in cell [8]: cells [1] [4] [6] [7]; skipping [2] (!echo outside), which act outside the session (%replay all runs them too)\n"
			if got := out.text("stdout"); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "silent") {
				t.Errorf("%%replay said %q, want %q, then cell [6]'s output", got, want)
			}
			if v := res.Value["text/plain"]; v != "3" {
				t.Errorf("b = %v after the replay, want 3", v)
			}
			if res, _ := cell(g, 11, "get a"); res.Err != nil || res.Value["text/plain"] != "2" {
				t.Errorf("a after the replay: %v %v, want 2", res.Value, res.Err)
			}
			if _, out := cell(g, 12, "%replay"); !strings.Contains(out.text("stdout"), "nothing to replay") {
				t.Errorf("a second %%replay said %q", out.text("stdout"))
			}
		})
	}
}

// TestIssue24ReplayAll checks that %replay all runs shell cells too, that
// a cell failing in the replay stops it and names that cell, and that
// %replay with another argument is refused.
func TestIssue24ReplayAll(t *testing.T) {
	g := newTestGroup(t)
	for i, code := range []string{"!echo outside", "set a=1"} {
		if res, _ := cell(g, i+1, code); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if res, _ := cell(g, 3, "%replay now"); res.Err == nil || res.Err.Name != "UsageError" {
		t.Errorf("%%replay now: %+v, want a UsageError", res.Err)
	}
	// Showing the workers restarts nothing: the journal stays.
	if res, _ := cell(g, 4, "%workers status"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res, _ := cell(g, 4, "exit 3"); res.Err == nil || res.Err.Name != "WorkerExited" {
		t.Fatalf("exit: %+v", res.Err)
	}
	res, out := cell(g, 5, "%replay all")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := out.text("stdout"); !strings.Contains(got, "cells [1] [2]\n") || !strings.Contains(got, "outside") {
		t.Errorf("%%replay all said %q, want cells [1] [2] and the shell command's output", got)
	}
	if res, _ := cell(g, 6, "%reset"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, out := cell(g, 7, "%replay"); !strings.Contains(out.text("stdout"), "nothing to replay") {
		t.Errorf("%%replay after %%reset said %q", out.text("stdout"))
	}
}

// TestIssue24ReplayAfterDeathBetweenCells kills the worker from outside
// after its cells ended: the next cell runs in a fresh session and says
// that %replay brings the earlier cells back, and %replay does, from the
// last %reset on (a %reset starts a session, it is no death).
func TestIssue24ReplayAfterDeathBetweenCells(t *testing.T) {
	g := newTestGroup(t)
	for i, code := range []string{"set a=1", "%reset", "set b=2", "set c=3"} {
		if res, _ := cell(g, i+1, code); res.Err != nil {
			t.Fatalf("cell [%d] %q: %v", i+1, code, res.Err)
		}
	}
	g.mu.Lock()
	one := g.mu.one
	g.mu.Unlock()
	before := one.session()
	one.mu.Lock()
	pid := one.mu.w.cmd.Process.Pid
	one.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); one.session() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed worker was not replaced")
		}
	}

	res, out := cell(g, 5, "get b")
	if res.Err == nil {
		t.Fatalf("b = %v in the fresh session, want undefined", res.Value)
	}
	if got := out.text("stderr"); !strings.Contains(got, "%replay re-runs the") {
		t.Errorf("the first cell after the death said %q, want a word on %%replay", got)
	}
	res, out = cell(g, 6, "%replay\nget b")
	if res.Err != nil {
		t.Fatalf("%%replay: %v\n%s", res.Err, out.text("stdout"))
	}
	if want := "gotrain: replaying the session of the worker that ended before cell [5]: cells [2] [3] [4]\n"; !strings.HasPrefix(out.text("stdout"), want) {
		t.Errorf("%%replay said %q, want %q", out.text("stdout"), want)
	}
	if v := res.Value["text/plain"]; v != "2" {
		t.Errorf("b = %v after the replay, want 2", v)
	}
	if res, _ := cell(g, 7, "get a"); res.Err == nil {
		t.Errorf("a = %v after the replay, want undefined: it was set before the %%reset", res.Value)
	}
}
