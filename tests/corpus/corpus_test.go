// Package corpus_test runs every program of the corpus twice: as a Go
// program under `go run`, and as notebook cells in a fresh gotrain session
// (a worker started by worker.NewClient), and checks that the cells print
// what the program prints. See README.md.
package corpus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/install/installtest"
	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/worker"
)

// cellPackageName is the package name the engine prints for types that
// cells declare (in %T, %#v, reflect and panics). Under `go run` it is
// "main". If the engine prints another name, set it here: the one
// normalisation the runner applies replaces the qualifier
// cellPackageName+"." with "main." in the cells' output before comparing.
// With "main", the comparison is exact.
const cellPackageName = "main"

// cellSeparator is the line that separates cells in a .cells file.
const cellSeparator = "// %%"

// binEnv names a gotrain binary to run the cells with instead of one
// built from this checkout, to compare engines.
const binEnv = "GOTRAIN_CORPUS_BIN"

const (
	programTimeout = 60 * time.Second // one `go run`
	cellTimeout    = 60 * time.Second // one cell
)

type program struct {
	name  string // file name without extension
	goSrc string // path of NAME.go; "" when NAME.out gives the output
	cells []string
	// out is NAME.out: the stdout written by hand where `go run` cannot
	// express what the cells do (a later cell's definition reaching an
	// earlier cell's function, issue 24).
	out string
	// notes are NAME.notes: the "note: " lines the cells print on stderr,
	// in order; nil when there is no such file, which checks nothing.
	notes []string
}

// loadPrograms reads testdata/programs/*.cells with their .go, or .out,
// and .notes files.
func loadPrograms(t *testing.T) []program {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "programs", "*.cells"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no programs in testdata/programs/")
	}
	sort.Strings(paths)
	var ps []program
	for _, p := range paths {
		base := strings.TrimSuffix(p, ".cells")
		src, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		prog := program{name: filepath.Base(base), cells: splitCells(string(src))}
		if _, err := os.Stat(base + ".go"); err == nil {
			prog.goSrc = base + ".go"
		}
		if out, err := os.ReadFile(base + ".out"); err == nil {
			prog.out = string(out)
		}
		if notes, err := os.ReadFile(base + ".notes"); err == nil {
			prog.notes = noteLines(string(notes))
			if prog.notes == nil {
				prog.notes = []string{}
			}
		}
		ps = append(ps, prog)
	}
	return ps
}

// noteLines returns the lines of text that start with "note: ".
func noteLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "note: ") {
			out = append(out, l)
		}
	}
	return out
}

// splitCells splits a .cells file at lines that are exactly cellSeparator.
// Each cell keeps its lines, without the blank lines around them.
func splitCells(src string) []string {
	var cells []string
	var cur []string
	flush := func() {
		c := strings.Trim(strings.Join(cur, "\n"), "\n")
		cells = append(cells, c)
		cur = nil
	}
	for _, ln := range strings.Split(src, "\n") {
		if strings.TrimRight(ln, "\r") == cellSeparator {
			flush()
			continue
		}
		cur = append(cur, ln)
	}
	flush()
	// A separator on the first line does not make an empty first cell.
	if len(cells) > 1 && strings.TrimSpace(cells[0]) == "" {
		cells = cells[1:]
	}
	return cells
}

var nameRE = regexp.MustCompile(`^[0-9]{2}-[a-z0-9]+(-[a-z0-9]+)*$`)

