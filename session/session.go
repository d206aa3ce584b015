package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/cells/rt"
	"github.com/gotrain/gotrain/display"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernel"
)

// Options configures a Session.
type Options struct {
	// Dir holds the session's module and builds; empty means a new
	// folder in the temporary directory, which names its owner so that a
	// later session removes it once its process is gone (sweepDirs).
	// Close removes it.
	Dir string
	// Source is gotrain's source tree, which cells build against; empty
	// means the tree this binary was built from.
	Source string
	// Log receives progress lines, such as a module being fetched.
	Log func(string)
}

// buildsNotice is how many distinct cells the session loads between notes
// on the memory they hold.
const buildsNotice = 200

// ErrClosed is returned by Execute after Close.
var ErrClosed = errors.New("session: closed")

// Session is a live Go session whose cells are compiled by the Go
// toolchain and run in this process. Execute calls must not overlap (the
// kernel serializes them); Complete, Inspect and IsComplete may run while
// no cell runs, and Interrupt at any time. A Session must not be used
// after Close.
type Session struct {
	comp *cells.Compiler
	tc   *cells.Toolchain
	dir  string
	docs *docIndex

	// compileMu orders the compiler's use: a cell's compilation, and the
	// completion and inspection that type-check against the session.
	compileMu sync.Mutex

	mu struct {
		sync.Mutex
		out     kernel.Output // the running cell's output, nil between cells
		running *cellRun
		closed  bool
		// counts maps a loaded cell's package to the execution count it
		// last ran as, so that a goroutine's panic can name the cell.
		counts map[string]int
	}
}

// cellRun is the state shared between Execute, the cell's goroutine and
// Interrupt.
type cellRun struct {
	done       chan struct{} // closed when the cell's goroutine returns
	abandon    chan struct{} // closed by a second interrupt
	cancel     context.CancelFunc
	interrupts int
	compiled   atomic.Bool // the statements run; before, the cell compiles
	result     kernel.ExecuteResult
}

