// Package errkind is the error type of the packages whose errors belong to
// a category a caller tests with errors.Is (nn.ErrShape, gorgoniamodel.ErrUsage, ...)
// yet carry their own text: naming the layer, the file or the shapes, without
// the category's words prefixed to it as fmt.Errorf("%w: ...") would.
package errkind

import "fmt"

// Error is an error whose text is Msg and which errors.Is matches to Kind.
type Error struct {
	Msg  string
	Kind error
}

// New returns an Error of kind whose text is prefix and then format's.
func New(kind error, prefix, format string, args ...any) *Error {
	return &Error{Msg: prefix + fmt.Sprintf(format, args...), Kind: kind}
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is e's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }
