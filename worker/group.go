package worker

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gotrain/gotrain/internal/loopback"
	"github.com/gotrain/gotrain/kernel"
)

// ClusterEnv tells a worker which cluster of workers it is one of:
// "loopback RANK SIZE SOCKET". gotrain worker joins it before the session
// starts and strategy.NewMultiWorkerMirrored strategies train across it.
const ClusterEnv = "GOTRAIN_CLUSTER"

// ClusterTokenEnv carries, in hex, the token a loopback cluster's workers
// prove to each other that they hold (loopback.NewToken). A worker reads
// it, and removes it from its environment, before any cell runs.
const ClusterTokenEnv = "GOTRAIN_CLUSTER_TOKEN"

// divergeGrace is how long the other workers may go on after one worker's
// cell failed: they may be waiting, in a collective, for a worker that
// will never reach it. After it, all are stopped.
const divergeGrace = 10 * time.Second

// maxRankOutput is how much of another worker's output a cell keeps, the
// end of it, to show when that worker fails.
const maxRankOutput = 64 << 10

// Group is the kernel's executor: the session of one worker process, or,
// after %workers N, of N worker processes that each run every cell (SPMD)
// as the workers of one multi-worker strategy
// (strategy.NewMultiWorkerMirrored), joined by a loopback cluster on this
// machine. Worker 0's output is the cell's; another worker's output is
// shown only when that worker's cell fails while worker 0's does not. A
// worker that dies stops them all: the cell says which, and later cells
// ask for %workers restart. A Group is safe for concurrent use as
// kernel.Executor requires.
type Group struct {
	cfg      Config
	draining sync.WaitGroup // jobs being stopped after a lost worker; Close waits

	mu struct {
		sync.Mutex
		one     *Client      // the single worker; nil while several run
		many    []*Client    // the workers, in rank order, after %workers N
		size    int          // the workers %workers asked for (1: a single worker)
		mpi     *mpiSpec     // what %workers -np asked for; nil for a loopback cluster
		job     *mpiJob      // the running mpirun, with mpi; many are its clients
		dir     string       // the cluster socket's folder, removed when the workers stop
		stopped string       // why the workers stopped; "" while they run
		journal journal      // the cells that changed the running session
		lost    *lostSession // the journal of the session that died last; nil after %replay or %reset
	}
}

// NewGroup starts a single worker (as NewClient does) or, with workers > 1,
// that many workers of one cluster.
func NewGroup(cfg Config, workers int) (*Group, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	g := &Group{cfg: cfg}
	g.mu.size = 1
	if workers > 1 {
		g.mu.Lock()
		err := g.startLocked(workers, nil)
		g.mu.Unlock()
		return g, err
	}
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	g.mu.one = c
	return g, nil
}

// startLocked stops whatever runs and starts n workers of a new cluster
// (n = 1 without mpi: a single worker), under mpirun when mpi is set.
func (g *Group) startLocked(n int, mpi *mpiSpec) error {
	g.stopLocked()
	g.mu.size, g.mu.stopped, g.mu.mpi = n, "", mpi
	g.mu.journal = journal{} // a fresh set of workers: a fresh session
	if mpi != nil {
		if err := g.startMPILocked(*mpi); err != nil {
			g.mu.stopped = err.Error()
			return err
		}
		return nil
	}
	if n == 1 {
		c, err := NewClient(g.cfg)
		g.mu.one = c
		return err
	}
	dir, err := os.MkdirTemp("", "gotrain-workers-")
	if err != nil {
		return fmt.Errorf("worker: the cluster's folder: %w", err)
	}
	g.mu.dir = dir
	sock := filepath.Join(dir, "cluster")
	token := hex.EncodeToString(loopback.NewToken())
	for r := range n {
		cfg := g.cfg
		cfg.Env = append(append([]string(nil), cfg.Env...), fmt.Sprintf("%s=loopback %d %d %s", ClusterEnv, r, n, sock), ClusterTokenEnv+"="+token)
		cfg.NoRestart = true
		c, err := NewClient(cfg)
		if err != nil {
			g.stopLocked()
			g.mu.stopped = err.Error()
			return err
		}
		g.mu.many = append(g.mu.many, c)
	}
	return nil
}

