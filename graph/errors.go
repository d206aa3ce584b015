package graph

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gotrain/gotrain/internal/memlimit"
)

// Categories of misuse. Op constructors panic with an *Error wrapping one of
// them; test with errors.Is.
var (
	// ErrShape reports operands whose shapes do not fit an op.
	ErrShape = errors.New("graph: shape mismatch")
	// ErrDType reports a variable or node of the wrong element type.
	ErrDType = errors.New("graph: dtype mismatch")
	// ErrGraph reports nodes from different graphs combined in one op, or a
	// node used with a Program that does not compute it.
	ErrGraph = errors.New("graph: wrong graph")
	// ErrMemory reports a Program whose buffers would not fit in the
	// machine's memory; Compile returns it rather than letting the runtime
	// end the process. It is the same value as data.ErrMemory.
	ErrMemory = memlimit.ErrMemory
)

// Error is the panic value of a misused op, and the error Run returns when a
// node fails. Its text is "graph: SCOPE: OP: MSG", the scope left out when empty.
type Error struct {
	Scope string // the graph's scope when the node was built, e.g. "dense_1"
	Op    string // the op or node, e.g. "matmul"
	Msg   string // what was wrong, with got and want
	Err   error  // the category (ErrShape, ErrDType, ErrGraph, ErrMemory) or the recovered error
}

func (e *Error) Error() string {
	s := "graph: "
	if e.Scope != "" {
		s += e.Scope + ": "
	}
	if e.Op != "" {
		s += e.Op + ": "
	}
	return s + e.Msg
}

// Unwrap returns the category.
func (e *Error) Unwrap() error { return e.Err }

func quote(s string) string { return strconv.Quote(s) }

func checkDims(where string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(&Error{Op: where, Msg: fmt.Sprintf("want non-negative dimensions, got %v", shape), Err: ErrShape})
		}
		n *= d
	}
	return n
}
