package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"

	"github.com/gotrain/gotrain/display"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernel"
)

// Session is a persistent Go interpreter session. Execute calls must not
// overlap (the kernel serializes them); Complete, Inspect and IsComplete
// may run while no cell runs, and Interrupt at any time. A Session must not
// be used after Close.
type Session struct {
	interp   *interp.Interpreter
	router   *router
	pkgNames map[string]string // import path to package name, for every table in use; immutable
	prevSink display.Sink
	symbolTables
	docs *docIndex

	// compileMu orders compilations across cells. Execute normally waits
	// for a cell's goroutine, but not for one it abandoned while parked;
	// without this lock nothing would order that goroutine's compilation
	// before the next cell's (the race detector rightly says so).
	compileMu sync.Mutex

	mu struct {
		sync.Mutex
		imports map[string]string       // name in the cells' file scope to import path
		decls   map[string]declInfo     // "T" and "T.M" to the source that declared them
		names   map[string]nameInfo     // globals the cells declared
		stale   map[string]int          // globals a failed chunk declared, to the line; see markStale
		typeRT  map[string]reflect.Type // a declared type's reflect type (nil if unknown); see declaredRTypes
		running *cellRun
		closed  bool
		broken  string // why closures of earlier cells may misbehave, after a forced stop
	}
}

type declInfo struct {
	src  string
	line int
}

// cellRun is the state shared between Execute, its evaluation goroutine and
// Interrupt.
type cellRun struct {
	done       chan struct{} // closed when the evaluation goroutine returns
	escalate   chan struct{} // a second interrupt that no safe point saw
	interrupts int           // guarded by Session.mu
	goid       chan int64    // the evaluation goroutine's id, sent once
	abandoned  chan struct{} // closed when Execute stops waiting for the goroutine
	result     kernel.ExecuteResult
}

// New starts a session with the standard library, the display package and
// opts.Symbols available to cells.
func New(opts Options) (*Session, error) {
	s := &Session{router: newRouter(opts.Stdout, opts.Stderr), pkgNames: map[string]string{}, docs: newDocIndex(opts)}
	s.mu.imports = map[string]string{}
	s.mu.decls = map[string]declInfo{}
	s.mu.names = map[string]nameInfo{}
	s.mu.stale = map[string]int{}
	s.mu.typeRT = map[string]reflect.Type{}
	s.interp = interp.New(interp.Options{
		GoPath: opts.GoPath,
		// The session runs in a worker process of its own, so cells get
		// what a program gets: the process's real environment (os.Setenv
		// and %env agree, and `!cmd` children see it), and os.Exit.
		Unrestricted: true,
		Stdin:        stdinReader{s.router},
		Stdout:       streamWriter{s.router, 0},
		Stderr:       interpStderr{s.router},
	})
	tables := append([]interp.Exports{stdlib.Symbols, shimSymbols, s.runtimeSymbols()}, opts.Symbols...)
	s.tables = tables
	for _, t := range tables {
		if err := s.interp.Use(t); err != nil {
			return nil, fmt.Errorf("session: could not load symbol table: %w", err)
		}
		for key := range t {
			if i := strings.LastIndex(key, "/"); i > 0 {
				s.pkgNames[key[:i]] = key[i+1:]
			}
		}
	}
	if _, err := s.interp.Eval(preludeSource); err != nil {
		return nil, fmt.Errorf("session: prelude failed: %w", err)
	}
	s.prevSink = display.SetSink(displaySink{s.router})
	return s, nil
}

// runtimeSymbols replaces the standard library symbols that must reach the
// running cell or obey interrupts: time.Sleep becomes interruptible, and
// os.Stdin reads the front end's input box (an io.Reader rather than an
// *os.File, since the notebook is not a file descriptor).
func (s *Session) runtimeSymbols() interp.Exports {
	var stdin io.Reader = stdinReader{s.router}
	return interp.Exports{
		"time/time": {
			"Sleep": reflect.ValueOf(safepoint.Sleep),
			"After": reflect.ValueOf(interruptibleAfter),
		},
		"os/os": {
			// os.Stdout and os.Stderr stay the process's *os.File: the
			// worker captures fds 1 and 2 for the running cell.
			"Stdin": reflect.ValueOf(&stdin).Elem(),
			// yaegi's stdlib table makes Exit a panic and refuses
			// FindProcess on the process itself, sandboxing a host that
			// runs scripts; a worker is the program's own process.
			"Exit":        reflect.ValueOf(os.Exit),
			"FindProcess": reflect.ValueOf(os.FindProcess),
		},
		shimPath + "/_gotrain": {
			"Go":      reflect.ValueOf(s.goTrampoline),
			"GoPanic": reflect.ValueOf(s.goPanic),
		},
	}
}