// New starts a session.
func New(opts Options) (*Session, error) {
	dir := opts.Dir
	if dir == "" {
		d, err := newDir()
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		dir = d
	}
	made := opts.Dir == ""
	tc, err := cells.NewToolchain(cells.ToolchainConfig{Source: opts.Source, ModuleDir: dir + "/module", Log: opts.Log})
	if err != nil {
		if made {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	comp, err := cells.New(cells.Config{Dir: dir + "/cells", Toolchain: tc})
	if err != nil {
		if made {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	s := &Session{comp: comp, tc: tc, dir: dir, docs: &docIndex{dir: func(path string) string {
		if d := tc.PackageDir(path); d != "" {
			return d
		}
		// builtin, and standard packages no cell imported yet.
		return filepath.Join(runtime.GOROOT(), "src", filepath.FromSlash(path))
	}, pkgs: map[string]map[string]string{}}}
	display.SetSink(displaySink{s})
	rt.ReadLine = s.readLine
	s.mu.counts = map[string]int{}
	rt.GoroutinePanic = s.goroutinePanic
	return s, nil
}

// Close removes the session's build products. Loaded cells stay in the
// process, which should exit.
func (s *Session) Close() error {
	s.mu.Lock()
	s.mu.closed = true
	s.mu.Unlock()
	return os.RemoveAll(s.dir)
}

// ModuleFile returns the path of the session's go.mod.
func (s *Session) ModuleFile() string { return s.tc.ModuleFile() }

// GoGet adds module, MODULE[@VERSION], to the session's go.mod, or changes
// its version, so that cells may import its packages: the worker's
// `%go get`. A version of a module the kernel links is refused.
func (s *Session) GoGet(module string) error {
	s.compileMu.Lock()
	defer s.compileMu.Unlock()
	return s.tc.Get(module)
}

// Running reports whether a cell is running: compiling, or running its
// statements.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.running != nil
}

// Interrupt stops the running cell at its next safe point: every loop
// iteration and function entry of cell code, an interruptible sleep, a
// training step. A cell still being compiled stops compiling. A second
// interrupt, for a cell blocked where no safe point runs (a channel
// receive, a long C call), abandons its goroutine and returns control.
func (s *Session) Interrupt() {
	s.mu.Lock()
	run := s.mu.running
	if run == nil {
		s.mu.Unlock()
		return
	}
	run.interrupts++
	n := run.interrupts
	s.mu.Unlock()
	if n == 1 {
		safepoint.Raise()
		run.cancel()
		return
	}
	if n == 2 {
		close(run.abandon)
	}
}

func (s *Session) output() kernel.Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.out
}

// readLine answers the cells' stdin from the front end's input box.
func (s *Session) readLine() (string, error) {
	out := s.output()
	if out == nil {
		return "", errors.New("session: stdin read between cells: there is no front end to ask")
	}
	return out.Input("", false)
}

// Execute runs one cell: it compiles it (reusing the build of an unchanged
// cell), then runs its statements on a goroutine of their own.
func (s *Session) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	if name, ok := helpRequest(req.Code); ok {
		return s.help(name)
	}
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "SessionClosed", Value: ErrClosed.Error()}}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := &cellRun{done: make(chan struct{}), abandon: make(chan struct{}), cancel: cancel}
	// Cleared before the cell counts as running, so that an Interrupt that
	// sees it running is never withdrawn.
	safepoint.Clear()
	s.mu.running = run
	s.mu.out = out
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.mu.running = nil
		s.mu.out = nil
		s.mu.Unlock()
	}()

	go func() {
		defer close(run.done)
		run.result = s.runCell(cctx, req.Code, req.ExecutionCount)
	}()
	select {
	case <-run.done:
		return run.result
	case <-run.abandon:
		const msg = "interrupted twice: the cell was blocked where no safe point runs (a channel operation, a lock, a system or C call); its goroutine is abandoned and may still run"
		return kernel.ExecuteResult{Err: &kernel.ExecError{Name: kernel.EnameInterrupted, Value: msg, Traceback: []string{"Interrupted: " + msg,
			"the session's variables keep the values they had; a variable the abandoned cell was assigning may change if it ever wakes up"}}}
	}
}

// runCell compiles and runs one cell on the cell's goroutine.
func (s *Session) runCell(ctx context.Context, code string, count int) (res kernel.ExecuteResult) {
	s.compileMu.Lock()
	cell, err := s.comp.Compile(ctx, code)
	s.compileMu.Unlock()
	if err != nil {
		if ctx.Err() != nil && safepoint.Raised() {
			return interrupted("the cell was interrupted while it compiled; nothing of it ran")
		}
		return kernel.ExecuteResult{Err: compileError(err, code)}
	}
	for _, n := range cell.Notices {
		fmt.Fprintln(os.Stderr, "note: "+n)
	}
	if n := s.comp.Builds(); !cell.Reused && n%buildsNotice == 0 {
		// A loaded plugin cannot be unloaded: about 0.6 MiB resident each,
		// as docs/benchmarks.md's table measures through a kernel at cells 1 to
		// 2,000 (the runtime patched, the page-out on).
		fmt.Fprintf(os.Stderr, "note: this session has loaded %d distinct cells, about %d MiB that stay until the worker restarts; %%reset starts a fresh one\n", n, n*6/10)
	}
	s.mu.Lock()
	if s.mu.running != nil {
		s.mu.running.compiled.Store(true)
	}
	if count > 0 {
		s.mu.counts[cellPackage(cell.Run)] = count
	}
	s.mu.Unlock()
	rt.TakeResult()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if err, ok := r.(error); ok && errors.Is(err, safepoint.ErrInterrupted) {
			res = interrupted("the cell stopped at a safe point; variables keep the values they had there")
			return
		}
		res = kernel.ExecuteResult{Err: panicError(r, debug.Stack())}
	}()
	cell.Run()
	if v, ok := rt.TakeResult(); ok {
		res.Value = formatValue(v)
	}
	return res
}

