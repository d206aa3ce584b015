package cells

import (
	"errors"
	"fmt"
	"go/scanner"
	"strings"
)

// Error is a problem in a cell's source at a position of the cell.
type Error struct {
	Line, Col int // 1-based; 0 when unknown
	Msg       string
}

func (e Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// ErrorList is every error found in a cell, in source order.
type ErrorList []Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

func dedupe(l ErrorList) ErrorList {
	var out ErrorList
	for i, e := range l {
		if i > 0 && e == l[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// syntaxErrors converts the parser's errors to the cell's positions.
func syntaxErrors(err error) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return ErrorList{{Msg: err.Error()}}
	}
	var out ErrorList
	for _, e := range list {
		if e.Pos.Filename != cellFile {
			out = append(out, Error{Msg: e.Msg})
			continue
		}
		out = append(out, Error{e.Pos.Line, e.Pos.Column, e.Msg})
	}
	return out
}
