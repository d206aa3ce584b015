package worker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/kernel"
)

// magic is one line of a cell's leading block that is not Go: a shell
// command (`!ls`) or a `%word` magic. It travels to the worker as parsed
// here, in the execute frame.
type magic struct {
	Line int    `json:"line"`          // 1-based line in the cell
	Name string `json:"name"`          // "!" for a shell command, else the word after '%'
	Arg  string `json:"arg,omitempty"` // the rest of the line, trimmed
}

// String spells m as the cell does.
func (m magic) String() string {
	if m.Name == "!" {
		return "!" + m.Arg
	}
	return strings.TrimSpace("%" + m.Name + " " + m.Arg)
}

// place is where a magic acts. A cell passes them in this order: the
// kernel's Group, its Client of one worker, the worker process's server;
// each acts on its magics and passes on those that act further on.
type place uint8

const (
	inGroup   place = 1 << iota // the kernel's Group: the set of workers and the journal
	inClient                    // the kernel's Client of one worker process
	inWorker                    // the worker process's server, beside the session
	inSession                   // the session, which reads it from the cell's Go code: no magic
)

// placeNames name the places in messages.
var placeNames = map[place]string{inGroup: "the kernel's Group", inClient: "the kernel's Client", inWorker: "the worker"}

// journaling says what %replay's journal keeps of a magic a cell ran.
type journaling uint8

const (
	journalKeep   journaling = iota // kept: the replay runs it again
	journalDrop                     // left out: a fresh session needs none
	journalEffect                   // kept, and marks the cell as acting outside the session: the replay runs it only when asked
)

// magicDef is one row of the table of magics.
type magicDef struct {
	name    string      // the word after '%'; "!" for a shell command, "?" for help on a name
	usage   [][2]string // each spelling and what it does, as %help shows them
	runs    place       // where it acts, one place or several
	journal journaling
}

// magics is the table of magics, in the order %help shows them and users
// reach for them. Where a row says a magic runs, that place's handler map
// (groupMagics, clientMagics, workerMagics) has its handler, and nothing
// else: TestMagicTable checks it.
var magics = []magicDef{
	{name: "!", runs: inWorker, journal: journalEffect, usage: [][2]string{
		{"!CMD", "run CMD with `/bin/sh` in the worker's directory; output streams into the cell, a non-zero exit status is an error"}}},
	{name: "help", runs: inClient, usage: [][2]string{
		{"%help", "show this table"}}},
	{name: "env", runs: inWorker, usage: [][2]string{
		{"%env [NAME[=VALUE]]", "list the worker's environment, show NAME, or set it (`%env NAME VALUE` works too)"}}},
	{name: "time", runs: inWorker, usage: [][2]string{
		{"%time", "run the rest of the cell and print its wall and CPU time"}}},
	{name: "reset", runs: inGroup | inClient, journal: journalDrop, usage: [][2]string{
		{"%reset", "replace the worker with a fresh one: every variable is gone, the kernel stays"}}},
	{name: "replay", runs: inGroup, journal: journalDrop, usage: [][2]string{
		{"%replay [all]", "after a worker died, re-run the cells that changed its session, in order, in the fresh one (not the cell that killed it); a cell that failed after it ran must fail the same way again; a replay that stops keeps the cells it did not run for the next `%replay`; cells with shell commands are listed and skipped unless all is given"}}},
	{name: "workers", runs: inGroup, journal: journalDrop, usage: [][2]string{
		{"%workers [N|off|restart|status]", "run every later cell on N worker processes of one `strategy.NewMultiWorkerMirrored` (worker 0's output is shown; a worker that fails or dies is reported by number), back on one, on a fresh set, or show them"},
		{"%workers -np N [--hostfile FILE] [--host H,…] [--address ADDR]", "the same with N workers started by `mpirun`, on this machine or the hosts given, reducing through MPI (ADDR: where the kernel listens for them)"}}},
	{name: "limit", runs: inClient | inWorker, usage: [][2]string{
		{"%limit [memory SIZE|off]", "show or set the worker's memory limit (`8GiB`, `512MiB`); a fresh worker keeps it"}}},
	{name: "go", runs: inWorker, usage: [][2]string{
		{"%go get MODULE[@VERSION]", "add a module, or another version of one, to the session's go.mod so cells can import its packages (an import fetches a missing module by itself)"},
		{"%go mod", "show the session's go.mod"}}},
	{name: "?", runs: inSession, usage: [][2]string{
		{"?NAME", "show NAME's signature and documentation"}}},
}

// magicOf returns the row of a magic a cell may hold; false for a name
// that is none.
func magicOf(name string) (magicDef, bool) {
	for _, d := range magics {
		if d.name == name && d.runs&^inSession != 0 {
			return d, true
		}
	}
	return magicDef{}, false
}

// parsedCell is an execute request past the point it entered the
// kernel: its magics parsed once, in order, and its Code the Go code
// alone, with the magics' lines blanked so that positions in Go errors
// still match the cell. Each place takes the magics it runs off the list.
type parsedCell struct {
	kernel.ExecuteRequest
	magics []magic
}

// parseCell splits req's code into its magics and its Go code.
func parseCell(req kernel.ExecuteRequest) parsedCell {
	ms, code := splitMagics(req.Code)
	req.Code = code
	return parsedCell{ExecuteRequest: req, magics: ms}
}