// interruptibleAfter is time.After for cells: the channel never fires after
// an interrupt, and the receive is woken by the session's second interrupt.
// It cannot panic in the receiving goroutine, so it only saves a timer.
func interruptibleAfter(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case v := <-t.C:
			ch <- v
		case <-safepoint.Done():
		}
	}()
	return ch
}

// Close releases the session: it restores the previous display sink. A
// goroutine a cell left running keeps running; the interpreter offers no
// way to stop it.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return ErrClosed
	}
	s.mu.closed = true
	display.SetSink(s.prevSink)
	return nil
}

// globals returns the interpreter's global variables and constants. yaegi
// registers the symbols of a chunk that failed to compile without making
// room for them, and Globals then indexes past its frame: such a session
// reports no globals rather than crash.
func (s *Session) globals() (g map[string]reflect.Value) {
	defer func() {
		if recover() != nil {
			g = nil
		}
	}()
	return s.interp.Globals()
}

// goTrampoline runs f(args...) as the body of a goroutine a cell started,
// and reports its panic instead of letting it end the process.
func (s *Session) goTrampoline(line int, f any, args ...any) {
	defer func() {
		if r := recover(); r != nil {
			s.goPanic(line, r)
		}
	}()
	fv := reflect.ValueOf(f)
	if fv.Kind() != reflect.Func {
		panic(fmt.Errorf("session: go statement: want a function, got %T", f))
	}
	t := fv.Type()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		var pt reflect.Type
		switch {
		case t.IsVariadic() && i >= t.NumIn()-1:
			pt = t.In(t.NumIn() - 1).Elem()
		case i < t.NumIn():
			pt = t.In(i)
		default:
			panic(fmt.Errorf("session: go statement: want %d arguments, got %d", t.NumIn(), len(args)))
		}
		if a == nil {
			in[i] = reflect.Zero(pt)
			continue
		}
		v := reflect.ValueOf(a)
		if !v.Type().AssignableTo(pt) && v.CanConvert(pt) {
			// Untyped constants arrive as int or float64 through ...any.
			v = v.Convert(pt)
		}
		in[i] = v
	}
	fv.Call(in)
}

func (s *Session) goPanic(line int, r any) {
	if isInterrupt(r) {
		s.router.write(1, []byte(fmt.Sprintf("session: goroutine started at line %d stopped: interrupted\n", line)))
		return
	}
	s.router.write(1, []byte(fmt.Sprintf("session: panic in goroutine started at line %d: %v (recovered; the kernel keeps running)\n", line, r)))
}

func isInterrupt(v any) bool {
	if p, ok := v.(interp.Panic); ok {
		v = p.Value
	}
	err, ok := v.(error)
	return ok && errors.Is(err, safepoint.ErrInterrupted)
}

// Running reports whether a cell is running now.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.running != nil
}

// Interrupt asks the running cell to stop at its next safe point. A second
// Interrupt while no safe point has seen the first stops the cell by force;
// see Execute.
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
	safepoint.Raise()
	if n >= 2 && safepoint.Handled() == 0 {
		select {
		case run.escalate <- struct{}{}:
		default:
		}
	}
}

