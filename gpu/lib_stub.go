//go:build !cuda

package gpu

// built reports whether this binary binds the libraries (-tags cuda).
const built = false

// library is one loaded shared object; the stub never has one.
type library struct {
	name string
}

// openLibrary fails: this binary was built without -tags cuda.
func openLibrary(env string, names ...string) (*library, error) {
	return nil, ErrNotBuilt
}

func (l *library) bind(syms []symbol) error { return ErrNotBuilt }

// call is unreachable: no library ever loads.
func call(fn uintptr, args ...uintptr) uintptr {
	panic(ErrNotBuilt)
}