// splitMagics returns the magics of the cell's leading block and the cell
// with those lines blanked, so that line numbers in Go errors still match
// the cell. The leading block is every line before the first line of Go
// code; blank lines and // comments may sit between magics. A magic after
// Go code is left to the Go compiler, which rejects it: `%` and `!` lines
// inside a raw string or a comment block must stay Go.
func splitMagics(code string) ([]magic, string) {
	lines := strings.SplitAfter(code, "\n")
	var ms []magic
	for i, ln := range lines {
		t := strings.TrimSpace(ln)
		switch {
		case t == "" || strings.HasPrefix(t, "//"):
			continue
		case strings.HasPrefix(t, "!"):
			ms = append(ms, magic{Line: i + 1, Name: "!", Arg: strings.TrimSpace(t[1:])})
		case strings.HasPrefix(t, "%"):
			word, arg, _ := strings.Cut(strings.TrimLeft(t, "%"), " ")
			ms = append(ms, magic{Line: i + 1, Name: word, Arg: strings.TrimSpace(arg)})
		default:
			if ms == nil {
				return nil, code
			}
			return ms, blankLines(lines, ms)
		}
	}
	if ms == nil {
		return nil, code
	}
	return ms, blankLines(lines, ms)
}

func blankLines(lines []string, ms []magic) string {
	var b strings.Builder
	next := 0
	for i, ln := range lines {
		if next < len(ms) && ms[next].Line == i+1 {
			next++
			if strings.HasSuffix(ln, "\n") {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteString(ln)
	}
	return b.String()
}

// checkMagics returns an error naming the first magic that does not exist.
func checkMagics(ms []magic) *kernel.ExecError {
	for _, m := range ms {
		if _, ok := magicOf(m.Name); !ok {
			var names []string
			for _, d := range magics {
				if d.runs&^inSession != 0 && d.name != "!" {
					names = append(names, d.name)
				}
			}
			return errResult("UnknownMagic", fmt.Sprintf("line %d: unknown magic %%%s; the magics are %%%s, and !CMD for a shell command (%%help explains each)",
				m.Line, m.Name, strings.Join(names, ", %"))).Err
		}
	}
	return nil
}

// runAt runs at p, in order, the magics of c that act there, each through
// run, and returns the cell as it goes on, holding the magics that act
// further on. done is true when nothing is left to go on with: the cell
// had magics, none is left, and it has no Go code. A magic that acts only
// before p has skipped its place (a Client used as the kernel's executor
// without a Group) and is refused, as is one that does not exist.
func (c parsedCell) runAt(p place, run func(magic) *kernel.ExecError) (next parsedCell, done bool, err *kernel.ExecError) {
	next = c
	next.magics = nil
	for _, m := range c.magics {
		d, ok := magicOf(m.Name)
		if !ok {
			return parsedCell{}, false, checkMagics([]magic{m})
		}
		later := d.runs&^(p|(p-1)) != 0
		if d.runs&p != 0 {
			if err := run(m); err != nil {
				return parsedCell{}, false, err
			}
		} else if !later {
			return parsedCell{}, false, errResult("UsageError", fmt.Sprintf("%%%s: %s runs it; this executor runs one worker's cells", m.Name, placeNames[d.runs&-d.runs])).Err
		}
		if later {
			next.magics = append(next.magics, m)
		}
	}
	done = len(c.magics) > 0 && len(next.magics) == 0 && strings.TrimSpace(next.Code) == ""
	return next, done, nil
}

// helpText is the table of magics as Markdown and as plain text.
func helpText() (markdown, plain string) {
	var md, pl strings.Builder
	md.WriteString("| magic | what it does |\n|---|---|\n")
	pl.WriteString("gotrain magics (in a cell's first lines, before any Go code):\n")
	for _, d := range magics {
		for _, u := range d.usage {
			// A table cell ends at a '|', in a code span too (GitHub's
			// and JupyterLab's Markdown), so the Markdown escapes it.
			fmt.Fprintf(&md, "| `%s` | %s |\n", strings.ReplaceAll(u[0], "|", `\|`), strings.ReplaceAll(u[1], "|", `\|`))
			fmt.Fprintf(&pl, "  %-26s %s\n", u[0], u[1])
		}
	}
	return md.String(), pl.String()
}

// parseLimit parses `%limit`'s argument: "" (show), "memory SIZE" or
// "memory off". It returns the new memory limit in bytes, 0 for off, and
// set=false when the argument only asks to show the limits.
func parseLimit(arg string) (bytes int64, set bool, err error) {
	f := strings.Fields(arg)
	switch {
	case len(f) == 0:
		return 0, false, nil
	case len(f) != 2 || f[0] != "memory":
		return 0, false, fmt.Errorf("%%limit %s: want `%%limit memory SIZE` (such as 8GiB or 512MiB), `%%limit memory off` or `%%limit`", arg)
	case f[1] == "off":
		return 0, true, nil
	}
	n, err := ParseSize(f[1])
	if err != nil {
		return 0, false, fmt.Errorf("%%limit memory: %w", err)
	}
	return n, true, nil
}

var sizeUnits = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a byte count such as "8GiB", "1.5GB", "512M" or "4096".
func ParseSize(s string) (int64, error) {
	num, scale := s, 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, scale = strings.TrimSuffix(s, u.suffix), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*scale > 1<<62 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	if v*scale < 64<<20 {
		return 0, fmt.Errorf("size %q is below 64MiB, less than the worker itself needs", s)
	}
	return int64(v * scale), nil
}

// formatSize prints n bytes with a binary unit.
func formatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v {
			return strconv.FormatFloat(float64(n)/float64(u.v), 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
