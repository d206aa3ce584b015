package cells

import (
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strings"
)

// segment is one top-level statement or declaration of a cell's source.
type segment struct {
	kind       segKind
	start, end int // byte offsets into the cell
}

type segKind int

const (
	segStmt   segKind = iota // a statement, or a var declaration, run in order
	segImport                // an import declaration
	segDecl                  // a func, method, type or const declaration
)

// split takes a cell's source and gives its segments, which
// sortSegments gathers for resolve. It cuts a cell into its
// top-level statements and declarations: Go
// has no grammar for a file that mixes them, so each is parsed where it
// belongs. A var declaration counts as a statement: its value is computed
// when the cell reaches it, as in a function body. Errors are left to the
// parser, which sees every segment.
func split(src string) []segment {
	fset := token.NewFileSet()
	file := fset.AddFile("cell", -1, len(src))
	var s scanner.Scanner
	s.Init(file, []byte(src), nil, scanner.ScanComments)

	type tok struct {
		pos int
		tok token.Token
		lit string
	}
	var toks []tok
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		if t == token.COMMENT {
			continue
		}
		toks = append(toks, tok{file.Offset(pos), t, lit})
	}

	var segs []segment
	depth := 0
	start := -1 // index into toks of the current segment's first token
	for i, t := range toks {
		if start < 0 {
			if t.tok == token.SEMICOLON {
				continue
			}
			start = i
		}
		switch t.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if depth > 0 {
				depth--
			}
		case token.SEMICOLON:
			if depth == 0 {
				segs = append(segs, segment{kind: classify(toks[start:i], func(j int) token.Token { return toks[start+j].tok }),
					start: toks[start].pos, end: t.pos})
				start = -1
			}
		}
	}
	if start >= 0 {
		segs = append(segs, segment{kind: classify(toks[start:], func(j int) token.Token { return toks[start+j].tok }),
			start: toks[start].pos, end: len(src)})
	}
	// A segment ends where its terminating semicolon starts, which for an
	// automatic semicolon is the newline; take the text up to the next
	// segment so nothing of the cell is dropped.
	for i := range segs {
		if i+1 < len(segs) {
			segs[i].end = segs[i+1].start
		} else {
			segs[i].end = len(src)
		}
	}
	return segs
}

// classify says what a top-level segment of n tokens is from its first
// tokens: `func name`, `func (recv) name` and `func name[` declare, while
// `func(...) {...}(...)` is a statement calling a function literal.
func classify[T any](toks []T, at func(int) token.Token) segKind {
	n := len(toks)
	if n == 0 {
		return segStmt
	}
	switch at(0) {
	case token.IMPORT:
		return segImport
	case token.TYPE, token.CONST:
		return segDecl
	case token.FUNC:
		if n > 1 && at(1) == token.IDENT {
			return segDecl
		}
		if n > 1 && at(1) == token.LPAREN {
			// Skip the parenthesized receiver or parameter list.
			depth := 0
			for j := 1; j < n; j++ {
				switch at(j) {
				case token.LPAREN:
					depth++
				case token.RPAREN:
					depth--
				}
				if depth == 0 {
					// A method name, then its parameters or type parameters.
					if j+2 < n && at(j+1) == token.IDENT && (at(j+2) == token.LPAREN || at(j+2) == token.LBRACK) {
						return segDecl
					}
					return segStmt
				}
			}
		}
	}
	return segStmt
}

func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func position(starts []int, off int) (line, col int) {
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
	return i + 1, off - starts[i] + 1
}

// sortSegments gathers a cell's imports, declarations and statements, its
// segments, in order within each; with mark, each segment is preceded by a
// line directive giving its position in the cell.
func sortSegments(code string, segs []segment, mark bool) (imps, decls, stmts string) {
	var bi, bd, bs strings.Builder
	lines := lineStarts(code)
	for _, s := range segs {
		b := &bs
		switch s.kind {
		case segImport:
			b = &bi
		case segDecl:
			b = &bd
		}
		if mark {
			l, col := position(lines, s.start)
			fmt.Fprintf(b, "\n//line %s:%d:%d\n", cellFile, l, col)
		}
		b.WriteString(code[s.start:s.end])
		b.WriteString("\n")
	}
	return bi.String(), bd.String(), bs.String()
}

// Syntax parses a cell without type-checking it and returns its syntax
// errors, for is_complete.
func Syntax(code string) error {
	imps, decls, stmts := sortSegments(code, split(code), false)
	src := "package main\n" + imps + decls + "func " + cellFunc + "() {\n" + stmts + "\n}\n"
	_, err := parser.ParseFile(token.NewFileSet(), genFile, src, parser.SkipObjectResolution)
	return err
}