// TestCorpusFiles checks the corpus's layout: every program has a .cells
// file and every .cells file a program, names follow NN-words, every
// program is a main package, and every .cells file has at least two
// cells, none of them empty. It is fast and runs under -short.
func TestCorpusFiles(t *testing.T) {
	have := map[string]bool{}
	for _, ext := range []string{".go", ".out", ".notes"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "programs", "*"+ext))
		for _, p := range files {
			if _, err := os.Stat(strings.TrimSuffix(p, ext) + ".cells"); err != nil {
				t.Errorf("%s has no .cells file", p)
			}
		}
	}
	progs := loadPrograms(t)
	if len(progs) < 120 {
		t.Errorf("the corpus has %d programs, want at least 120", len(progs))
	}
	for _, p := range progs {
		if have[p.name] {
			t.Errorf("%s: two programs of one name", p.name)
		}
		have[p.name] = true
		if !nameRE.MatchString(p.name) {
			t.Errorf("%s: name should be NN-lowercase-words", p.name)
		}
		if (p.goSrc == "") == (p.out == "") {
			t.Errorf("%s: want either %[1]s.go, whose `go run` gives the output, or %[1]s.out, the output written by hand", p.name)
		}
		if p.goSrc != "" {
			src, err := os.ReadFile(p.goSrc)
			if err != nil {
				t.Error(err)
				continue
			}
			if !bytes.HasPrefix(src, []byte("package main\n")) || !bytes.Contains(src, []byte("\nfunc main() {\n")) {
				t.Errorf("%s.go: want `package main` and `func main() {`", p.name)
			}
		}
		if len(p.cells) < 2 {
			t.Errorf("%s.cells: %d cell(s), want at least 2", p.name, len(p.cells))
		}
		for i, c := range p.cells {
			if strings.TrimSpace(c) == "" {
				t.Errorf("%s.cells: cell %d is empty", p.name, i+1)
			}
			if strings.Contains(c, "func main()") {
				t.Errorf("%s.cells: cell %d declares func main; cells are top-level statements", p.name, i+1)
			}
		}
	}
}

// repoRoot is the directory of the module's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestCorpus runs every program under `go run` and as cells in a fresh
// session, and compares their stdout. Run one with
// `go test ./tests/corpus -run TestCorpus/03-defer-loop`.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus runs every program twice; skipped under -short")
	}
	root := repoRoot(t)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	bin := os.Getenv(binEnv)
	if bin == "" {
		bin = buildGotrain(t, root, goTool)
	} else {
		t.Logf("cells run in %s (from $%s)", bin, binEnv)
	}
	progs := loadPrograms(t)
	sem := make(chan struct{}, runtime.NumCPU())
	var mu sync.Mutex
	var passed, failed []string
	t.Cleanup(func() {
		t.Logf("corpus: %d of %d programs print the same as cells; failing: %s",
			len(passed), len(passed)+len(failed), strings.Join(failed, " "))
	})
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				if t.Failed() {
					failed = append(failed, p.name)
				} else {
					passed = append(passed, p.name)
				}
			}()
			sem <- struct{}{}
			defer func() { <-sem }()
			want, from := p.out, p.name+".out"
			if p.goSrc != "" {
				var err error
				if want, err = goRun(goTool, root, p.goSrc); err != nil {
					t.Fatalf("go run %s: %v", p.goSrc, err)
				}
				from = "`go run " + p.name + ".go`"
			}
			got := runCells(t, bin, p)
			got.stdout = normalise(got.stdout)
			if got.stdout != want {
				t.Errorf("stdout differs from %s:\n%s", from, diff(want, got.stdout))
			}
			if notes := noteLines(got.stderr); p.notes != nil && strings.Join(notes, "\n") != strings.Join(p.notes, "\n") {
				t.Errorf("the cells' notes differ from %s.notes:\n%s", p.name, diff(strings.Join(p.notes, "\n")+"\n", strings.Join(notes, "\n")+"\n"))
			}
			for _, e := range got.errors {
				t.Errorf("%s", e)
			}
			for _, v := range got.values {
				t.Errorf("%s (the program prints no such value: a cell that ends with a statement shows nothing)", v)
			}
			if t.Failed() && got.stderr != "" {
				t.Logf("the cells' stderr:\n%s", got.stderr)
			}
		})
	}
}

// buildGotrain builds gotrain as install/build.sh does for users, on Go's
// runtime patched for many plugins where install/goruntime.sh applies the
// patch, so that the corpus runs on the runtime a kernel runs on (issue
// 30), and checks from the binary's symbols that it does.
func buildGotrain(t *testing.T, root, goTool string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gotrain")
	// No tags: the corpus needs no MPI.
	build := exec.Command(filepath.Join(root, "install", "build.sh"), bin, "")
	build.Dir = root
	build.Env = append(build.Environ(), "PATH="+filepath.Dir(goTool)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("install/build.sh: %v\n%s", err, out)
	}
	overlay, said, err := installtest.Overlay(root, goTool)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := installtest.RuntimePatched(bin)
	if err != nil {
		t.Fatal(err)
	}
	version, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("gotrain version: %v\n%s", err, version)
	}
	switch {
	case overlay != "" && !patched:
		t.Fatalf("install/goruntime.sh patches this Go's runtime (%s), but the binary install/build.sh built has the runtime as Go ships it: the corpus would not run on the runtime a kernel runs on", overlay)
	case overlay == "" && patched:
		t.Fatalf("install/goruntime.sh patches nothing here (%s), but the binary's runtime is patched", strings.TrimSpace(said))
	case !strings.Contains(string(version), map[bool]string{true: " patched for many plugins ", false: " unpatched: "}[patched]):
		t.Fatalf("gotrain version says %q, which is wrong about its runtime (patched: %v)", version, patched)
	}
	t.Logf("%s", bytes.TrimSpace(version))
	return bin
}

