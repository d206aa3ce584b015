package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
			if tb := strings.Join(res.Err.Traceback, "\n"); !strings.Contains(tb, "%replay re-runs the 5 cells that changed the session before this one") {
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

// peek returns variable k of the fake session by a request that keeps no
// history, as a front end's own probe does: no cell of the journal.
func peek(g *Group, k string) kernel.ExecuteResult {
	return g.Execute(context.Background(), kernel.ExecuteRequest{Code: "get " + k}, &recorder{})
}

// TestIssue35Entry checks which cells the journal keeps, and how it keeps
// a cell that failed after it changed the session.
func TestIssue35Entry(t *testing.T) {
	req := func(code string) kernel.ExecuteRequest {
		return kernel.ExecuteRequest{Code: code, StoreHistory: true, ExecutionCount: 4}
	}
	fail := func(name, value string, tb ...string) kernel.ExecuteResult {
		return kernel.ExecuteResult{Err: &kernel.ExecError{Name: name, Value: value, Traceback: tb}}
	}
	tests := []struct {
		name string
		req  kernel.ExecuteRequest
		res  kernel.ExecuteResult
		kept bool
		want replayCell
	}{
		{"success", req("x := 1"), kernel.ExecuteResult{}, true, replayCell{count: 4, code: "x := 1"}},
		{"panic after its declarations", req("f := 1\nit.Next()\ns.Run(f)"),
			fail("Panic", "replica one fails", "panic: replica one fails", "  strategy.(*Mirrored).Run(...)", "      /src/strategy/run.go:80", "  main.cell()", "      cell:3"),
			true, replayCell{count: 4, code: "f := 1\nit.Next()\ns.Run(f)", failed: &failure{kind: "Panic", line: 3, value: "replica one fails"}}},
		{"panic outside cell code", req("g()"), fail("Panic", "boom", "panic: boom"),
			true, replayCell{count: 4, code: "g()", failed: &failure{kind: "Panic", value: "boom"}}},
		{"compile error", req("panicky()"), fail("CompileError", "line 1: undefined: panicky", "line 1:1: undefined: panicky"), false, replayCell{}},
		{"interrupted", req("for {}"), fail("Interrupted", "interrupted"), false, replayCell{}},
		{"unknown magic", req("%nope"), fail("UnknownMagic", "line 1: unknown magic %nope"), false, replayCell{}},
		{"shell command failed", req("!false"), fail("ShellError", "!false: exit status 1"), false, replayCell{}},
		{"silent", kernel.ExecuteRequest{Code: "x := 1", Silent: true, StoreHistory: true}, kernel.ExecuteResult{}, false, replayCell{}},
		{"no history", kernel.ExecuteRequest{Code: "x := 1"}, kernel.ExecuteResult{}, false, replayCell{}},
		{"blank", req(" \n\t"), kernel.ExecuteResult{}, false, replayCell{}},
		{"shell command", req("!echo a\n!echo b\nx := 1"), kernel.ExecuteResult{}, true,
			replayCell{count: 4, magics: []magic{{1, "!", "echo a"}, {2, "!", "echo b"}}, code: "\n\nx := 1", effects: "!echo a; !echo b"}},
		{"reset blanked", req("%reset\nx := 1"), kernel.ExecuteResult{}, true, replayCell{count: 4, code: "\nx := 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kept := entry(parseCell(tt.req), tt.res)
			if kept != tt.kept || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("entry(%q, %+v) = %+v, %v; want %+v, %v", tt.req.Code, tt.res.Err, got, kept, tt.want, tt.kept)
			}
		})
	}
}