// Execute runs one cell.
//
// A cell stops on Interrupt at its next safe point (an output write, a
// sleep, a library call that checks internal/safepoint) with an
// "Interrupted" error, and the session stays intact. A cell with no safe
// point is stopped by a second Interrupt: if its goroutine is blocked (a
// channel receive that will never come), it is left parked and the session
// goes on untouched; if it is computing, the interpreter's context is
// cancelled, which stops it but also makes closures created by earlier
// cells return zero values from then on. Either way the reply advises a
// restart. Cancelling ctx has the same effect as the forced stop.
func (s *Session) Execute(ctx context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	if name, ok := helpRequest(req.Code); ok {
		return s.help(name)
	}
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "SessionClosed", Value: ErrClosed.Error()}}
	}
	run := &cellRun{
		done:      make(chan struct{}),
		escalate:  make(chan struct{}, 1),
		goid:      make(chan int64, 1),
		abandoned: make(chan struct{}),
	}
	// Cleared before the cell counts as running, so that an Interrupt that
	// sees it running is never withdrawn.
	safepoint.Clear()
	s.mu.running = run
	s.mu.Unlock()
	s.router.attach(out)
	defer func() {
		s.mu.Lock()
		s.mu.running = nil
		s.mu.Unlock()
	}()

	// evalCtx is cancelled only to force a stop: cancelling it after a
	// parked cell was abandoned would stop the interpreter and break the
	// closures that abandoning it was meant to keep.
	evalCtx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(run.done)
		run.goid <- goid()
		run.result = s.runCell(evalCtx, run, req.Code)
	}()

	select {
	case <-run.done:
		cancel()
		s.router.detach()
		res := run.result
		s.mu.Lock()
		broken := s.mu.broken
		s.mu.Unlock()
		if res.Err != nil && broken != "" {
			// A failure after a forced stop may be its consequence.
			res.Err.Traceback = append(res.Err.Traceback, "note: "+broken+"; closures created before it may return zero values; restart the kernel")
		}
		return res
	case <-run.escalate:
	case <-ctx.Done():
	}
	return s.forceStop(run, cancel)
}

// forceStop is the last resort for a cell that no safe point stops.
func (s *Session) forceStop(run *cellRun, cancel context.CancelFunc) kernel.ExecuteResult {
	defer s.router.detach()
	id := <-run.goid
	state, blocked := waitState(id)
	const advice = "interrupted without a safe point; restart the kernel to be safe"
	if blocked {
		// Leave the goroutine parked: cancelling would break earlier
		// closures, and a parked goroutine harms nobody. If it ever wakes
		// up, runCell sees abandoned and runs no further chunk.
		close(run.abandoned)
		return kernel.ExecuteResult{Err: &kernel.ExecError{
			Name:      "Interrupted",
			Value:     advice,
			Traceback: []string{"Interrupted: " + advice, fmt.Sprintf("the cell was blocked (%s) and is left parked", state)},
		}}
	}
	cancel()
	close(run.abandoned)
	joined := "the cell's goroutine stopped"
	select {
	case <-run.done:
	case <-time.After(2 * time.Second):
		joined = "the cell's goroutine did not stop within 2s and is abandoned"
	}
	s.mu.Lock()
	s.mu.broken = "a cell was stopped without a safe point"
	s.mu.Unlock()
	return kernel.ExecuteResult{Err: &kernel.ExecError{
		Name:  "Interrupted",
		Value: advice,
		Traceback: []string{"Interrupted: " + advice, joined,
			"closures created by earlier cells may now return zero values (a limit of the interpreter)"},
	}}
}

// runCell evaluates the chunks of one cell in order.
func (s *Session) runCell(ctx context.Context, run *cellRun, code string) (res kernel.ExecuteResult) {
	chunks := splitCell(code)
	for i, c := range chunks {
		select {
		case <-run.abandoned:
			return res
		default:
		}
		p, err := s.prepare(code, c)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) {
				list = ErrorList{{Msg: err.Error()}}
			}
			return kernel.ExecuteResult{Err: compileExecError(list, code)}
		}
		if failed, ok := s.runImports(ctx, p, code); !ok {
			return failed
		}
		if p.predecl != "" {
			// Declarations that typed defines moved out of the chunk.
			prog, err := s.compile(p.predecl)
			if err == nil {
				_, err = s.interp.ExecuteWithContext(ctx, prog)
			}
			if err != nil {
				s.markStale(p)
				return kernel.ExecuteResult{Err: compileExecError(s.explain(compileErrors(err), p), code)}
			}
		}
		if p.kind == importChunk {
			s.commit(p, code, c)
			continue
		}
		prog, compileErr := s.compileChunk(p, code)
		if compileErr != nil {
			s.markStale(p)
			return kernel.ExecuteResult{Err: compileErr}
		}
		v, err := s.interp.ExecuteWithContext(ctx, prog)
		if err != nil {
			if list, ok := s.initLoop(err, p); ok {
				s.markStale(p)
				return kernel.ExecuteResult{Err: compileExecError(list, code)}
			}
			return s.runtimeError(err, p)
		}
		s.commit(p, code, c)
		if p.declaresMain {
			s.retireMain()
		}
		if p.postinit != "" {
			// The initial values that deferVarInits moved out of the chunk.
			prog, err := s.compile(p.postinit)
			if err != nil {
				s.markStale(p)
				return kernel.ExecuteResult{Err: compileExecError(s.explain(compileErrors(err), p), code)}
			}
			if _, err := s.interp.ExecuteWithContext(ctx, prog); err != nil {
				return s.runtimeError(err, nil)
			}
		}
		if i == len(chunks)-1 && p.final && s.returnsValue(p.callee) {
			res.Value = formatValue(v)
		}
	}
	return res
}

