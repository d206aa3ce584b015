package session

import (
	"go/scanner"
	"go/token"
)

// chunkKind says how yaegi must receive a chunk: it takes imports and other
// declarations as a file, and statements as the body of a function, never
// both in one Eval.
type chunkKind int

const (
	importChunk chunkKind = iota
	declChunk
	stmtChunk
)

func (k chunkKind) String() string {
	return [...]string{"imports", "declarations", "statements"}[k]
}

// chunk is a run of consecutive top-level units of one kind, cut from a cell.
type chunk struct {
	kind       chunkKind
	start, end int // byte offsets into the cell
}

// unit is one top-level import, declaration or statement of a cell.
type unit struct {
	kind       chunkKind
	start, end int
}

// splitCell cuts code into chunks of imports, declarations and statements,
// keeping their order. It only scans tokens; syntax errors are reported
// later, when each chunk is parsed, so that they carry the cell's positions.
func splitCell(code string) []chunk {
	units := splitUnits(code)
	var chunks []chunk
	for _, u := range units {
		if n := len(chunks); n > 0 && chunks[n-1].kind == u.kind {
			chunks[n-1].end = u.end
			continue
		}
		chunks = append(chunks, chunk{kind: u.kind, start: u.start, end: u.end})
	}
	return chunks
}

type tok struct {
	off int
	tok token.Token
	lit string
}

func scanTokens(code string) []tok {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(code))
	var s scanner.Scanner
	s.Init(file, []byte(code), nil, 0) // errors surface when the chunk is parsed
	var toks []tok
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		toks = append(toks, tok{off: file.Offset(pos), tok: t, lit: lit})
	}
	return toks
}

func splitUnits(code string) []unit {
	toks := scanTokens(code)
	var units []unit
	depth := 0
	first := -1 // index of the unit's first token
	end := 0
	flush := func() {
		if first < 0 {
			return
		}
		units = append(units, unit{kind: classify(toks[first:]), start: toks[first].off, end: end})
		first = -1
	}
	for i, t := range toks {
		switch t.tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			if depth > 0 {
				depth--
			}
		case token.SEMICOLON:
			if depth == 0 {
				flush()
				continue
			}
			if t.lit == "\n" {
				continue // inserted at a newline or EOF: no text of its own
			}
		}
		if first < 0 {
			first = i
		}
		end = min(t.off+tokLen(t), len(code))
	}
	flush()
	return units
}

func tokLen(t tok) int {
	if t.lit != "" {
		return len(t.lit)
	}
	return len(t.tok.String())
}

// classify tells a declaration from a statement by its first tokens. The
// only ambiguous start is func: `func (r T) M(` declares a method while
// `func() {...}()` is a statement.
func classify(toks []tok) chunkKind {
	switch toks[0].tok {
	case token.IMPORT:
		return importChunk
	case token.TYPE, token.VAR, token.CONST:
		return declChunk
	case token.FUNC:
		if len(toks) > 1 && toks[1].tok == token.IDENT {
			return declChunk
		}
		if len(toks) > 1 && toks[1].tok == token.LPAREN {
			depth := 0
			for i := 1; i < len(toks); i++ {
				switch toks[i].tok {
				case token.LPAREN:
					depth++
				case token.RPAREN:
					depth--
				}
				if depth == 0 {
					if i+2 < len(toks) && toks[i+1].tok == token.IDENT &&
						(toks[i+2].tok == token.LPAREN || toks[i+2].tok == token.LBRACK) {
						return declChunk
					}
					return stmtChunk
				}
			}
		}
	}
	return stmtChunk
}