// TestIssue35Replayed checks when a replayed cell counts as ending the way
// it did the first time: the same success, or the same kind of error at
// the same line, whatever the error says now.
func TestIssue35Replayed(t *testing.T) {
	ok := replayCell{count: 2}
	failed := replayCell{count: 4, failed: &failure{kind: "Panic", line: 6, value: "replica one fails"}}
	panicAt := func(line int, value string) kernel.ExecuteResult {
		return kernel.ExecuteResult{Err: fakePanic(value, line)}
	}
	tests := []struct {
		name string
		c    replayCell
		res  kernel.ExecuteResult
		same bool
		why  string // a part of what replayed says
	}{
		{"succeeds again", ok, kernel.ExecuteResult{}, true, ""},
		{"fails the same way", failed, panicAt(6, "replica one fails at 0xc000123"), true, ""},
		{"fails where it succeeded", ok, panicAt(1, "open data.csv: no such file or directory"), false, "cell [2] failed: open data.csv"},
		{"fails at another line", failed, panicAt(2, "open data.csv: no such file or directory"), false, "cell [4] failed otherwise than the first time (Panic at line 6: replica one fails): open data.csv"},
		{"fails with another kind", failed, kernel.ExecuteResult{Err: &kernel.ExecError{Name: "CompileError", Value: "line 6: undefined: s"}}, false, "otherwise than the first time"},
		{"the worker died", failed, kernel.ExecuteResult{Err: &kernel.ExecError{Name: "WorkerExited", Value: "exit status 1"}}, false, "otherwise"},
		{"succeeds where it failed", failed, kernel.ExecuteResult{}, false, "cell [4] succeeded, but the first time it failed (Panic at line 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same, why := replayed(tt.c, tt.res)
			if same != tt.same || !strings.Contains(why, tt.why) || (same && why != "") {
				t.Errorf("replayed(%+v, %+v) = %v, %q; want %v, %q", tt.c, tt.res.Err, same, why, tt.same, tt.why)
			}
		})
	}
}

// TestIssue35ReplayFailedCell is the issue's session on the fake worker:
// a cell that set a variable and then panicked is replayed and fails the
// same way, the replay goes on to the cells that use what it set, and so
// it does after each of several deaths and replays in a row.
func TestIssue35ReplayFailedCell(t *testing.T) {
	g := newTestGroup(t)
	n := 0
	run := func(code string) (kernel.ExecuteResult, *recorder) {
		n++
		return cell(g, n, code)
	}
	for _, code := range []string{"set a=1", "set p=2\npanic replica one fails", "get missing", "set b=3"} {
		run(code)
	}
	for round := range 3 {
		res, _ := run("exit 1")
		if res.Err == nil || res.Err.Name != "WorkerExited" {
			t.Fatalf("round %d: exit: %+v, want WorkerExited", round, res.Err)
		}
		if tb := strings.Join(res.Err.Traceback, "\n"); !strings.Contains(tb, "%replay re-runs the 3 cells that changed the session") {
			t.Errorf("round %d: the death's traceback does not offer the 3 cells:\n%s", round, tb)
		}
		res, out := run("%replay")
		if res.Err != nil {
			t.Fatalf("round %d: %%replay: %+v\n%s", round, res.Err, out.text("stdout"))
		}
		got := out.text("stdout")
		for _, want := range []string{
			"cells [1] [2] (which failed: Panic, line 2) [4]\n",
			"gotrain: cell [2] failed as it did the first time (Panic at line 2: replica one fails); the replay goes on\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("round %d: %%replay said %q, want %q in it", round, got, want)
			}
		}
		for k, v := range map[string]string{"a": "1", "p": "2", "b": "3"} {
			if res := peek(g, k); res.Err != nil || res.Value["text/plain"] != v {
				t.Errorf("round %d: %s = %v (%v) after the replay, want %s", round, k, res.Value, res.Err, v)
			}
		}
	}
}