// stopLocked closes every worker.
func (g *Group) stopLocked() {
	if g.mu.one != nil {
		g.mu.one.Close()
		g.mu.one = nil
	}
	if g.mu.job != nil {
		g.mu.job.stop()
		g.mu.job = nil
	} else {
		closeAll(g.mu.many)
	}
	g.mu.many = nil
	if g.mu.dir != "" {
		os.RemoveAll(g.mu.dir)
		g.mu.dir = ""
	}
}

// Execute parses the cell's magics, runs those that act on the set of
// workers or the journal (groupMagics) and the rest of the cell on every
// worker, and keeps the journal %replay reads.
func (g *Group) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	c := parseCell(req)
	if err := checkMagics(c.magics); err != nil {
		return kernel.ExecuteResult{Err: err}
	}
	rest, done, err := c.runAt(inGroup, func(m magic) *kernel.ExecError { return groupMagics[m.Name](g, ctx, c, m, out) })
	if err != nil || done {
		return kernel.ExecuteResult{Err: err}
	}
	res, _ := g.run(ctx, rest, out, nil)
	return res
}

// groupMagics are the magics the Group runs, by name (see magics).
var groupMagics = map[string]func(g *Group, ctx context.Context, c parsedCell, m magic, out kernel.Output) *kernel.ExecError{
	"workers": (*Group).workersMagic,
	"replay": func(g *Group, ctx context.Context, c parsedCell, m magic, out kernel.Output) *kernel.ExecError {
		all, err := parseReplay(m.Arg)
		if err != nil {
			return errResult("UsageError", err.Error()).Err
		}
		return g.replay(ctx, c.ExecutionCount, all, out).Err
	},
	"reset": func(g *Group, _ context.Context, _ parsedCell, _ magic, _ kernel.Output) *kernel.ExecError {
		// The worker resets itself (clientMagics); the journal starts
		// again with this cell.
		g.mu.Lock()
		g.mu.journal, g.mu.lost = journal{}, nil
		g.mu.Unlock()
		return nil
	},
}

// run runs a cell's Go code and the magics left to the workers, and
// journals it. A replay passes the cell's journal entry as replaying: it
// is journaled as it was the first time if it ends the same way (see
// replayed), and taken off the journal's pending cells. lost is true
// when the worker died before the cell, which then did not run: a
// replayed cell must not run in a session its earlier cells are not in.
func (g *Group) run(ctx context.Context, c parsedCell, out kernel.Output, replaying *replayCell) (res kernel.ExecuteResult, lost bool) {
	n := g.checkSession(c.ExecutionCount)
	if n > 0 {
		if replaying != nil {
			return kernel.ExecuteResult{}, true
		}
		out.Stream("stderr", "gotrain: "+replayHint(n)+"\n")
	}
	res = g.execute(ctx, c, out)
	g.mu.Lock()
	defer g.mu.Unlock()
	if sessionLost(res.Err) {
		why := "died in cell ["
		if replaying != nil {
			why = "died replaying cell ["
		}
		if n := g.loseLocked(why + strconv.Itoa(c.ExecutionCount) + "]"); n > 0 {
			res.Err.Traceback = append(res.Err.Traceback, replayHint(n))
		}
		g.mu.journal = journal{}
		return res, false
	}
	j := &g.mu.journal
	if g.mu.one != nil {
		// The session the cell ran in: after a %reset, the one it started.
		j.session = g.mu.one.session()
	}
	if replaying == nil {
		j.record(c, res)
		return res, false
	}
	if same, _ := replayed(*replaying, res); same || res.Err == nil {
		// Ended as it did, or ran whole where it failed before: either
		// way what it did is the session's now.
		e := *replaying
		if !same {
			e, _ = entry(c, res)
		}
		j.cells = append(j.cells, e)
		if len(j.pending) > 0 {
			j.pending = j.pending[1:]
		}
	}
	return res, false
}

// loseLocked hands the journal of the session that ended (why says how)
// to the next %replay, and returns how many cells it holds. A journal with
// no cells leaves an earlier session's to %replay.
func (g *Group) loseLocked(why string) int {
	cells := g.mu.journal.all()
	if len(cells) == 0 {
		return 0
	}
	g.mu.lost = &lostSession{cells: cells, why: why}
	return len(cells)
}

