package stepdeps

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Dep is a session variable a function reads: its name as the cell spells
// it, and its storage.
type Dep struct {
	Name string
	Addr unsafe.Pointer // the variable's address
	Size uintptr        // its size in bytes
	// Func says the variable holds a func value: the variables of the
	// function it holds when a step traces are watched too.
	Func bool
	// Code says the variable is the slot of a function or method of the
	// cells: it changes when a cell redefines that function or method.
	Code bool
}

// Var describes the variable at p.
func Var[T any](p *T, name string) Dep {
	return Dep{Name: name, Addr: unsafe.Pointer(p), Size: unsafe.Sizeof(*p), Func: reflect.TypeFor[T]().Kind() == reflect.Func}
}

// MaxSize is the largest variable Watch returns: snapshots are compared at
// every Run, so their cost must stay small against a step's.
const MaxSize = 4 << 10

// maxWatched bounds what Watch returns for one step function, following
// function-valued variables.
const maxWatched = 256

// entry is what Register recorded for one function.
type entry struct {
	name string // as the cell spells it, for messages
	deps []Dep
}

var registry struct {
	sync.Mutex
	byCode map[uintptr]*entry
	// byName has every entry by the runtime's name of its function
	// ("gotrain.cells/c5.trainStep"), for closures inside it; byShort has
	// declared functions and methods by their last component ("trainStep"),
	// for closures of a function that was inlined into another.
	byName  map[string]*entry
	byShort map[string][]*entry
}

// Register records that fn, a func value named name, reads deps. A
// function registered before is replaced. It panics if fn is not a
// non-nil func.
func Register(fn any, name string, deps ...Dep) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		panic("stepdeps: Register: want a non-nil func, got " + reflect.TypeOf(fn).String())
	}
	pc := v.Pointer()
	full := funcName(pc)
	e := &entry{name: name, deps: deps}
	registry.Lock()
	defer registry.Unlock()
	if registry.byCode == nil {
		registry.byCode, registry.byName, registry.byShort = map[uintptr]*entry{}, map[string]*entry{}, map[string][]*entry{}
	}
	registry.byCode[pc] = e
	if full == "" {
		return
	}
	if old := registry.byName[full]; old != nil {
		short := shortName(full)
		registry.byShort[short] = deleteEntry(registry.byShort[short], old)
	}
	registry.byName[full] = e
	if short := shortName(full); short != "" {
		registry.byShort[short] = append(registry.byShort[short], e)
	}
}

func deleteEntry(es []*entry, e *entry) []*entry {
	for i, x := range es {
		if x == e {
			return append(es[:i], es[i+1:]...)
		}
	}
	return es
}

func funcName(pc uintptr) string {
	if f := runtime.FuncForPC(pc); f != nil {
		return strings.TrimSuffix(f.Name(), "-fm")
	}
	return ""
}

// components splits a runtime function name after its package path:
// "gotrain.cells/c5.(*T).step" gives "gotrain.cells/c5" and
// ["(*T)", "step"].
func components(full string) (pkg string, parts []string) {
	slash := strings.LastIndexByte(full, '/')
	dot := strings.IndexByte(full[slash+1:], '.')
	if dot < 0 {
		return full, nil
	}
	dot += slash + 1
	return full[:dot], strings.Split(full[dot+1:], ".")
}

// shortName is a declared function's or method's last component; "" for
// a func literal ("func1", "1"), which a name does not identify.
func shortName(full string) string {
	_, parts := components(full)
	if len(parts) == 0 || closurePart(parts[len(parts)-1]) {
		return ""
	}
	return parts[len(parts)-1]
}

// closurePart reports whether a name's component is one the compiler gives
// a func literal (func1, 2, gowrap1, deferwrap1).
func closurePart(p string) bool {
	for _, prefix := range []string{"func", "gowrap", "deferwrap", ""} {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// lookupLocked returns the entries for the function whose code is at pc:
// its own, or for a closure the nearest enclosing registered function's
// and those of the functions inlined where it was written. name is how
// messages call the function; "" when unknown.
func lookupLocked(pc uintptr) (name string, es []*entry) {
	if e := registry.byCode[pc]; e != nil {
		return e.name, []*entry{e}
	}
	full := funcName(pc)
	// A method value's code is its "-fm" wrapper, whose name, trimmed, is
	// the method's own.
	if e := registry.byName[full]; e != nil {
		return e.name, []*entry{e}
	}
	pkg, parts := components(full)
	for i := len(parts) - 1; i > 0; i-- {
		if e := registry.byName[pkg+"."+strings.Join(parts[:i], ".")]; e != nil {
			name, es = e.name, append(es, e)
			break
		}
	}
	// A function inlined into the one the closure's name starts with leaves
	// only its short name there.
	for i, p := range parts {
		if i > 0 && !closurePart(p) {
			for _, e := range registry.byShort[p] {
				if name == "" {
					name = e.name
				}
				es = append(es, e)
			}
		}
	}
	return name, es
}

// Watch returns what a step function whose code is at pc reads: the name
// messages give it ("" when unknown) and its variables, each once, with
// those of the functions its function-valued variables hold now,
// recursively; at most maxWatched, none larger than MaxSize.
func Watch(pc uintptr) (name string, deps []Dep) {
	registry.Lock()
	defer registry.Unlock()
	seenCode := map[uintptr]bool{pc: true}
	seen := map[unsafe.Pointer]bool{}
	name, es := lookupLocked(pc)
	for len(es) > 0 && len(deps) < maxWatched {
		e := es[0]
		es = es[1:]
		for _, d := range e.deps {
			if seen[d.Addr] || d.Size > MaxSize || len(deps) == maxWatched {
				continue
			}
			seen[d.Addr] = true
			deps = append(deps, d)
			if !d.Func {
				continue
			}
			// A func value is a pointer to a block whose first word is
			// its code.
			if fv := *(*unsafe.Pointer)(d.Addr); fv != nil {
				if code := *(*uintptr)(fv); !seenCode[code] {
					seenCode[code] = true
					_, more := lookupLocked(code)
					es = append(es, more...)
				}
			}
		}
	}
	return name, deps
}