// cellPackage returns the package of a cell's compiled statements, as its
// functions' frames name it: "gotrain.cells/c12".
func cellPackage(run func()) string {
	name := runtime.FuncForPC(reflect.ValueOf(run).Pointer()).Name()
	if m := cellFrame.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

func interrupted(why string) kernel.ExecuteResult {
	return kernel.ExecuteResult{Err: &kernel.ExecError{Name: kernel.EnameInterrupted, Value: "interrupted", Traceback: []string{"Interrupted: " + why}}}
}

// compileError shows a cell's compile errors with the lines they point at.
func compileError(err error, code string) *kernel.ExecError {
	var list cells.ErrorList
	if !errors.As(err, &list) {
		list = cells.ErrorList{{Msg: err.Error()}}
	}
	lines := strings.Split(code, "\n")
	var tb []string
	for _, e := range list {
		if e.Line == 0 {
			tb = append(tb, e.Msg)
			continue
		}
		tb = append(tb, fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg))
		if e.Line <= len(lines) {
			tb = append(tb, "    "+strings.TrimRight(lines[e.Line-1], " \t"))
		}
	}
	value := list[0].Msg
	if list[0].Line > 0 {
		value = fmt.Sprintf("line %d: %s", list[0].Line, list[0].Msg)
	}
	if i := strings.IndexByte(value, '\n'); i >= 0 {
		value = value[:i]
	}
	return &kernel.ExecError{Name: "CompileError", Value: value, Traceback: tb}
}

// cellFrame matches a cell's function in a stack trace; its group is the
// cell's package.
var cellFrame = regexp.MustCompile(`(gotrain\.cells/c\d+)\.`)

// panicError shows a panic of a cell with the frames of cell code.
func panicError(v any, stack []byte) *kernel.ExecError {
	value := fmt.Sprint(v)
	if err, ok := v.(error); ok {
		value = err.Error()
	}
	tb := []string{"panic: " + value}
	if _, ok := v.(runtime.Error); !ok {
		if _, isErr := v.(error); !isErr {
			tb[0] = fmt.Sprintf("panic: %v (%T)", v, v)
		}
	}
	tb = append(tb, cellStack(stack)...)
	return &kernel.ExecError{Name: kernel.EnamePanic, Value: value, Traceback: tb}
}

// stackFrame is one frame of a stack as runtime/debug.Stack prints it.
type stackFrame struct {
	fn   string // the function and its arguments, or "created by F in goroutine N"
	file string // file:line, without the frame's pc offset
	cell string // the cell package of a function of cell code ("gotrain.cells/c12"), else ""
	line int    // the line in file: a cell's own line for cell code
}

// parseStack reads the frames of a stack as runtime/debug.Stack prints
// it, innermost first; the last may be the goroutine's "created by".
func parseStack(stack []byte) []stackFrame {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	var frames []stackFrame
	for i := 1; i+1 < len(lines); i += 2 {
		f := stackFrame{fn: lines[i], file: strings.TrimSpace(lines[i+1])}
		if j := strings.LastIndex(f.file, " +0x"); j >= 0 {
			f.file = f.file[:j]
		}
		if j := strings.LastIndexByte(f.file, ':'); j >= 0 {
			f.line, _ = strconv.Atoi(f.file[j+1:])
		}
		if m := cellFrame.FindStringSubmatch(f.fn); m != nil {
			f.cell = m[1]
		}
		frames = append(frames, f)
	}
	return frames
}

// name is the frame's function as the cell wrote it: main.F, and the
// cell's statements main.cell().
func (f stackFrame) name() string {
	name := cellFrame.ReplaceAllString(f.fn, "main.")
	return strings.Replace(name, "main._gtcell()", "main.cell()", 1)
}