// checkSession starts a fresh journal when the single worker is not the
// one the journal's cells ran in: a worker that died between cells (killed
// from outside, or by a goroutine of an earlier cell) has been replaced,
// and cell [count] will run in the fresh one. The cells of the session
// that is gone become %replay's, and checkSession returns how many there
// are.
func (g *Group) checkSession(count int) (lost int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.one == nil {
		return 0
	}
	s := g.mu.one.session()
	if s == g.mu.journal.session {
		return 0
	}
	lost = g.loseLocked("ended before cell [" + strconv.Itoa(count) + "]")
	g.mu.journal = journal{session: s}
	return lost
}

// execute runs the cell's Go code and remaining magics on every worker.
func (g *Group) execute(ctx context.Context, c parsedCell, out kernel.Output) kernel.ExecuteResult {
	g.mu.Lock()
	one, many, job, stopped := g.mu.one, g.mu.many, g.mu.job, g.mu.stopped
	g.mu.Unlock()
	switch {
	case stopped != "":
		return errResult(enameWorkersStopped, fmt.Sprintf("the workers stopped (%s); run %%workers restart for a fresh set, or %%workers off for a single worker", stopped))
	case one != nil:
		return one.run(ctx, c, out)
	}
	return g.fanOut(ctx, c, out, many, job)
}

// workersMagic runs one %workers line; an error ends the cell.
func (g *Group) workersMagic(ctx context.Context, _ parsedCell, m magic, out kernel.Output) *kernel.ExecError {
	arg := m.Arg
	g.mu.Lock()
	size, mpi := g.mu.size, g.mu.mpi
	g.mu.Unlock()
	n := 0
	switch {
	case arg == "" || arg == "status":
		out.Stream("stdout", g.status())
		return nil
	case arg == "off" || arg == "stop":
		n, mpi = 1, nil
	case arg == "restart":
		n = size
	case strings.HasPrefix(arg, "-"):
		spec, err := parseMPISpec(arg)
		if err != nil {
			return errResult("UsageError", err.Error()).Err
		}
		if _, err := g.checkMPI(spec); err != nil {
			return errResult(enameWorkersFailed, err.Error()).Err
		}
		n, mpi = spec.np, &spec
	default:
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n < 1 {
			return errResult("UsageError", fmt.Sprintf("%%workers %s: want %%workers N (N ≥ 1) on this machine, -np N [--hostfile FILE] under mpirun, off, restart or status", arg)).Err
		}
		mpi = nil
	}
	g.mu.Lock()
	err := g.startLocked(n, mpi)
	many, job, one := g.mu.many, g.mu.job, g.mu.one
	g.mu.Unlock()
	if err != nil {
		return errResult(enameWorkersFailed, err.Error()).Err
	}
	// Wait until every worker runs its session (they join each other first).
	warm := parsedCell{ExecuteRequest: kernel.ExecuteRequest{Code: "", Silent: true}}
	if one != nil {
		if r := one.run(ctx, warm, kernel.Discard); r.Err != nil {
			return r.Err
		}
	} else if r := g.fanOut(ctx, warm, kernel.Discard, many, job); r.Err != nil {
		g.mu.Lock()
		g.stopLocked()
		g.mu.stopped = r.Err.Value
		g.mu.Unlock()
		res := errResult(enameWorkersFailed, "the workers could not start: "+r.Err.Value)
		if job != nil {
			// mpirun's own words say why a launch failed (a host it
			// cannot reach, a binary missing there).
			res.Err.Traceback = append(res.Err.Traceback, "", "mpirun said:")
			res.Err.Traceback = append(res.Err.Traceback, job.ownLines(40)...)
		}
		return res.Err
	}
	out.Stream("stdout", g.status())
	return nil
}

func (g *Group) status() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.mu.stopped != "":
		return fmt.Sprintf("gotrain: %d workers stopped (%s); %%workers restart starts a fresh set\n", g.mu.size, g.mu.stopped)
	case g.mu.mpi != nil:
		return fmt.Sprintf("gotrain: %d workers under mpirun on %s; every cell runs on each, worker 0's output is shown\n", g.mu.size, g.mu.mpi)
	case g.mu.size == 1:
		return "gotrain: 1 worker; %workers N runs cells on N workers of strategy.NewMultiWorkerMirrored\n"
	}
	return fmt.Sprintf("gotrain: %d workers on this machine (a loopback cluster); every cell runs on each, worker 0's output is shown\n", g.mu.size)
}

