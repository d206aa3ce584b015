package worker

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/kernel"
)

// A journal keeps the cells that changed the running session, in order,
// so that %replay can rebuild the session in a fresh worker after the one
// that held it died (issues 24 and 35): a cell's Go code is compiled and
// run again, and gotrain's seeded strategies, datasets and initializers
// give the same values, so a training session comes back bit for bit.
//
// A cell that succeeded is kept, and so is one whose statements ran and
// then failed (a panic, a replica's error): its declarations stay in the
// session, and its statements may have assigned variables or advanced an
// iterator before the failure, so the replay runs it too and expects it
// to fail the same way (failure). A cell that failed before it changed
// anything (a compile error, an unknown magic) is left out, and so is
// the cell that killed the worker. Silent requests and those that keep no
// history (user expressions, a front end's own probes) are not cells of
// the session's record.
//
// A replay that stops (a cell fails otherwise than it did) leaves the
// cells it did not run in pending: they are still the session's record,
// so the next %replay goes on with them, and a worker that dies meanwhile
// hands them on to the next %replay after the cells that ran.
type journal struct {
	cells []replayCell
	// pending are cells of a session that died which a stopped %replay has
	// not run yet, oldest first; why says how that session ended.
	pending []replayCell
	why     string
	// session is the single worker's session the cells ran in (see
	// Client.session); 0 for several workers, whose deaths end their cells.
	session uint64
}

// replayCell is one journaled cell.
type replayCell struct {
	count  int     // its execution count, as the front end shows it
	magics []magic // the magics that ran past the Group, but those the journal drops
	code   string  // its Go code, the magics' lines blanked
	// effects names what the cell does outside the session (its shell
	// commands): %replay lists such a cell and runs it only when asked.
	effects string
	// failed is how the cell failed after it changed the session; nil for
	// a cell that succeeded.
	failed *failure
}

// failure is how a cell failed once its statements ran: a replay expects
// the same kind of error at the same line.
type failure struct {
	kind  string // the error's name, such as Panic
	line  int    // the cell line of the innermost frame in cell code; 0 if none
	value string // what the error said, for the listings
}

func (f *failure) String() string {
	if f.line == 0 {
		return fmt.Sprintf("%s: %s", f.kind, f.value)
	}
	return fmt.Sprintf("%s at line %d: %s", f.kind, f.line, f.value)
}

// cellLine matches a frame's file in a cell's traceback, as the session
// shows it: `cell:LINE`, the cell's own position through its //line
// directives.
var cellLine = regexp.MustCompile(`^\s*cell:(\d+)\s*$`)

// failureOf returns how e failed, or nil when e is no failure of a cell
// that changed the session: only a panic (kernel.EnamePanic) comes after
// the cell's declarations were committed and its statements began to run.
func failureOf(e *kernel.ExecError) *failure {
	if e == nil || e.Name != kernel.EnamePanic {
		return nil
	}
	f := &failure{kind: e.Name, value: e.Value}
	for _, tb := range e.Traceback {
		if m := cellLine.FindStringSubmatch(tb); m != nil {
			f.line, _ = strconv.Atoi(m[1])
			break
		}
	}
	return f
}

// entry returns the journal's entry for a cell that ended as res, and
// false when the cell is none of the session's record.
func entry(c parsedCell, res kernel.ExecuteResult) (replayCell, bool) {
	if c.Silent || !c.StoreHistory || len(c.magics) == 0 && strings.TrimSpace(c.Code) == "" {
		return replayCell{}, false
	}
	f := failureOf(res.Err)
	if res.Err != nil && f == nil {
		return replayCell{}, false
	}
	e := replayCell{count: c.ExecutionCount, code: c.Code, failed: f}
	var effects []string
	for _, m := range c.magics {
		d, _ := magicOf(m.Name)
		switch d.journal {
		case journalDrop:
			continue
		case journalEffect:
			effects = append(effects, m.String())
		}
		e.magics = append(e.magics, m)
	}
	e.effects = strings.Join(effects, "; ")
	return e, true
}

// record adds a cell that ended as res, if it is one of the session's
// record.
func (j *journal) record(c parsedCell, res kernel.ExecuteResult) {
	if e, ok := entry(c, res); ok {
		j.cells = append(j.cells, e)
	}
}

// cell is c as it runs again: its magics and its Go code.
func (c replayCell) cell() parsedCell {
	return parsedCell{ExecuteRequest: kernel.ExecuteRequest{Code: c.code, StoreHistory: true, ExecutionCount: c.count}, magics: c.magics}
}

// all is the session's whole record: the cells that ran, then those a
// stopped replay has still to run.
func (j *journal) all() []replayCell {
	return append(append([]replayCell(nil), j.cells...), j.pending...)
}

// replayed says whether a replayed cell ended as it did the first time:
// it succeeded again, or failed with the same kind of error at the same
// line. If not, why says how it differs.
func replayed(c replayCell, res kernel.ExecuteResult) (same bool, why string) {
	got := failureOf(res.Err)
	switch {
	case c.failed == nil && res.Err == nil:
		return true, ""
	case c.failed == nil:
		return false, fmt.Sprintf("cell [%d] failed: %s", c.count, res.Err.Value)
	case res.Err == nil:
		return false, fmt.Sprintf("cell [%d] succeeded, but the first time it failed (%s), so the session now differs from the one that died", c.count, c.failed)
	case got == nil || got.kind != c.failed.kind || got.line != c.failed.line:
		return false, fmt.Sprintf("cell [%d] failed otherwise than the first time (%s): %s", c.count, c.failed, res.Err.Value)
	}
	return true, ""
}