// TestIssue35ReplayStopKeepsJournal stops a replay at a cell that reads a
// file since removed: the cells from it on stay in the journal, through a
// further death too, and once the file is back, %replay gives back the
// whole session.
func TestIssue35ReplayStopKeepsJournal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dieAgain := range []bool{false, true} {
		t.Run(fmt.Sprintf("dieAgain=%v", dieAgain), func(t *testing.T) {
			g := newTestGroup(t)
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			n := 0
			run := func(code string) (kernel.ExecuteResult, *recorder) {
				n++
				return cell(g, n, code)
			}
			for _, code := range []string{"set a=1", "need " + file + "\nset b=2", "set c=3"} {
				if res, _ := run(code); res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			if res, _ := run("exit 1"); res.Err == nil || res.Err.Name != "WorkerExited" {
				t.Fatalf("exit: %+v", res.Err)
			}
			os.Remove(file)
			res, _ := run("%replay")
			if res.Err == nil || !strings.HasPrefix(res.Err.Value, "%replay: cell [2] failed: stat "+file) {
				t.Fatalf("%%replay without the file: %+v, want cell [2]'s failure", res.Err)
			}
			if tb := res.Err.Traceback[0]; !strings.Contains(tb, "%replay stopped at cell [2]; it and the cells after it stay in the journal") {
				t.Errorf("the stopped replay's traceback starts %q", tb)
			}
			if res := peek(g, "a"); res.Err != nil || res.Value["text/plain"] != "1" {
				t.Errorf("a = %v (%v) after the stopped replay, want 1: the cells before [2] ran", res.Value, res.Err)
			}
			if res := peek(g, "c"); res.Err == nil {
				t.Errorf("c = %v after the stopped replay, want undefined: cell [3] did not run", res.Value)
			}
			run("set d=4") // a cell of the session after the stopped replay
			want := "replaying the rest of the session of the worker that died in cell [4]: cells [2] [3]\n"
			if dieAgain {
				if res, _ := run("exit 1"); res.Err == nil || !strings.Contains(strings.Join(res.Err.Traceback, "\n"), "re-runs the 4 cells") {
					t.Fatalf("exit after the stopped replay: %+v, want 4 cells to replay ([1] [6] [2] [3])", res.Err)
				}
				want = "replaying the session of the worker that died in cell [7]: cells [1] [6] [2] [3]\n"
			}
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			res, out := run("%replay")
			if res.Err != nil {
				t.Fatalf("%%replay with the file back: %+v\n%s", res.Err, out.text("stdout"))
			}
			if got := out.text("stdout"); !strings.Contains(got, want) {
				t.Errorf("%%replay said %q, want %q", got, want)
			}
			for k, v := range map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"} {
				if res := peek(g, k); res.Err != nil || res.Value["text/plain"] != v {
					t.Errorf("%s = %v (%v) after the replay, want %s", k, res.Value, res.Err, v)
				}
			}
			if _, out := run("%replay"); !strings.Contains(out.text("stdout"), "nothing to replay") {
				t.Errorf("a third %%replay said %q", out.text("stdout"))
			}
		})
	}
}

// TestIssue35ReplayDeathKeepsJournal kills the worker in a replayed cell
// that succeeded the first time: the whole session stays in the journal,
// and once the cause is gone %replay gives all of it back.
func TestIssue35ReplayDeathKeepsJournal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "die")
	g := newTestGroup(t)
	for i, code := range []string{"set a=1", "exitif " + file + "\nset b=2", "set c=3", "exit 1"} {
		cell(g, i+1, code)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ := cell(g, 5, "%replay")
	if res.Err == nil || res.Err.Name != "WorkerExited" || !strings.HasPrefix(res.Err.Value, "%replay: cell [2] failed: ") {
		t.Fatalf("%%replay with the worker dying in cell [2]: %+v", res.Err)
	}
	if tb := strings.Join(res.Err.Traceback, "\n"); !strings.Contains(tb, "the whole session stays in the journal") || !strings.Contains(tb, "%replay re-runs the 3 cells") {
		t.Errorf("the stopped replay's traceback:\n%s", tb)
	}
	os.Remove(file)
	res, out := cell(g, 6, "%replay")
	if res.Err != nil {
		t.Fatalf("%%replay: %+v\n%s", res.Err, out.text("stdout"))
	}
	if want := "replaying the session of the worker that died replaying cell [2]: cells [1] [2] [3]\n"; !strings.Contains(out.text("stdout"), want) {
		t.Errorf("%%replay said %q, want %q", out.text("stdout"), want)
	}
	for k, v := range map[string]string{"a": "1", "b": "2", "c": "3"} {
		if res := peek(g, k); res.Err != nil || res.Value["text/plain"] != v {
			t.Errorf("%s = %v (%v) after the replay, want %s", k, res.Value, res.Err, v)
		}
	}
}