// compileChunk compiles a prepared chunk, explaining the interpreter's
// errors.
func (s *Session) compileChunk(p *prepared, code string) (*interp.Program, *kernel.ExecError) {
	if list := s.staleUses(p); len(list) > 0 {
		return nil, compileExecError(list, code)
	}
	prog, err := s.compile(p.src)
	if errors.Is(err, errCompilerPanic) {
		// An undefined name can make yaegi's compiler crash rather than
		// say so; name it.
		if id := s.undefined(p); id != nil {
			return nil, compileExecError(ErrorList{*id}, code)
		}
		if len(p.ranges) > 0 {
			// The usual cause: a range over an int or a function whose
			// type the rewriter could not tell from the cell.
			pos := p.ranges[0]
			e := Error{Pos: token.Position{Line: pos.Line, Column: pos.Column}, Msg: "the interpreter cannot range over this value; if it is an int, write `for i := 0; i < n; i++`; range over a function is not supported by the interpreter (" + err.Error() + ")"}
			return nil, compileExecError(ErrorList{e}, code)
		}
	}
	if err != nil {
		return nil, compileExecError(s.explain(compileErrors(err), p), code)
	}
	return prog, nil
}

// markStale records the globals a chunk that failed to compile declared.
// yaegi registers a chunk's globals before it finds the chunk's errors and
// keeps them: a variable of an earlier cell that the failed chunk declares
// again reads as zero from then on, and a function as one that returns
// zero values (TestIssueFailedCellClobbers). Until a cell declares them
// again, using them is an error rather than a silent zero.
func (s *Session) markStale(p *prepared) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, n := range p.names {
		if n.kind != "type" {
			s.mu.stale[name] = n.line
		}
	}
}

// staleUses returns an error for each use in p of a global that a failed
// chunk left without a value.
func (s *Session) staleUses(p *prepared) ErrorList {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mu.stale) == 0 {
		return nil
	}
	var list ErrorList
	for _, id := range p.unresolved {
		line, ok := s.mu.stale[id.Name]
		if _, declared := p.names[id.Name]; !ok || declared {
			continue
		}
		pos := p.pos(id.Pos())
		list = append(list, Error{Pos: token.Position{Line: pos.Line, Column: pos.Column},
			Msg: fmt.Sprintf("%s has no value: a cell that declares it (at its line %d) failed to compile, and the interpreter keeps the broken declaration; run a cell that declares %s", id.Name, line, id.Name)})
	}
	return list
}

// retireMain replaces a func main that a cell declared, after yaegi ran it
// once as a program's main, with an empty one: yaegi runs the package's
// main again after every later compilation, so each later cell would run
// the user's main first.
func (s *Session) retireMain() {
	prog, err := s.compile("func main() {}")
	if err == nil {
		_, _ = s.interp.Execute(prog)
	}
}

// runImports makes p's imports one declaration at a time. yaegi keeps
// the imports of a chunk that failed up to the failing one, so a chunk
// compiled whole and refused would leave names bound that the session does
// not know of, and the next `import "fmt"` would fail with "fmt/_.go
// redeclared in this block" (TestIssueFailedImport). Each import that
// succeeds is recorded at once.
func (s *Session) runImports(ctx context.Context, p *prepared, code string) (kernel.ExecuteResult, bool) {
	for _, sp := range p.specs {
		prog, err := s.compile(sp.source())
		if err == nil {
			_, err = s.interp.ExecuteWithContext(ctx, prog)
		}
		if err != nil {
			return kernel.ExecuteResult{Err: compileExecError(s.explain(compileErrors(err), p), code)}, false
		}
		s.mu.Lock()
		s.mu.imports[sp.key] = sp.path
		s.mu.Unlock()
	}
	return kernel.ExecuteResult{}, true
}

