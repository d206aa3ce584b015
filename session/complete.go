package session

import (
	"fmt"
	"go/constant"
	"go/parser"
	"go/scanner"
	"go/token"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gotrain/gotrain/kernel"
)

var keywords = []string{
	"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
	"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
	"return", "select", "struct", "switch", "type", "var",
}

var predeclared = []string{
	"any", "bool", "byte", "comparable", "complex64", "complex128", "error", "false", "float32",
	"float64", "int", "int8", "int16", "int32", "int64", "iota", "nil", "rune", "string", "true",
	"uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
	"append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
	"min", "new", "panic", "print", "println", "real", "recover",
}

func isIdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// runeOffset converts a cursor in runes (Jupyter's unit) to a byte offset.
func runeOffset(code string, cursor int) int {
	off := 0
	for i := 0; i < cursor && off < len(code); i++ {
		_, n := utf8.DecodeRuneInString(code[off:])
		off += n
	}
	return off
}

// wordAt returns the identifier around byte offset off (end is where the
// cursor stands for completion) and the identifier before a dot that
// precedes it, if any.
func wordAt(code string, off int, extend bool) (qual, word string, start, end int) {
	start = off
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(code[:start])
		if !isIdentRune(r) {
			break
		}
		start -= n
	}
	end = off
	if extend {
		for end < len(code) {
			r, n := utf8.DecodeRuneInString(code[end:])
			if !isIdentRune(r) {
				break
			}
			end += n
		}
	}
	word = code[start:end]
	if start > 0 && code[start-1] == '.' {
		q := start - 1
		for q > 0 {
			r, n := utf8.DecodeLastRuneInString(code[:q])
			if !isIdentRune(r) {
				break
			}
			q -= n
		}
		qual = code[q : start-1]
	}
	return qual, word, start, end
}

// packagePath resolves a package name used in cells: an import the cells
// made, or else a known package with that name.
func (s *Session) packagePath(name string) (string, bool) {
	s.mu.Lock()
	p, ok := s.mu.imports[name]
	s.mu.Unlock()
	if ok {
		return p, true
	}
	if _, ok := s.pkgNames[name]; ok && !strings.Contains(name, "/") {
		return name, true
	}
	for path, n := range s.pkgNames {
		if n == name && !strings.Contains(path, "_gotrain") && (path == name || !strings.Contains(path, ".")) {
			return path, true
		}
	}
	return "", false
}

func (s *Session) packageSymbols(path string) map[string]reflect.Value {
	return s.interp.Symbols(path)[path]
}

// Complete returns the names that can stand at cursor (a rune offset).
func (s *Session) Complete(code string, cursor int) kernel.CompleteResult {
	off := runeOffset(code, cursor)
	qual, prefix, start, _ := wordAt(code, off, false)
	var cands []string
	switch {
	case qual != "":
		if path, ok := s.packagePath(qual); ok {
			for name := range s.packageSymbols(path) {
				cands = append(cands, name)
			}
		} else if v, ok := s.globals()[qual]; ok {
			cands = members(v)
		}
	default:
		cands = append(cands, keywords...)
		cands = append(cands, predeclared...)
		s.mu.Lock()
		for n := range s.mu.names {
			cands = append(cands, n)
		}
		for n := range s.mu.imports {
			cands = append(cands, n)
		}
		s.mu.Unlock()
		for n := range s.globals() {
			cands = append(cands, n)
		}
		cands = append(cands, declaredIn(code[:start])...)
	}
	seen := map[string]bool{}
	matches := []string{}
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && !strings.HasPrefix(c, "_gotrain") && !seen[c] {
			seen[c] = true
			matches = append(matches, c)
		}
	}
	sort.Strings(matches)
	startRunes := utf8.RuneCountInString(code[:start])
	return kernel.CompleteResult{Matches: matches, CursorStart: startRunes, CursorEnd: cursor, Metadata: map[string]any{}}
}

// declaredIn returns the names that code declares, even unfinished code:
// the cell being typed may use a name it declared a few lines above before
// it has ever run. It scans tokens, so syntax errors do not matter.
func declaredIn(code string) []string {
	var sc scanner.Scanner
	fset := token.NewFileSet()
	sc.Init(fset.AddFile("", -1, len(code)), []byte(code), nil, 0)
	var names, pending []string // pending: identifiers of a possible `a, b :=`
	prev := token.ILLEGAL
	for {
		_, tok, lit := sc.Scan()
		switch {
		case tok == token.EOF:
			return names
		case tok == token.IDENT && (prev == token.VAR || prev == token.CONST || prev == token.TYPE || prev == token.FUNC):
			names = append(names, lit)
		case tok == token.IDENT && (prev == token.COMMA || prev != token.PERIOD):
			if prev != token.COMMA {
				pending = pending[:0]
			}
			pending = append(pending, lit)
		case tok == token.DEFINE:
			names = append(names, pending...)
			pending = pending[:0]
		case tok != token.COMMA:
			pending = pending[:0]
		}
		prev = tok
	}
}

// members lists the exported fields and methods of a value's type.
func members(v reflect.Value) []string {
	if !v.IsValid() {
		return nil
	}
	var out []string
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		out = append(out, t.Method(i).Name)
	}
	if t.Kind() == reflect.Interface && !v.IsNil() {
		return members(v.Elem())
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				out = append(out, f.Name)
			}
		}
		pt := reflect.PointerTo(t)
		for i := 0; i < pt.NumMethod(); i++ {
			out = append(out, pt.Method(i).Name)
		}
	}
	return out
}

// Inspect describes the identifier under cursor (a rune offset).
func (s *Session) Inspect(code string, cursor, detailLevel int) kernel.InspectResult {
	off := runeOffset(code, cursor)
	qual, word, _, _ := wordAt(code, off, true)
	if word == "" {
		return kernel.InspectResult{Data: kernel.MIMEBundle{}}
	}
	var desc, docText string
	switch {
	case qual != "":
		if path, ok := s.packagePath(qual); ok {
			if v, ok := s.packageSymbols(path)[word]; ok {
				desc = describeSymbol(qual+"."+word, v)
				docText = s.docs.lookup(path, word)
			}
		} else if v, ok := s.globals()[qual]; ok {
			desc = describeMember(qual, word, v)
			if desc != "" {
				docText = s.memberDoc(word, v)
			}
		}
	default:
		desc, docText = s.describeName(word)
	}
	if desc == "" {
		return kernel.InspectResult{Data: kernel.MIMEBundle{}}
	}
	return kernel.InspectResult{Found: true, Data: inspectBundle(desc, docText)}
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

// memberDoc finds the doc of method word of a global's type, when that type
// is a named type of a compiled package (the standard library or a symbol
// table); types the cells declared have no reflect package path to look in.
func (s *Session) memberDoc(word string, v reflect.Value) string {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return ""
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return ""
	}
	return s.docs.lookup(t.PkgPath(), t.Name()+"."+word)
}

// describeName describes an unqualified name: a global or package the
// cells declared or imported, or a builtin. It returns the description and
// the doc comment the cell wrote above the declaration, if any.
func (s *Session) describeName(word string) (desc, docText string) {
	s.mu.Lock()
	n, user := s.mu.names[word]
	path, imported := s.mu.imports[word]
	s.mu.Unlock()
	if user {
		desc := n.src + fmt.Sprintf("\n// declared at line %d of a cell", n.line)
		if v, ok := s.globals()[word]; ok && v.IsValid() {
			desc += fmt.Sprintf("\n// %s %s = %v", word, v.Type(), v)
		}
		return desc, n.doc
	}
	if imported {
		// A package comment can run to pages (fmt's does); its first
		// paragraph says what the package is for.
		pkgDoc, _, _ := strings.Cut(s.docs.lookup(path, ""), "\n\n")
		return fmt.Sprintf("package %s // import %q", word, path), pkgDoc
	}
	if v, ok := s.globals()[word]; ok && v.IsValid() && !strings.HasPrefix(word, "_gotrain") {
		return fmt.Sprintf("var %s %s = %v", word, v.Type(), v), ""
	}
	for _, p := range predeclared {
		if p == word {
			return "builtin " + word, s.docs.lookup("builtin", word)
		}
	}
	return "", ""
}

