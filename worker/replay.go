package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/kernel"
)

// A journal keeps the cells that succeeded in the running session, in
// order, so that %replay can rebuild the session in a fresh worker after
// the one that held it died (issue 24): a cell's Go code is compiled and
// run again, and gotrain's seeded strategies, datasets and initializers
// give the same values, so a training session comes back bit for bit.
//
// Only cells that ended without error are kept: a failed cell may have
// done part of its work, which running it whole would not reproduce, and
// the cell that killed the worker is not run again. Silent requests and
// those that keep no history (user expressions, a front end's own
// probes) are not cells of the session's record.
type journal struct {
	cells []replayCell
	// session is the single worker's session the cells ran in (see
	// Client.session); 0 for several workers, whose deaths end their cells.
	session uint64
}

// replayCell is one journaled cell.
type replayCell struct {
	count int    // its execution count, as the front end shows it
	code  string // the code as the worker ran it (%workers lines blanked)
	// effects names what the cell does outside the session (its shell
	// commands): %replay lists such a cell and runs it only when asked.
	effects string
}

// record adds a cell that ended as res; it keeps only successes.
func (j *journal) record(req kernel.ExecuteRequest, res kernel.ExecuteResult) {
	code := req.Code
	if res.Err != nil || req.Silent || !req.StoreHistory || strings.TrimSpace(code) == "" {
		return
	}
	ms, _ := splitMagics(code)
	var effects []string
	var resets []int
	for _, m := range ms {
		switch m.name {
		case "!":
			effects = append(effects, "!"+m.arg)
		case "reset":
			resets = append(resets, m.line) // a fresh worker needs none
		}
	}
	if resets != nil {
		code = blankMagicLines(code, resets)
	}
	j.cells = append(j.cells, replayCell{count: req.ExecutionCount, code: code, effects: strings.Join(effects, "; ")})
}

// lostSession is what a %replay after a worker's death has to work with.
type lostSession struct {
	cells []replayCell
	why   string // how the worker ended, for the listing
}

// replayHint is appended to the error of a cell whose worker died.
func replayHint(n int) string {
	return fmt.Sprintf("%%replay re-runs the %d cell%s that succeeded before this one in a fresh session (after %%workers restart where several workers ran); %%help says what it skips", n, plural(n))
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

// replay runs the cells of the session that died, in order, through
// Execute (which journals each again), saying which it runs and which it
// skips. It stops at the first cell that fails and returns that cell's
// error, naming it; the cells not yet run stay replayable. While the
// workers are stopped (after a lost worker, until %workers restart) it runs
// nothing and keeps every cell.
func (g *Group) replay(ctx context.Context, all bool, out kernel.Output) kernel.ExecuteResult {
	g.mu.Lock()
	if stopped := g.mu.stopped; stopped != "" {
		g.mu.Unlock()
		return errResult("WorkersStopped", fmt.Sprintf("%%replay: the workers stopped (%s); run %%workers restart first, then %%replay", stopped))
	}
	lost := g.mu.lost
	g.mu.lost = nil
	g.mu.Unlock()
	if lost == nil || len(lost.cells) == 0 {
		out.Stream("stdout", "gotrain: %replay: nothing to replay (no worker has died since the session started, or its cells were replayed already)\n")
		return kernel.ExecuteResult{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gotrain: replaying the session of the worker that %s: ", lost.why)
	var run1, skipped []string
	for _, c := range lost.cells {
		if c.effects != "" && !all {
			skipped = append(skipped, fmt.Sprintf("[%d] (%s)", c.count, c.effects))
			continue
		}
		run1 = append(run1, fmt.Sprintf("[%d]", c.count))
	}
	fmt.Fprintf(&b, "cells %s", strings.Join(run1, " "))
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "; skipping %s, which act outside the session (%%replay all runs them too)", strings.Join(skipped, " "))
	}
	b.WriteString("\n")
	out.Stream("stdout", b.String())
	for i, c := range lost.cells {
		if c.effects != "" && !all {
			continue
		}
		res := g.Execute(ctx, kernel.ExecuteRequest{Code: c.code, StoreHistory: true, ExecutionCount: c.count}, out)
		if res.Err != nil {
			// The cells not run yet stay replayable, after those of a
			// worker that died during the replay, if it did.
			rest := lost.cells[i+1:]
			g.mu.Lock()
			if g.mu.lost == nil {
				g.mu.lost = &lostSession{cells: rest, why: lost.why}
			} else {
				g.mu.lost.cells = append(g.mu.lost.cells, rest...)
			}
			g.mu.Unlock()
			res.Err.Value = fmt.Sprintf("%%replay: cell [%d] failed: %s", c.count, res.Err.Value)
			res.Err.Traceback = append([]string{fmt.Sprintf("%%replay stopped at cell [%d]; the cells after it were not run", c.count)}, res.Err.Traceback...)
			return res
		}
	}
	return kernel.ExecuteResult{}
}