// lostSession is what a %replay after a worker's death has to work with.
type lostSession struct {
	cells []replayCell
	why   string // how the worker ended, for the listing
}

// replayHint is appended to the error of a cell whose worker died.
func replayHint(n int) string {
	return fmt.Sprintf("%%replay re-runs the %d cell%s that changed the session before this one in a fresh session (after %%workers restart where several workers ran); %%help says what it skips", n, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// parseReplay reads %replay's argument: "" (skip cells with shell
// commands) or "all".
func parseReplay(arg string) (all bool, err error) {
	switch arg {
	case "":
		return false, nil
	case "all":
		return true, nil
	}
	return false, fmt.Errorf("%%replay %s: want %%replay, or %%replay all to run cells with shell commands too", arg)
}

// replay runs the cells of the session that died, in order, for the cell
// [count] that says %replay, saying which it runs and which it skips; each is
// journaled again as it was the first time. A cell that ends otherwise
// than it did the first time stops the replay, which returns that cell's
// error naming it; that cell and the ones after it stay in the journal
// (pending) for the next %replay, after the cause is fixed. While the
// workers are stopped (after a lost worker, until %workers restart) it
// runs nothing and keeps every cell.
func (g *Group) replay(ctx context.Context, count int, all bool, out kernel.Output) kernel.ExecuteResult {
	// A worker that ended since the last cell leaves its cells to this
	// replay, and the journal its session.
	g.checkSession(count)
	g.mu.Lock()
	if stopped := g.mu.stopped; stopped != "" {
		g.mu.Unlock()
		return errResult(enameWorkersStopped, fmt.Sprintf("%%replay: the workers stopped (%s); run %%workers restart first, then %%replay", stopped))
	}
	j := &g.mu.journal
	rest := ""
	if lost := g.mu.lost; lost != nil {
		j.pending, j.why = append(j.pending, lost.cells...), lost.why
		g.mu.lost = nil
	} else if len(j.pending) > 0 {
		rest = "the rest of "
	}
	cells, why := append([]replayCell(nil), j.pending...), j.why
	g.mu.Unlock()
	if len(cells) == 0 {
		out.Stream("stdout", "gotrain: %replay: nothing to replay (no worker has died since the session started, or its cells were replayed already)\n")
		return kernel.ExecuteResult{}
	}
	out.Stream("stdout", replayListing(cells, all, rest, why))
	for _, c := range cells {
		if c.effects != "" && !all {
			// Skipped, and still the session's record: a later %replay
			// all after a later death runs it.
			g.mu.Lock()
			j.cells = append(j.cells, c)
			if len(j.pending) > 0 {
				j.pending = j.pending[1:]
			}
			g.mu.Unlock()
			continue
		}
		res, lost := g.run(ctx, c.cell(), out, &c)
		if lost {
			// Journaled again, with the cells of the session that ended.
			return errResult(enameWorkerExited, fmt.Sprintf("%%replay: the worker ended before cell [%d] ran; %%replay runs the whole session again", c.count))
		}
		same, diff := replayed(c, res)
		if same {
			if c.failed != nil {
				out.Stream("stdout", fmt.Sprintf("gotrain: cell [%d] failed as it did the first time (%s); the replay goes on\n", c.count, c.failed))
			}
			continue
		}
		var tail string
		switch {
		case res.Err == nil:
			res = errResult(enameReplayDiverged, "%replay: "+diff)
			tail = fmt.Sprintf("%%replay stopped after cell [%d]; the cells after it stay in the journal, and %%replay goes on with them", c.count)
		case sessionLost(res.Err):
			res.Err.Value = "%replay: " + diff
			tail = fmt.Sprintf("%%replay stopped at cell [%d], whose worker died; the whole session stays in the journal: fix the cause, then %%replay runs it all again", c.count)
		default:
			res.Err.Value = "%replay: " + diff
			tail = fmt.Sprintf("%%replay stopped at cell [%d]; it and the cells after it stay in the journal: fix the cause, then %%replay goes on with them", c.count)
		}
		res.Err.Traceback = append([]string{tail}, res.Err.Traceback...)
		return res
	}
	return kernel.ExecuteResult{}
}

// replayListing is the line %replay starts with: the cells it runs, in
// order, those that failed the first time marked, and those it skips.
func replayListing(cells []replayCell, all bool, rest, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gotrain: replaying %sthe session of the worker that %s: ", rest, why)
	var run, skipped []string
	for _, c := range cells {
		switch {
		case c.effects != "" && !all:
			skipped = append(skipped, fmt.Sprintf("[%d] (%s)", c.count, c.effects))
		case c.failed != nil:
			run = append(run, fmt.Sprintf("[%d] (which failed: %s, line %d)", c.count, c.failed.kind, c.failed.line))
		default:
			run = append(run, fmt.Sprintf("[%d]", c.count))
		}
	}
	if len(run) == 0 {
		b.WriteString("no cells")
	} else {
		fmt.Fprintf(&b, "cells %s", strings.Join(run, " "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "; skipping %s, which act outside the session (%%replay all runs them too)", strings.Join(skipped, " "))
	}
	b.WriteString("\n")
	return b.String()
}
