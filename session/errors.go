package session

import (
	"errors"
	"fmt"
	"go/token"
	"regexp"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/kernel"
)

// ErrClosed is returned (as an ExecError value) by a Session used after Close.
var ErrClosed = errors.New("session: closed")

// Error is one compile error, positioned in the cell's own lines and columns.
type Error struct {
	Pos token.Position // Line and Column are the cell's; Filename is empty
	Msg string
}

func (e Error) Error() string {
	if e.Pos.Line == 0 {
		return "session: " + e.Msg
	}
	return fmt.Sprintf("session: %d:%d: %s", e.Pos.Line, e.Pos.Column, e.Msg)
}

// ErrorList is a list of compile errors in cell order.
type ErrorList []Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "session: no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
}

// Err returns l as an error, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Panic is a panic raised while a cell ran.
type Panic struct {
	Value     any
	Positions []string // "L:C in f" for each interpreted frame, innermost first
	Stack     []byte   // the Go stack where the interpreter recovered it
}

func (p Panic) Error() string { return fmt.Sprintf("session: panic: %v", p.Value) }

// errPos matches the position yaegi and go/scanner put in front of messages.
var errPos = regexp.MustCompile(`^(?:_\.go:)?(\d+):(\d+): ?(.*)$`)

// compileErrors turns an error from the parser or the interpreter into
// positioned errors. Positions are already the cell's because every chunk
// carries a //line directive.
func compileErrors(err error) ErrorList {
	var list ErrorList
	for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		if line == "" {
			continue
		}
		if m := errPos.FindStringSubmatch(line); m != nil {
			l, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			list = append(list, Error{Pos: token.Position{Line: l, Column: c}, Msg: m[3]})
			continue
		}
		list = append(list, Error{Msg: line})
	}
	return list
}

// compileExecError shows compile errors with the offending cell line and a
// caret under the column, the way go vet and gopls point at code.
func compileExecError(list ErrorList, cell string) *kernel.ExecError {
	lines := strings.Split(cell, "\n")
	var tb []string
	for _, e := range list {
		tb = append(tb, e.Error())
		if e.Pos.Line >= 1 && e.Pos.Line <= len(lines) {
			src := lines[e.Pos.Line-1]
			prefix := fmt.Sprintf("%4d | ", e.Pos.Line)
			tb = append(tb, prefix+src)
			if e.Pos.Column >= 1 && e.Pos.Column <= len(src)+1 {
				pad := strings.Map(func(r rune) rune {
					if r == '\t' {
						return '\t'
					}
					return ' '
				}, src[:e.Pos.Column-1])
				tb = append(tb, strings.Repeat(" ", len(prefix)-2)+"| "+pad+"^")
			}
		}
	}
	return &kernel.ExecError{Name: "CompileError", Value: strings.TrimPrefix(list.Error(), "session: "), Traceback: tb}
}

func panicExecError(p Panic) *kernel.ExecError {
	value := fmt.Sprint(p.Value)
	if err, ok := p.Value.(error); ok {
		value = err.Error()
	}
	tb := []string{"panic: " + value}
	for _, pos := range p.Positions {
		tb = append(tb, "\tat "+pos)
	}
	if len(p.Positions) > 0 {
		value += " (at " + strings.SplitN(p.Positions[0], " ", 2)[0] + ")"
	}
	return &kernel.ExecError{Name: "Panic", Value: value, Traceback: tb}
}

// panicPositions turns yaegi's "L:C: panic: f(...)" lines into "L:C in f".
func panicPositions(lines []string) []string {
	var out []string
	for _, l := range lines {
		m := errPos.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		fn := strings.TrimSuffix(strings.TrimPrefix(m[3], "panic: "), "(...)")
		if fn == "main" || fn == "" {
			fn = "cell"
		}
		out = append(out, m[1]+":"+m[2]+" in "+fn)
	}
	return out
}