// helpPattern matches a help request as IPython users type it: `?name` or
// `name?`, where name is an identifier or a selector chain.
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
	r := s.Inspect(name, len(name), 1)
	if !r.Found {
		return kernel.ExecuteResult{Err: &kernel.ExecError{
			Name: "NameError", Value: fmt.Sprintf("session: no help for %q: not a package, function, type or variable in scope", name),
		}}
	}
	return kernel.ExecuteResult{Pages: []kernel.MIMEBundle{r.Data}}
}

// noResultBuiltins are the builtins whose calls have no value.
var noResultBuiltins = []string{"print", "println", "panic", "close", "delete", "clear"}

// returnsValue reports whether a cell's final call of callee (see
// prepared.callee) has a result. yaegi hands back a leftover value from the
// frame for a call that returns nothing, such as mon.Done() after a loop,
// so the decision rests on the function's type instead. An empty callee
// (not a call, or a call of a computed function) is assumed to have one.
func (s *Session) returnsValue(callee string) bool {
	if callee == "" {
		return true
	}
	if slices.Contains(noResultBuiltins, callee) {
		return false
	}
	fn, err := s.evalQuiet(callee)
	if err != nil || !fn.IsValid() || fn.Kind() != reflect.Func {
		return true
	}
	return fn.Type().NumOut() > 0
}

// evalQuiet evaluates an expression without side effects (a name or a
// selector chain) and returns its value; any failure is an error.
func (s *Session) evalQuiet(expr string) (v reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("session: evaluating %s: %v", expr, r)
		}
	}()
	prog, err := s.compile(expr)
	if err != nil {
		return reflect.Value{}, err
	}
	return s.interp.Execute(prog)
}

// errCompilerPanic marks a panic inside yaegi's compiler.
var errCompilerPanic = errors.New("the interpreter's compiler failed on this cell, probably on a construct it does not support")

// compile calls the interpreter's compiler, which panics on some input it
// does not support (range over an int or a function among them).
func (s *Session) compile(src string) (prog *interp.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCompilerPanic, r)
		}
	}()
	s.compileMu.Lock()
	defer s.compileMu.Unlock()
	return s.interp.Compile(src)
}

// explain improves interpreter errors: hints for generic functions, and
// the undefined name behind yaegi's "constant definition loop", which is
// what it reports when a global's initializer uses an undefined name.
func (s *Session) explain(list ErrorList, p *prepared) ErrorList {
	for i, e := range list {
		if e.Msg == "constant definition loop" {
			if id := s.undefined(p); id != nil {
				list[i] = *id
				continue
			}
			name := p.globalAt(e.Pos)
			list[i].Msg = fmt.Sprintf("the interpreter could not work out the type of the global %s (%s); write its type out: `var %s Type = ...`", name, e.Msg, name)
			continue
		}
		if rest, ok := strings.CutPrefix(e.Msg, "undefined selector: "); ok {
			if pkg, _, ok := strings.Cut(rest, "."); ok && (pkg == "slices" || pkg == "maps") {
				list[i].Msg = e.Msg + " (generic standard library functions are not available in the interpreter; supported: " + supportedShims(pkg) + ")"
			}
		}
	}
	return list
}

// initLoop turns yaegi's "variable definition loop", which Execute
// returns for a var declaration whose value uses a variable of an earlier
// cell, into an explained compile error.
func (s *Session) initLoop(err error, p *prepared) (ErrorList, bool) {
	if !strings.HasSuffix(err.Error(), "variable definition loop") {
		return nil, false
	}
	list := compileErrors(err)
	for i, e := range list {
		name := p.globalAt(e.Pos)
		list[i].Msg = fmt.Sprintf("the interpreter cannot initialize the global %s from a variable of an earlier cell (%s), and the session could not write its type; write it out: `var %s Type = ...`", name, e.Msg, name)
	}
	return list, true
}

// undefined returns the first identifier of p that nothing declares.
func (s *Session) undefined(p *prepared) *Error {
	globals := s.globals()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range p.unresolved {
		name := u.Name
		_, global := globals[name]
		_, user := s.mu.names[name]
		_, imported := s.mu.imports[name]
		_, importedNow := p.imports[name]
		_, declaredNow := p.names[name]
		if global || user || imported || importedNow || declaredNow || strings.HasPrefix(name, "_gotrain") || slices.Contains(predeclared, name) {
			continue
		}
		return &Error{Pos: token.Position{Line: p.pos(u.Pos()).Line, Column: p.pos(u.Pos()).Column}, Msg: "undefined: " + name}
	}
	return nil
}

