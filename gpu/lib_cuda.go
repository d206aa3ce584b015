//go:build cuda

package gpu

import (
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
)

// built reports whether this binary binds the libraries (-tags cuda).
const built = true

// library is one dlopen'ed shared object.
type library struct {
	name   string  // the path or soname that loaded; immutable
	handle uintptr // dlopen's handle; immutable, never closed
}

// openLibrary dlopens the path in the environment variable env, when set,
// or else the first of names that loads.
func openLibrary(env string, names ...string) (*library, error) {
	if p := getenv(env); p != "" {
		names = []string{p}
	}
	var why []string
	for _, n := range names {
		h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return &library{name: n, handle: h}, nil
		}
		why = append(why, err.Error())
	}
	return nil, fmt.Errorf("gpu: could not load %s (set %s to its path): %s",
		strings.Join(names, " or "), env, strings.Join(why, "; "))
}

// bind resolves each symbol of syms into its function pointer.
func (l *library) bind(syms []symbol) error {
	for _, s := range syms {
		p, err := purego.Dlsym(l.handle, s.name)
		if err != nil {
			if s.optional {
				continue
			}
			return fmt.Errorf("gpu: %s lacks %s: %w", l.name, s.name, err)
		}
		*s.fn = p
	}
	return nil
}

// call calls the C function fn with integer and pointer arguments and
// returns its integer result. Like syscall.Syscall, it keeps the objects
// that arguments written uintptr(unsafe.Pointer(p)) point to alive and in
// place until it returns.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
