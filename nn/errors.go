package nn

import (
	"errors"
	"fmt"
)

var (
	// ErrShape is wrapped by the panics of layers and losses given tensors of
	// the wrong shape.
	ErrShape = errors.New("nn: shape mismatch")

	// ErrUsage is wrapped by the panics of other misuse: a bad argument, a
	// loss reduction that is wrong inside strategy.Run.
	ErrUsage = errors.New("nn: misuse")
)

// kindError is an error with its own text that still matches a category
// sentinel through errors.Is.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func shapeError(format string, args ...any) error {
	return &kindError{msg: "nn: " + fmt.Sprintf(format, args...), kind: ErrShape}
}

func usageError(format string, args ...any) error {
	return &kindError{msg: "nn: " + fmt.Sprintf(format, args...), kind: ErrUsage}
}