func supportedShims(pkg string) string {
	var names []string
	for k := range shimNames {
		if strings.HasPrefix(k, pkg+".") {
			names = append(names, k)
		}
	}
	for k := range nativeGeneric {
		if strings.HasPrefix(k, pkg+".") {
			names = append(names, k)
		}
	}
	if pkg == "maps" {
		names = append(names, "maps.Keys", "maps.Values", "maps.Clone")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// runtimeError reports how p, the chunk that ran (nil for one the session
// added), failed.
func (s *Session) runtimeError(err error, chunk *prepared) kernel.ExecuteResult {
	positions := panicPositions(s.router.takePanics())
	if chunk != nil {
		positions = hideScopeCalls(positions, chunk.scopeCalls)
	}
	var p interp.Panic
	if errors.As(err, &p) {
		if isInterrupt(p.Value) {
			return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted", Traceback: []string{"Interrupted: the cell stopped at a safe point"}}}
		}
		return kernel.ExecuteResult{Err: panicExecError(Panic{Value: p.Value, Positions: positions, Stack: p.Stack})}
	}
	if errors.Is(err, context.Canceled) {
		return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted"}}
	}
	return kernel.ExecuteResult{Err: &kernel.ExecError{Name: "RuntimeError", Value: err.Error(), Traceback: []string{err.Error()}}}
}

// commit records what a successful chunk declared.
func (s *Session) commit(p *prepared, code string, c chunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range p.imports {
		s.mu.imports[k] = v
	}
	line, _ := lineCol(code, c.start)
	for k, n := range p.names {
		n.doc = docAbove(code, n.line)
		s.mu.names[k] = n
		delete(s.mu.stale, k)
	}
	for k, src := range p.decls {
		s.mu.decls[k] = declInfo{src: src, line: line}
	}
}

// formatValue shows a cell's final value. Text is fmt's %v, not Go syntax
// (%#v) nor quoted strings (%q): gophernotes and gonb users expect a
// string result to read as its text, and %v is how fmt.Println would
// print the value. A display.Renderer chooses its own bundle.
func formatValue(v reflect.Value) kernel.MIMEBundle {
	if !v.IsValid() {
		return nil
	}
	// yaegi returns a *interface{} placeholder for a call with no result.
	if v.Type() == reflect.TypeFor[*any]() {
		return nil
	}
	if v.CanInterface() {
		if r, ok := v.Interface().(display.Renderer); ok {
			return kernel.MIMEBundle(r.Render())
		}
	}
	return kernel.MIMEBundle{"text/plain": fmt.Sprintf("%v", v)}
}

// goid returns the current goroutine's id, used only to find the cell's
// goroutine in a stack dump.
func goid() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := strings.Fields(string(buf[:n]))
	if len(f) < 2 {
		return 0
	}
	id, _ := strconv.ParseInt(f[1], 10, 64)
	return id
}

// waitState samples the state of the goroutine that yaegi's
// ExecuteWithContext started for the cell (created by goroutine parent) a
// few times, and reports whether it stayed blocked in every sample.
func waitState(parent int64) (string, bool) {
	state := "unknown"
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		st, ok := childState(parent)
		if !ok {
			return "unknown", false
		}
		state = st
		if st == "running" || st == "runnable" || strings.HasPrefix(st, "running") {
			return st, false
		}
	}
	return state, true
}

func childState(parent int64) (string, bool) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	marker := []byte("interp.(*Interpreter).ExecuteWithContext in goroutine " + strconv.FormatInt(parent, 10) + "\n")
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.Contains(g, marker) || !bytes.Contains(g, []byte("created by github.com/traefik/yaegi/")) {
			continue
		}
		header, _, _ := bytes.Cut(g, []byte("\n"))
		open, close := bytes.IndexByte(header, '['), bytes.IndexByte(header, ']')
		if open < 0 || close < open {
			return "", false
		}
		st, _, _ := strings.Cut(string(header[open+1:close]), ",") // "chan receive, 2 minutes"
		return st, true
	}
	return "", false
}