// closeAll closes every client at once.
func closeAll(cs []*Client) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// fanOut runs cell on every worker and merges their results. job is the
// mpirun that started them, or nil.
func (g *Group) fanOut(ctx context.Context, cell parsedCell, out kernel.Output, many []*Client, job *mpiJob) kernel.ExecuteResult {
	n := len(many)
	results := make([]kernel.ExecuteResult, n)
	outs := make([]*rankOutput, n)
	in := &sharedInput{}
	in.cond = sync.NewCond(&in.mu)
	done := make(chan int, n)
	for r, c := range many {
		var o kernel.Output = &firstOutput{Output: out, in: in}
		if r > 0 {
			outs[r] = &rankOutput{in: in}
			o = outs[r]
		}
		go func() {
			results[r] = c.run(ctx, cell, o)
			done <- r
		}()
	}
	// got holds the results that arrived; a worker still running when the
	// others were given up on writes its own later, unread.
	got := make([]kernel.ExecuteResult, n)
	lost, stopped := -1, false
	var grace, cut <-chan time.Time
	stopAll := func() {
		if !stopped {
			stopped = true
			in.close()
			for _, c := range many {
				go c.Close()
			}
		}
	}
	left := n
	for arrived := make([]bool, n); left > 0; {
		select {
		case r := <-done:
			left--
			arrived[r] = true
			got[r] = results[r]
			if r == 0 {
				in.close() // worker 0 reads no more: the others' reads fail
			}
			e := got[r].Err
			switch {
			case e == nil:
			case e.Name == enameWorkerExited && lost < 0 && !stopped:
				// The others may wait for it in a collective forever;
				// and one worker alone cannot rejoin the cluster.
				lost = r
				stopAll()
				if many[r].wentSilent() {
					// Nothing ended the others (a dead process would
					// make mpirun end them all): they are stuck in a
					// collective and being stopped, which may take
					// seconds, and what they would say adds nothing.
					cut = time.After(time.Second)
				}
			case left == 0:
			case grace == nil:
				grace = time.After(divergeGrace)
			}
		case <-grace:
			stopAll()
		case <-cut:
			for r := range got {
				if !arrived[r] {
					got[r] = errResult(enameWorkerClosed, "stopped with the others")
				}
			}
			left = 0
		}
	}
	in.close()
	if lost >= 0 && job != nil {
		// mpirun ends every rank when one dies; the first link to close
		// need not be the dead rank's, but mpirun names it, as it exits.
		// A rank that went silent is known, and mpirun may never say.
		if !many[lost].wentSilent() {
			select {
			case <-job.done:
			case <-time.After(3 * time.Second):
			}
		}
		if r := job.rankThatEnded(); r >= 0 && r < n {
			lost = r
			if e := got[r].Err; e == nil || e.Name != enameWorkerExited {
				got[r] = errResult(enameWorkerExited, "the worker process running this session exited")
			}
		}
		if e := got[lost].Err; job.why != "" && !strings.Contains(e.Value, job.why) {
			e.Value += " (" + job.why + ")"
		}
	}
	if stopped {
		g.mu.Lock()
		if lost >= 0 {
			g.mu.stopped = fmt.Sprintf("worker %d exited", lost)
		} else {
			g.mu.stopped = "a worker's cell failed while the others waited"
		}
		if g.mu.job == job && job != nil {
			// mpirun may take seconds to end ranks on a host it cannot
			// reach; the cell's error need not wait for it.
			g.mu.job, g.mu.many = nil, nil
			g.draining.Add(1)
			go func() { defer g.draining.Done(); job.stop() }()
		}
		g.stopLocked()
		g.mu.Unlock()
	}
	return merge(got, outs, lost, n)
}

