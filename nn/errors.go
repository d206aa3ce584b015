package nn

import (
	"errors"

	"github.com/gotrain/gotrain/internal/errkind"
)

var (
	// ErrShape is wrapped by the panics of layers and losses given tensors of
	// the wrong shape.
	ErrShape = errors.New("nn: shape mismatch")

	// ErrUsage is wrapped by the panics of other misuse: a bad argument, a
	// loss reduction that is wrong inside strategy.Run.
	ErrUsage = errors.New("nn: misuse")
)

func shapeError(format string, args ...any) error {
	return errkind.New(ErrShape, "nn: ", format, args...)
}

func usageError(format string, args ...any) error {
	return errkind.New(ErrUsage, "nn: ", format, args...)
}

// wrapError keeps err (an *os.PathError, say) reachable through errors.Is
// and errors.As beside a category sentinel (ErrCheckpoint, ErrSafetensors).
type wrapError struct {
	msg  string
	errs []error
}

func (e *wrapError) Error() string   { return e.msg }
func (e *wrapError) Unwrap() []error { return e.errs }
