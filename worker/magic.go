package worker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// magic is one line of a cell's leading block that is not Go: a shell
// command (`!ls`) or a `%word` magic.
type magic struct {
	line int    // 1-based line in the cell
	name string // "!" for a shell command, else the word after '%'
	arg  string // the rest of the line, trimmed
}

// magicDoc is the table %help shows and the README repeats; one row per
// magic, in the order users reach for them.
var magicDoc = [][2]string{
	{"!CMD", "run CMD with /bin/sh in the worker's directory; output streams into the cell, a non-zero exit status is an error"},
	{"%help", "show this table"},
	{"%env [NAME[=VALUE]]", "list the worker's environment, show NAME, or set it (`%env NAME VALUE` works too)"},
	{"%time", "run the rest of the cell and print its wall and CPU time"},
	{"%reset", "replace the worker with a fresh one: every variable is gone, the kernel stays"},
	{"%replay [all]", "after a worker died, re-run the cells that changed its session, in order, in the fresh one (not the cell that killed it); a cell that failed after it ran must fail the same way again; a replay that stops keeps the cells it did not run for the next %replay; cells with shell commands are listed and skipped unless all is given"},
	{"%workers [N|off|restart|status]", "run every later cell on N worker processes of one strategy.NewMultiWorkerMirrored (worker 0's output is shown; a worker that fails or dies is reported by number), back on one, on a fresh set, or show them"},
	{"%workers -np N [--hostfile FILE] [--host H,…] [--address ADDR]", "the same with N workers started by mpirun, on this machine or the hosts given, reducing through MPI (ADDR: where the kernel listens for them)"},
	{"%limit [memory SIZE|off]", "show or set the worker's memory limit (`8GiB`, `512MiB`); a fresh worker keeps it"},
	{"%go get MODULE[@VERSION]", "add a module, or another version of one, to the session's go.mod so cells can import its packages (an import fetches a missing module by itself)"},
	{"%go mod", "show the session's go.mod"},
	{"?NAME", "show NAME's signature and documentation"},
}

// magicNames are the %words magicDoc lists.
var magicNames = []string{"help", "env", "time", "reset", "replay", "limit", "go", "workers"}

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
			ms = append(ms, magic{line: i + 1, name: "!", arg: strings.TrimSpace(t[1:])})
		case strings.HasPrefix(t, "%"):
			word, arg, _ := strings.Cut(strings.TrimLeft(t, "%"), " ")
			ms = append(ms, magic{line: i + 1, name: word, arg: strings.TrimSpace(arg)})
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
		if next < len(ms) && ms[next].line == i+1 {
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
func checkMagics(ms []magic) error {
	for _, m := range ms {
		if m.name != "!" && !slices.Contains(magicNames, m.name) {
			return fmt.Errorf("line %d: unknown magic %%%s; the magics are %%%s, and !CMD for a shell command (%%help explains each)",
				m.line, m.name, strings.Join(magicNames, ", %"))
		}
	}
	return nil
}

// helpText is magicDoc as Markdown and as plain text.
func helpText() (markdown, plain string) {
	var md, pl strings.Builder
	md.WriteString("| magic | what it does |\n|---|---|\n")
	pl.WriteString("gotrain magics (in a cell's first lines, before any Go code):\n")
	for _, row := range magicDoc {
		fmt.Fprintf(&md, "| `%s` | %s |\n", row[0], row[1])
		fmt.Fprintf(&pl, "  %-26s %s\n", row[0], row[1])
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