// merge is the cell's result from every worker's: worker 0's, unless a
// worker was lost or only other workers failed.
func merge(results []kernel.ExecuteResult, outs []*rankOutput, lost, n int) kernel.ExecuteResult {
	if lost >= 0 {
		e := results[lost].Err
		return kernel.ExecuteResult{Err: &kernel.ExecError{
			Name:      enameWorkerLost,
			Value:     fmt.Sprintf("worker %d of %d: %s; all workers were stopped: %%workers restart starts a fresh set (restore a checkpoint to go on)", lost, n, e.Value),
			Traceback: e.Traceback,
		}}
	}
	var failed []int
	for r, res := range results {
		if res.Err != nil && res.Err.Name != enameWorkerClosed {
			failed = append(failed, r)
		}
	}
	if len(failed) == 0 || failed[0] == 0 {
		res := results[0]
		if len(failed) > 1 {
			e := *res.Err
			e.Value += fmt.Sprintf(" (also on workers %s)", ranks(failed[1:]))
			res.Err = &e
		}
		return res
	}
	k := failed[0]
	e := results[k].Err
	tb := []string{fmt.Sprintf("worker %d's output:", k)}
	tb = append(tb, strings.Split(strings.TrimRight(outs[k].text(), "\n"), "\n")...)
	tb = append(tb, e.Traceback...)
	return kernel.ExecuteResult{Err: &kernel.ExecError{
		Name:      "Diverged",
		Value:     fmt.Sprintf("worker %d failed (%s: %s) while worker 0 did not; the workers' state may now differ: %%workers restart", k, e.Name, e.Value),
		Traceback: tb,
	}}
}

func ranks(rs []int) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.Itoa(r)
	}
	return strings.Join(s, ", ")
}

// sharedInput hands every worker the lines worker 0 read from the front
// end, in order, so fmt.Scan reads the same on each.
type sharedInput struct {
	mu     sync.Mutex
	cond   *sync.Cond
	lines  []string
	closed bool
}

func (s *sharedInput) add(line string) {
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *sharedInput) get(i int) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.lines) <= i && !s.closed {
		s.cond.Wait()
	}
	if i < len(s.lines) {
		return s.lines[i], nil
	}
	return "", fmt.Errorf("worker 0 read no more input in this cell")
}

func (s *sharedInput) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// firstOutput is worker 0's output: the cell's, recording input lines.
type firstOutput struct {
	kernel.Output
	in *sharedInput
}

func (o *firstOutput) Input(prompt string, password bool) (string, error) {
	line, err := o.Output.Input(prompt, password)
	if err == nil {
		o.in.add(line)
	}
	return line, err
}

// rankOutput is another worker's output: the end of its streams, kept in
// case its cell fails; displays are dropped.
type rankOutput struct {
	mu    sync.Mutex
	buf   []byte
	in    *sharedInput
	reads int
}

func (o *rankOutput) Stream(name, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, text...)
	if len(o.buf) > maxRankOutput {
		o.buf = append(o.buf[:0], o.buf[len(o.buf)-maxRankOutput:]...)
	}
}

func (o *rankOutput) Display(kernel.MIMEBundle, map[string]any, string, bool) {}
func (o *rankOutput) ClearOutput(bool)                                        {}

func (o *rankOutput) Input(string, bool) (string, error) {
	o.mu.Lock()
	i := o.reads
	o.reads++
	o.mu.Unlock()
	return o.in.get(i)
}

func (o *rankOutput) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf)
}

// current is the client that answers completion and inspection: the single
// worker or worker 0.
func (g *Group) current() *Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.one != nil {
		return g.mu.one
	}
	if len(g.mu.many) > 0 && g.mu.stopped == "" {
		return g.mu.many[0]
	}
	return nil
}

func (g *Group) Complete(code string, cursorPos int) kernel.CompleteResult {
	if c := g.current(); c != nil {
		return c.Complete(code, cursorPos)
	}
	return kernel.CompleteResult{CursorStart: cursorPos, CursorEnd: cursorPos}
}

func (g *Group) Inspect(code string, cursorPos, detailLevel int) kernel.InspectResult {
	if c := g.current(); c != nil {
		return c.Inspect(code, cursorPos, detailLevel)
	}
	return kernel.InspectResult{}
}

func (g *Group) IsComplete(code string) kernel.IsCompleteResult {
	if c := g.current(); c != nil {
		return c.IsComplete(code)
	}
	return kernel.IsCompleteResult{Status: "unknown"}
}

// Interrupt interrupts every worker: a multi-worker strategy agrees on it
// at the next Run, so all stop at the same step.
func (g *Group) Interrupt() {
	g.mu.Lock()
	one, many := g.mu.one, g.mu.many
	g.mu.Unlock()
	if one != nil {
		one.Interrupt()
	}
	for _, c := range many {
		c.Interrupt()
	}
}

// Close stops every worker.
func (g *Group) Close() error {
	g.mu.Lock()
	g.stopLocked()
	g.mu.stopped = "the kernel is shutting down"
	g.mu.Unlock()
	g.draining.Wait()
	return nil
}