// goRun returns the stdout of `go run FILE`, run from the module's root so
// that imports resolve through its go.mod.
func goRun(goTool, root, file string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), programTimeout)
	defer cancel()
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, goTool, "run", abs)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w after %v", ctx.Err(), programTimeout)
		}
		return "", fmt.Errorf("%v\nstderr:\n%s", err, stderr.String())
	}
	return stdout.String(), nil
}

// normalise applies the one allowed normalisation: the engine's package
// qualifier for cell types becomes "main.".
func normalise(s string) string {
	if cellPackageName == "main" {
		return s
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(cellPackageName) + `\.`)
	return re.ReplaceAllString(s, "main.")
}

type cellsResult struct {
	stdout, stderr string
	errors         []string // one per failed cell
	values         []string // values cells showed
}

// runCells runs the program's cells, in order, in a fresh session.
func runCells(t *testing.T, bin string, p program) cellsResult {
	t.Helper()
	c, err := worker.NewClient(worker.Config{Command: []string{bin, "worker"}})
	if err != nil {
		t.Fatalf("worker.NewClient: %v", err)
	}
	defer c.Close()
	out := &recorder{}
	var res cellsResult
	for i, cell := range p.cells {
		ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
		r := c.Execute(ctx, kernel.ExecuteRequest{Code: cell, ExecutionCount: i + 1, StoreHistory: true}, out)
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		if r.Value != nil {
			res.values = append(res.values, fmt.Sprintf("cell %d showed a value: %v", i+1, r.Value["text/plain"]))
		}
		if r.Err != nil {
			msg := fmt.Sprintf("cell %d failed: %s: %s", i+1, r.Err.Name, r.Err.Value)
			if timedOut {
				msg += fmt.Sprintf(" (after the cell timeout, %v)", cellTimeout)
			}
			if len(r.Err.Traceback) > 0 {
				msg += "\n\t" + strings.Join(r.Err.Traceback, "\n\t")
			}
			res.errors = append(res.errors, msg)
		}
	}
	res.stdout, res.stderr = out.text()
	return res
}

// maxOutput bounds what the recorder keeps of each stream, so that a cell
// that loops printing cannot exhaust the test's memory before its timeout.
const maxOutput = 8 << 20

// recorder is a kernel.Output that keeps the streams.
type recorder struct {
	mu             sync.Mutex
	stdout, stderr strings.Builder
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.stderr
	if name == "stdout" {
		b = &r.stdout
	}
	switch n := maxOutput - b.Len(); {
	case n <= 0:
	case len(text) > n:
		b.WriteString(text[:n])
		b.WriteString("\n[the corpus runner dropped the rest of this stream]\n")
	default:
		b.WriteString(text)
	}
}

func (r *recorder) Display(data kernel.MIMEBundle, _ map[string]any, _ string, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(&r.stderr, "[display: %v]\n", data["text/plain"])
}

func (r *recorder) ClearOutput(bool) {}

func (r *recorder) Input(string, bool) (string, error) {
	return "", errors.New("the corpus gives no input")
}

func (r *recorder) text() (stdout, stderr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stdout.String(), r.stderr.String()
}

// diff shows where got first differs from want: the line number, both
// versions of that line, and a few lines of context around it.
func diff(want, got string) string {
	wl := splitLines(want)
	gl := splitLines(got)
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (want %d lines, got %d)\n", i+1, lines(want), lines(got))
	lo := max(0, i-3)
	for j := lo; j < i; j++ {
		fmt.Fprintf(&b, "  %q\n", wl[j])
	}
	for j := i; j < min(len(wl), i+4); j++ {
		fmt.Fprintf(&b, "- %q\n", wl[j])
	}
	for j := i; j < min(len(gl), i+4); j++ {
		fmt.Fprintf(&b, "+ %q\n", gl[j])
	}
	return b.String()
}

// splitLines splits s after each newline; a last line without one is a
// line too.
func splitLines(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}