// describeSymbol renders a symbol-table entry. Tables hold types as nil
// pointers, variables as pointers, constants as go/constant values and
// functions as func values (see yaegi's extract).
func describeSymbol(name string, v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	if c, ok := v.Interface().(constant.Value); ok {
		return fmt.Sprintf("const %s = %s", name, c.ExactString())
	}
	if v.CanAddr() {
		// extract stores variables as addressable values.
		return fmt.Sprintf("var %s %s", name, v.Type())
	}
	switch v.Kind() {
	case reflect.Func:
		return fmt.Sprintf("func %s%s", name, strings.TrimPrefix(v.Type().String(), "func"))
	case reflect.Pointer:
		if v.IsNil() {
			t := v.Type().Elem()
			desc := fmt.Sprintf("type %s %s", name, t.Kind())
			if t.Kind() == reflect.Interface || t.Kind() == reflect.Struct {
				desc = fmt.Sprintf("type %s %s", name, underlying(t))
			}
			var methods []string
			seen := map[string]bool{}
			for _, mt := range []reflect.Type{t, reflect.PointerTo(t)} {
				if t.Kind() == reflect.Interface && mt != t {
					break
				}
				for i := 0; i < mt.NumMethod(); i++ {
					m := mt.Method(i)
					if seen[m.Name] {
						continue // value methods are in the pointer's set too
					}
					seen[m.Name] = true
					sig := m.Type.String()
					if t.Kind() != reflect.Interface {
						sig = "func" + dropReceiver(m.Type)
					}
					methods = append(methods, fmt.Sprintf("\nfunc (%s) %s%s", mt, m.Name, strings.TrimPrefix(sig, "func")))
				}
			}
			return desc + strings.Join(methods, "")
		}
	}
	// A typed constant, such as time.Second, is stored as its value.
	return fmt.Sprintf("const %s %s = %v", name, v.Type(), v)
}

func underlying(t reflect.Type) string {
	if t.Kind() != reflect.Struct {
		return t.Kind().String()
	}
	var b strings.Builder
	b.WriteString("struct {")
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fmt.Fprintf(&b, "\n\t%s %s", f.Name, f.Type)
	}
	b.WriteString("\n}")
	return b.String()
}

// dropReceiver prints a method type without its receiver parameter.
func dropReceiver(t reflect.Type) string {
	var in, out []string
	for i := 1; i < t.NumIn(); i++ {
		in = append(in, t.In(i).String())
	}
	for i := 0; i < t.NumOut(); i++ {
		out = append(out, t.Out(i).String())
	}
	sig := "(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
	case 1:
		sig += " " + out[0]
	default:
		sig += " (" + strings.Join(out, ", ") + ")"
	}
	return sig
}

func describeMember(qual, word string, v reflect.Value) string {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.CanAddr() && v.Kind() != reflect.Pointer {
		// A global is addressable: its pointer methods apply. A pointer
		// global already has them; its address (**T) has none.
		v = v.Addr()
	}
	if m := v.MethodByName(word); m.IsValid() {
		return fmt.Sprintf("func (%s) %s%s", v.Type(), word, strings.TrimPrefix(m.Type().String(), "func"))
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName(word); ok {
			return fmt.Sprintf("%s.%s %s // field of %s", qual, word, f.Type, t)
		}
	}
	return ""
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
	for _, c := range splitCell(code) {
		text := code[c.start:c.end]
		src := declWrap + text
		if c.kind == stmtChunk {
			src = stmtWrap + text + stmtTail
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "", src, 0); err != nil {
			if strings.Contains(err.Error(), "EOF") {
				return kernel.IsCompleteResult{Status: "incomplete", Indent: ""}
			}
			return kernel.IsCompleteResult{Status: "invalid"}
		}
	}
	return kernel.IsCompleteResult{Status: "complete"}
}

var _ kernel.Executor = (*Session)(nil)
