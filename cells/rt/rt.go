// Package rt is what compiled notebook cells call at run time. Package
// cells generates the calls; nothing else should use it.
//
// A cell is compiled into a Go plugin whose init registers the cell's
// statements with Register; the session then takes them with Take and runs
// them. Safe points (Poll), interruptible sleeps, goroutines that report
// their panics, access to unexported fields of an earlier cell's types and
// the value of a cell's final expression all go through this package, which
// the worker binary links, so every plugin shares one copy of its state.
package rt

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"
	"unsafe"

	"github.com/gotrain/gotrain/internal/safepoint"
)

var registry struct {
	sync.Mutex
	runs map[string]func()
}

// Register records the statements of the cell compiled as package path.
func Register(path string, run func()) {
	registry.Lock()
	defer registry.Unlock()
	if registry.runs == nil {
		registry.runs = map[string]func(){}
	}
	registry.runs[path] = run
}

// Lookup returns the statements Register recorded for path.
func Lookup(path string) (func(), bool) {
	registry.Lock()
	defer registry.Unlock()
	run, ok := registry.runs[path]
	return run, ok
}

// Poll is the safe point at every loop iteration and function entry of a
// cell: it panics with safepoint.ErrInterrupted once an interrupt is
// raised. It is small enough to be inlined.
func Poll() {
	if safepoint.Pending() {
		interrupted()
	}
}

// interrupted is Poll's slow path, kept out of line so that Poll inlines.
//
//go:noinline
func interrupted() { safepoint.Check() }

// Sleep is time.Sleep for cells: an interrupt ends it.
func Sleep(d time.Duration) { safepoint.Sleep(d) }

// GoroutinePanic receives the panic of a goroutine a cell started, with its
// stack; the session sets it. The default prints to stderr.
var GoroutinePanic = func(v any, stack []byte) {
	fmt.Fprintf(os.Stderr, "panic in a goroutine: %v\n\n%s", v, stack)
}

// GoRecover is deferred first in every goroutine a cell starts, so that a
// panic there is reported instead of ending the process. A goroutine
// stopped by an interrupt ends quietly.
func GoRecover() {
	r := recover()
	if r == nil {
		return
	}
	if err, ok := r.(error); ok && err == safepoint.ErrInterrupted {
		return
	}
	GoroutinePanic(r, debug.Stack())
}

// At returns a pointer to the field at offset off of the struct at p: how a
// cell reaches an unexported field of a type an earlier cell declared (each
// cell is its own package). A nil p panics as the field access would.
func At[F any](p unsafe.Pointer, off uintptr) *F {
	if p == nil {
		_ = *(*byte)(p) // the nil dereference the field access would make
	}
	return (*F)(unsafe.Add(p, off))
}

// Get returns the field at offset off of struct value s, for an operand
// that is not addressable.
func Get[F, S any](s S, off uintptr) F {
	return *(*F)(unsafe.Add(unsafe.Pointer(&s), off))
}

var result struct {
	sync.Mutex
	v   any
	set bool
}

// Show records the value of a cell's final expression, which the session
// shows as the cell's result.
func Show(v any) {
	result.Lock()
	result.v, result.set = v, true
	result.Unlock()
}

// TakeResult returns and forgets what Show recorded.
func TakeResult() (v any, ok bool) {
	result.Lock()
	defer result.Unlock()
	v, ok = result.v, result.set
	result.v, result.set = nil, false
	return v, ok
}

// Stdin is os.Stdin for cells: the generated code reads it for os.Stdin
// and fmt.Scan, Scanln and Scanf. Each read past what is buffered asks
// ReadLine for a line, which the session answers from the front end's
// input box.
var Stdin io.Reader = &stdin{}

// ReadLine returns the next line of input, without its newline; the
// session sets it. The default reads nothing.
var ReadLine = func() (string, error) { return "", io.EOF }

type stdin struct {
	mu  sync.Mutex
	buf []byte
}

func (s *stdin) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) == 0 {
		line, err := ReadLine()
		if err != nil {
			return 0, err
		}
		s.buf = append(s.buf, line...)
		s.buf = append(s.buf, '\n')
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// The Zero functions return the zero value of a function's result without
// calling it. A cell's top-level variable is a package variable, declared
// with its type; when the type cannot be named outside its package (an
// unexported type a library function returns), the variable is declared as
// `var v = rt.Zero1(pkg.F)` instead, which gives it F's result type, and
// the cell's statements then assign it.

func Zero0[R any](func() R) (r R)                     { return r }
func Zero1[A, R any](func(A) R) (r R)                 { return r }
func Zero2[A, B, R any](func(A, B) R) (r R)           { return r }
func Zero3[A, B, C, R any](func(A, B, C) R) (r R)     { return r }
func ZeroV0[V, R any](func(...V) R) (r R)             { return r }
func ZeroV1[A, V, R any](func(A, ...V) R) (r R)       { return r }
func ZeroV2[A, B, V, R any](func(A, B, ...V) R) (r R) { return r }

// Slot holds the newest definition of a function that cells declare with
// one name and signature, and the marker of the cell that declared it.
// Each definition starts by calling Fn when ID is not its own cell's
// marker, so that every caller runs the newest (late binding; see package
// cells).
type Slot[F any] struct {
	Fn F
	ID *byte
}