// cellStack keeps the frames of a stack that belong to cells (their
// functions named as the cell named them, their lines the cell's), and the
// library frames between them.
func cellStack(stack []byte) []string {
	frames := parseStack(stack)
	first, last := -1, -1
	for i, f := range frames {
		if f.cell != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	// From the panic's own frame: skip the runtime's and the recover's.
	start := first
	for i := first - 1; i >= 0; i-- {
		if strings.HasPrefix(frames[i].fn, "panic(") || strings.HasPrefix(frames[i].fn, "runtime.") {
			break
		}
		start = i
	}
	var out []string
	for _, f := range frames[start : last+1] {
		out = append(out, "  "+f.name(), "      "+f.file)
	}
	return out
}

// goroutinePanic reports the panic of a goroutine a cell started; the
// worker goes on, and the report is the note at the next cell. It names
// the cell and line of the innermost frame in cell code, and where the
// goroutine was started.
func (s *Session) goroutinePanic(v any, stack []byte) {
	e := panicError(v, stack)
	var where []string
	var site, start *stackFrame
	frames := parseStack(stack)
	for i := range frames {
		f := &frames[i]
		switch {
		case f.cell == "":
		case strings.HasPrefix(f.fn, "created by "):
			start = f
		case site == nil:
			site = f
		}
	}
	if site != nil {
		fn := site.name()
		if i := strings.LastIndexByte(fn, '('); i > 0 {
			fn = fn[:i]
		}
		where = append(where, fmt.Sprintf("at %s, line %d (in %s)", s.cellName(site.cell), site.line, fn))
	}
	if start != nil {
		where = append(where, fmt.Sprintf("the goroutine was started at %s, line %d", s.cellName(start.cell), start.line))
	}
	head := "panic in a goroutine (it ended; the session goes on): " + e.Value
	if where != nil {
		head += "\n  " + strings.Join(where, "; ")
	}
	fmt.Fprintf(os.Stderr, "%s\n%s\n", head, strings.Join(e.Traceback[1:], "\n"))
}

// cellName names the cell compiled as package pkg by the execution count
// it last ran as: "cell [7]".
func (s *Session) cellName(pkg string) string {
	s.mu.Lock()
	n := s.mu.counts[pkg]
	s.mu.Unlock()
	if n == 0 {
		return "a cell" // run by a request with no execution count
	}
	return fmt.Sprintf("cell [%d]", n)
}

// formatValue shows a cell's final value: through its display.Renderer,
// or as fmt's %v.
func formatValue(v any) kernel.MIMEBundle {
	if r, ok := v.(display.Renderer); ok {
		return kernel.MIMEBundle(r.Render())
	}
	return kernel.MIMEBundle{"text/plain": fmt.Sprintf("%v", v)}
}

// displaySink forwards what display shows to the running cell; between
// cells a display's text goes to stdout, where the worker keeps it for the
// next cell.
type displaySink struct{ s *Session }

func (d displaySink) Display(b display.Bundle, id string, update bool) {
	if out := d.s.output(); out != nil {
		out.Display(kernel.MIMEBundle(b), nil, id, update)
		return
	}
	if t, ok := b["text/plain"].(string); ok && !update {
		fmt.Fprintln(os.Stdout, t)
	}
}

func (d displaySink) Clear(wait bool) {
	if out := d.s.output(); out != nil {
		out.ClearOutput(wait)
	}
}

// helpPattern matches `?name` and `name?`, where name is an identifier or
// a selector chain.
var helpPattern = regexp.MustCompile(`^\s*(?:\?\s*([\pL_][\pL\pN_.]*)|([\pL_][\pL\pN_.]*)\s*\?)\s*$`)

// helpRequest reports whether code asks for help, and on what.
func helpRequest(code string) (string, bool) {
	m := helpPattern.FindStringSubmatch(code)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// help answers `?name` with the inspection of name, shown in the front
// end's pager, as ipykernel does; an unknown name is an error naming it.
func (s *Session) help(name string) kernel.ExecuteResult {
	r := s.Inspect(name, len([]rune(name)), 1)
	if !r.Found {
		return kernel.ExecuteResult{Err: &kernel.ExecError{
			Name: "NameError", Value: fmt.Sprintf("session: no help for %q: not a package, function, type or variable in scope", name),
		}}
	}
	return kernel.ExecuteResult{Pages: []kernel.MIMEBundle{r.Data}}
}
