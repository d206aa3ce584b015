package session

import (
	"go/scanner"
	"go/token"
	"strings"
	"unicode/utf8"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/kernel"
)

var keywords = []string{
	"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
	"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
	"return", "select", "struct", "switch", "type", "var",
}

// byteOffset converts a cursor position, which Jupyter counts in Unicode
// code points, to a byte offset into code.
func byteOffset(code string, cursor int) int {
	off := 0
	for i := 0; i < cursor && off < len(code); i++ {
		_, size := utf8.DecodeRuneInString(code[off:])
		off += size
	}
	return off
}

// runeCount converts a byte offset into code to a code-point position.
func runeCount(code string, off int) int { return utf8.RuneCountInString(code[:off]) }

// Complete returns the names that can stand at cursor (a rune offset):
// those in scope there, or the members of the value or package before a
// dot, from the type-checker's view of the session's cells.
func (s *Session) Complete(code string, cursor int) kernel.CompleteResult {
	off := byteOffset(code, cursor)
	s.compileMu.Lock()
	matches, start, end := s.comp.Complete(code, off)
	s.compileMu.Unlock()
	if start == end || code[start:end] == "" {
		// Keywords only complete a word already begun.
	} else {
		prefix := code[start:end]
		for _, k := range keywords {
			if strings.HasPrefix(k, prefix) && !(start > 0 && code[start-1] == '.') {
				matches = append(matches, k)
			}
		}
	}
	if matches == nil {
		matches = []string{}
	}
	return kernel.CompleteResult{Matches: matches, CursorStart: runeCount(code, start), CursorEnd: runeCount(code, end), Metadata: map[string]any{}}
}

// Inspect describes the name under cursor (a rune offset): its declaration
// and, for a package's name, its doc comment.
func (s *Session) Inspect(code string, cursor, detailLevel int) kernel.InspectResult {
	off := byteOffset(code, cursor)
	s.compileMu.Lock()
	sym, ok := s.comp.Describe(code, off)
	s.compileMu.Unlock()
	if !ok {
		return kernel.InspectResult{Data: kernel.MIMEBundle{}}
	}
	doc := s.docs.lookup(sym.Pkg, sym.Name)
	if sym.Cell != "" {
		doc = docAbove(sym.Cell, sym.Line)
	}
	return kernel.InspectResult{Found: true, Data: inspectBundle(sym.Decl, doc)}
}

// inspectBundle shows a signature and its doc: plain text for consoles
// and the pager, Markdown (the signature highlighted as Go) for notebooks.
func inspectBundle(sig, docText string) kernel.MIMEBundle {
	plain := sig
	md := "```go\n" + sig + "\n```"
	if docText != "" {
		plain += "\n\n" + docText
		md += "\n\n" + docText
	}
	return kernel.MIMEBundle{"text/plain": plain, "text/markdown": md}
}

// IsComplete tells the front end whether code can run as it is, needs
// more lines (with the indent for the next one), or cannot be fixed by
// more lines.
func (s *Session) IsComplete(code string) kernel.IsCompleteResult {
	if strings.TrimSpace(code) == "" {
		return kernel.IsCompleteResult{Status: "complete"}
	}
	depth := 0
	unterminated := false
	invalid := false
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(code))
	var sc scanner.Scanner
	sc.Init(file, []byte(code), func(_ token.Position, msg string) {
		switch msg {
		case "raw string literal not terminated", "comment not terminated":
			unterminated = true
		default:
			invalid = true
		}
	}, 0)
	last := token.ILLEGAL
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.SEMICOLON || lit != "\n" {
			last = tok
		}
		switch tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
			if depth < 0 {
				return kernel.IsCompleteResult{Status: "invalid"}
			}
		}
	}
	switch {
	case unterminated:
		return kernel.IsCompleteResult{Status: "incomplete", Indent: ""}
	case invalid:
		return kernel.IsCompleteResult{Status: "invalid"}
	case depth > 0:
		return kernel.IsCompleteResult{Status: "incomplete", Indent: strings.Repeat("\t", depth)}
	case last.IsOperator() && last != token.RPAREN && last != token.RBRACE && last != token.RBRACK &&
		last != token.INC && last != token.DEC && last != token.SEMICOLON:
		// A line ending in an operator, comma or dot continues on the next.
		return kernel.IsCompleteResult{Status: "incomplete", Indent: ""}
	}
	if err := cells.Syntax(code); err != nil {
		if strings.Contains(err.Error(), "EOF") {
			return kernel.IsCompleteResult{Status: "incomplete", Indent: ""}
		}
		return kernel.IsCompleteResult{Status: "invalid"}
	}
	return kernel.IsCompleteResult{Status: "complete"}
}

var _ kernel.Executor = (*Session)(nil)
