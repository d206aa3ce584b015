package kernel

import (
	"context"
	"io"
)

// Executor runs the code that execute, complete, inspect and is_complete
// requests carry. The kernel serializes Execute calls (one cell at a time)
// but may call Complete, Inspect and IsComplete while no cell runs, and
// Interrupt at any time from the control goroutine.
type Executor interface {
	// Execute runs one cell. Everything the cell shows goes through out while
	// it runs; the returned result says how it ended.
	Execute(ctx context.Context, req ExecuteRequest, out Output) ExecuteResult
	Complete(code string, cursorPos int) CompleteResult
	Inspect(code string, cursorPos, detailLevel int) InspectResult
	IsComplete(code string) IsCompleteResult
	// Interrupt asks the running cell, if any, to stop at its next safe point.
	Interrupt()
}

// ExecuteRequest is the part of an execute_request an Executor needs.
type ExecuteRequest struct {
	Code           string
	Silent         bool
	StoreHistory   bool
	AllowStdin     bool
	ExecutionCount int // the count this cell is shown with
}

// MIMEBundle maps a MIME type to its representation: a string for text
// types and base64 images, any JSON value for application/json.
type MIMEBundle map[string]any

// Output receives what a running cell shows. Its methods are safe for
// concurrent use (goroutines a cell started may print) and return quickly.
type Output interface {
	// Stream appends text to "stdout" or "stderr".
	Stream(name, text string)
	// Display shows a bundle; with a non-empty displayID it can be replaced
	// later by a call with update set.
	Display(data MIMEBundle, metadata map[string]any, displayID string, update bool)
	// ClearOutput clears the cell's output, now or (wait) at the next output.
	ClearOutput(wait bool)
	// Input asks the front end for a line of input over the stdin channel.
	// It returns an error if the request does not allow stdin.
	Input(prompt string, password bool) (string, error)
}

// ExecuteResult is how a cell ended. A nil Err means status "ok".
type ExecuteResult struct {
	// Value is the final expression's value as a MIME bundle; nil when the
	// cell ended with a statement or the value is not shown.
	Value MIMEBundle
	// Err, when non-nil, becomes an error message and an error reply.
	Err *ExecError
	// Pages are shown in the front end's pager (help text for `?name`),
	// carried as "page" payloads of the execute_reply.
	Pages []MIMEBundle
}

// The enames that more than one package writes or reads: the session ends
// a cell with them (and the kernel with Panic when an executor panics), and
// the worker's %replay tells a cell that failed after changing the session
// by Panic.
const (
	EnamePanic       = "Panic"       // the cell's statements panicked, after its declarations were committed
	EnameInterrupted = "Interrupted" // the cell, or a command it ran, was interrupted
)

// ExecError is a failed cell as Jupyter shows it.
type ExecError struct {
	Name      string   // ename, such as "CompileError", "Panic", "Interrupted"
	Value     string   // evalue, one line
	Traceback []string // lines shown to the user, cell line numbers included
}

// CompleteResult answers complete_request.
type CompleteResult struct {
	Matches     []string
	CursorStart int // rune offsets into the code
	CursorEnd   int
	Metadata    map[string]any
}

// InspectResult answers inspect_request.
type InspectResult struct {
	Found bool
	Data  MIMEBundle
}

// IsCompleteResult answers is_complete_request. Status is "complete",
// "incomplete", "invalid" or "unknown"; Indent is used with "incomplete".
type IsCompleteResult struct {
	Status string
	Indent string
}

// Discard is an Output that shows nothing: its Input fails with io.EOF, as
// a request that allows no stdin would. Warming the build cache and a
// worker group's start-up run cells through it.
var Discard Output = discardOutput{}

type discardOutput struct{}

func (discardOutput) Stream(string, string)                            {}
func (discardOutput) Display(MIMEBundle, map[string]any, string, bool) {}
func (discardOutput) ClearOutput(bool)                                 {}
func (discardOutput) Input(string, bool) (string, error)               { return "", io.EOF }
