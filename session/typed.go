package session

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
)

// Typed defines.
//
// yaegi v0.16.1 types a cell's top-level `name := expr` (a global) before
// it runs anything, and it cannot type an index into a value whose type
// came from compiled code: after `parts := strings.Split(s, ",")`, the cell
// `second := parts[1]` fails with "constant definition loop", and
// `v, ok := m[k]` (any map) crashes its compiler with "nil type". Inside a
// function both work, and so does a conversion, whose type yaegi reads from
// the syntax: `second := string(parts[1])`. So the session infers the
// static type of such a define's right-hand side, without running any of
// it, and wraps it in a conversion to that type, on the same line, with
// /*line*/ comments that keep every column the cell's. A comma-ok define
// becomes a declaration of its variables, run just before the chunk, and an
// assignment. A var declaration whose value uses a variable of an earlier
// cell ("variable definition loop": yaegi orders a chunk's initializers
// among the chunk's own globals only) keeps its names with their types,
// and its values run as assignments right after the chunk. Whatever the
// session cannot infer or write is left alone, and yaegi's error stands
// (explained by Session.explain and Session.initLoop).
//
// A type is written by its name in a package the cell imported; a package
// the cell did not import is imported under a hidden name (_gotrain_pkgN)
// first. Types the cells declared have no reflect type of their own
// (`type Celsius float64` is float64 to reflect), so a type that may be
// one of them is written only when the value comes from compiled code for
// sure; see ambiguous.

// symbolIndex is the symbol tables in use, by import path, and the name of
// each exported type they hold.
type symbolIndex struct {
	byPath map[string]map[string]reflect.Value
	types  map[reflect.Type][]typeName // sorted by path; an alias (nn.Variable = graph.Variable) gives a type several
}

type typeName struct{ path, name string }

// symbols returns the index of the session's tables, built on first use:
// most sessions never need it, and the standard library alone holds
// thousands of symbols.
func (s *Session) symbols() *symbolIndex {
	s.symOnce.Do(func() {
		idx := &symbolIndex{byPath: map[string]map[string]reflect.Value{}, types: map[reflect.Type][]typeName{}}
		for _, table := range s.tables {
			for key, syms := range table {
				i := strings.LastIndex(key, "/")
				if i <= 0 {
					continue
				}
				path := key[:i]
				m := idx.byPath[path]
				if m == nil {
					m = map[string]reflect.Value{}
					idx.byPath[path] = m
				}
				for name, v := range syms {
					m[name] = v // later tables replace earlier ones, as in interp.Use
					if isTypeSymbol(v) && !strings.HasPrefix(name, "_") && v.Type().Elem().Name() == name {
						t := v.Type().Elem()
						if !slices.Contains(idx.types[t], typeName{path, name}) {
							idx.types[t] = append(idx.types[t], typeName{path, name})
						}
					}
				}
			}
		}
		for _, names := range idx.types {
			sort.Slice(names, func(i, j int) bool { return names[i].path < names[j].path })
		}
		s.symIndex = idx
	})
	return s.symIndex
}

// isTypeSymbol reports whether a table entry stands for a type: tables made
// by yaegi extract hold a type T as a nil *T, and a variable as an
// addressable value.
func isTypeSymbol(v reflect.Value) bool {
	return v.IsValid() && v.Kind() == reflect.Pointer && v.IsNil() && !v.CanAddr()
}

// universeTypes are the predeclared types, by name.
var universeTypes = map[string]reflect.Type{
	"bool": reflect.TypeFor[bool](), "string": reflect.TypeFor[string](), "error": reflect.TypeFor[error](),
	"any": reflect.TypeFor[any](), "int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](),
	"int16": reflect.TypeFor[int16](), "int32": reflect.TypeFor[int32](), "rune": reflect.TypeFor[rune](),
	"int64": reflect.TypeFor[int64](), "uint": reflect.TypeFor[uint](), "uint8": reflect.TypeFor[uint8](),
	"byte": reflect.TypeFor[byte](), "uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](),
	"uint64": reflect.TypeFor[uint64](), "uintptr": reflect.TypeFor[uintptr](), "float32": reflect.TypeFor[float32](),
	"float64": reflect.TypeFor[float64](), "complex64": reflect.TypeFor[complex64](), "complex128": reflect.TypeFor[complex128](),
}

// maxInferDepth bounds how far inference follows a chunk's own defines.
const maxInferDepth = 16

// typedDefines rewrites the top-level defines of a statement chunk that
// yaegi cannot type; see the comment at the top of this file.
func (r *rewriter) typedDefines(body []ast.Stmt, p *prepared) {
	for _, st := range body {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE {
			continue
		}
		switch {
		case len(as.Lhs) == len(as.Rhs):
			for _, rhs := range as.Rhs {
				r.convertDefine(rhs)
			}
		case len(as.Lhs) == 2 && len(as.Rhs) == 1 && commaOK(as.Rhs[0]):
			r.splitCommaOK(as, body, p)
		}
	}
}

// typedVars gives the untyped var declarations of a declaration chunk
// (`var first = strings.Split(s, ",")[0]`) the conversions typedDefines
// gives defines; yaegi types them the same way.
func (r *rewriter) typedVars(f *ast.File) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type != nil || len(vs.Values) != len(vs.Names) {
				continue
			}
			for _, v := range vs.Values {
				r.convertDefine(v)
			}
		}
	}
}

// deferVarInits moves the initial values of a declaration chunk's
// variables into assignments that run right after the chunk, when one of
// them uses a variable of an earlier cell. yaegi initializes a chunk's
// globals in dependency order among the chunk's own declarations only, so
// `var b int = a` with a from an earlier cell fails with "variable
// definition loop". Every initialized variable of the chunk moves, so that
// they keep their order; when the type of one cannot be written, none
// does, and yaegi's error stands (explained by Session.initLoop).
func (r *rewriter) deferVarInits(f *ast.File) bool {
	var specs []*ast.ValueSpec
	usesEarlier := false
	declared := map[string]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, n := range vs.Names {
				declared[n.Name] = true
			}
			if len(vs.Values) > 0 {
				specs = append(specs, vs)
			}
		}
	}
	for _, vs := range specs {
		for _, v := range vs.Values {
			ast.Inspect(v, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Obj == nil && !declared[id.Name] && r.earlierVariable(id.Name) {
					usesEarlier = true
				}
				return !usesEarlier
			})
		}
	}
	if !usesEarlier {
		return false
	}
	r.strictConsts = true
	defer func() { r.strictConsts = false }()
	type move struct {
		vs    *ast.ValueSpec
		types []string // written types, one per value, when the spec has none
	}
	var moves []move
	for _, vs := range specs {
		if len(vs.Names) != len(vs.Values) {
			return false // a, b = f(): left to yaegi
		}
		m := move{vs: vs}
		if vs.Type == nil {
			for _, v := range vs.Values {
				t := r.staticType(v, 0)
				if t == nil || r.ambiguous(t) && !r.compiledRoot(v) {
					return false
				}
				src, ok := r.typeSource(t)
				if !ok {
					return false
				}
				m.types = append(m.types, src)
			}
			if len(slices.Compact(slices.Clone(m.types))) != 1 {
				return false // var a, b = 1, "x": one spec, two types
			}
		}
		moves = append(moves, m)
	}
	for _, m := range moves {
		vs := m.vs
		// Rendered once every edit is known, like the chunk itself.
		r.postinit = append(r.postinit, func() string {
			var names, values []string
			for i, n := range vs.Names {
				names = append(names, n.Name)
				values = append(values, lineComment(r.fset.Position(vs.Values[i].Pos()))+r.nodeText(vs.Values[i]))
			}
			return lineComment(r.fset.Position(vs.Names[0].Pos())) + strings.Join(names, ", ") + " = " + strings.Join(values, ", ")
		})
		// The declaration keeps its names and gets a type; the values go.
		from := vs.Names[len(vs.Names)-1].End()
		if vs.Type != nil {
			from = vs.Type.End()
		}
		start, end := r.off(from), r.off(vs.End())
		gone := r.src[start:end]
		typ := ""
		if vs.Type == nil {
			typ = " " + m.types[0]
		}
		after := lineComment(r.fset.Position(vs.End()))
		r.edits = append(r.edits, edit{start, end, func() string {
			return typ + strings.Map(func(c rune) rune {
				if c == '\n' {
					return c
				}
				return ' '
			}, gone) + after
		}})
	}
	return true
}

// earlierVariable reports whether name is a variable an earlier cell
// declared (not a function, constant or type).
func (r *rewriter) earlierVariable(name string) bool {
	if n, ok := r.userName(name); ok {
		return n.kind == "var"
	}
	return false
}

// convertDefine wraps rhs in a conversion to its static type when yaegi
// needs one: when its type depends on an index, or when it is an unnamed
// slice, map or array that comes from compiled code (so that later cells
// can index the variable without help).
func (r *rewriter) convertDefine(rhs ast.Expr) {
	indexed := spineIndexes(rhs)
	if !indexed && !fromCompiled(rhs) {
		return
	}
	t := r.staticType(rhs, 0)
	if t == nil {
		return
	}
	if !indexed {
		switch t.Kind() {
		case reflect.Slice, reflect.Map, reflect.Array:
			if t.Name() != "" {
				return // a named compiled type stays opaque to yaegi whatever the syntax
			}
		default:
			return
		}
	}
	if r.ambiguous(t) && !r.compiledRoot(rhs) {
		return
	}
	src, ok := r.typeSource(t)
	if !ok {
		return
	}
	if strings.HasPrefix(src, "*") || strings.HasPrefix(src, "<-") || strings.HasPrefix(src, "func") || strings.HasPrefix(src, "chan") {
		src = "(" + src + ")"
	}
	start, end := r.fset.Position(rhs.Pos()), r.fset.Position(rhs.End())
	r.insert(rhs.Pos(), src+"("+lineComment(start))
	r.insert(rhs.End(), ")"+lineComment(end))
}

// lineComment returns a /*line*/ directive that makes the next character
// sit at pos of the cell, whatever was inserted before it.
func lineComment(pos token.Position) string {
	return fmt.Sprintf("/*line _.go:%d:%d*/", pos.Line, pos.Column)
}

// insert adds text at p; see rewriter.text for how insertions order.
func (r *rewriter) insert(p token.Pos, text string) {
	at := r.off(p)
	r.edits = append(r.edits, edit{at, at, func() string { return text }})
}

// commaOK reports whether x is one of the expressions that a two-variable
// define reads with a second, boolean result.
func commaOK(x ast.Expr) bool {
	switch x := ast.Unparen(x).(type) {
	case *ast.IndexExpr, *ast.TypeAssertExpr:
		return true
	case *ast.UnaryExpr:
		return x.Op == token.ARROW
	}
	return false
}

// splitCommaOK turns `v, ok := x` into declarations of v and ok, run before
// the chunk, and the assignment `v, ok = x` in its place. yaegi's compiler
// panics on such a define at the top level, while the assignment works. The
// declarations run before the chunk's first statement, so the split is
// made only when no earlier statement of the chunk uses or declares those
// names.
func (r *rewriter) splitCommaOK(as *ast.AssignStmt, body []ast.Stmt, p *prepared) {
	var firstSrc string
	if ta, ok := ast.Unparen(as.Rhs[0]).(*ast.TypeAssertExpr); ok && ta.Type != nil {
		// The asserted type, as written: it may be a type the cells
		// declared, which reflect cannot name.
		firstSrc = r.nodeText(ta.Type)
	} else {
		first := r.staticType(as.Rhs[0], 0)
		if first == nil {
			return
		}
		if ix, ok := ast.Unparen(as.Rhs[0]).(*ast.IndexExpr); ok {
			if t := r.staticType(ix.X, 0); t == nil || t.Kind() != reflect.Map {
				return // not a map: no comma-ok form
			}
		}
		if r.ambiguous(first) && !r.compiledRoot(as.Rhs[0]) {
			return
		}
		if firstSrc, ok = r.typeSource(first); !ok {
			return
		}
	}
	types := []string{firstSrc, "bool"}
	var decls []string
	for i, l := range as.Lhs {
		id, ok := l.(*ast.Ident)
		if !ok {
			return
		}
		if id.Name == "_" {
			continue
		}
		if usedBefore(body, as, id.Name) {
			return
		}
		decls = append(decls, "var "+id.Name+" "+types[i])
	}
	if len(decls) == 0 {
		return
	}
	line := r.fset.Position(as.Pos()).Line
	p.predecl += fmt.Sprintf("\n//line _.go:%d:1\n%s\n", line, strings.Join(decls, "; "))
	r.replace(&tokenNode{as.TokPos, 2}, "= ")
}

// tokenNode is an ast.Node for a token's text.
type tokenNode struct {
	pos token.Pos
	n   int
}

func (t *tokenNode) Pos() token.Pos { return t.pos }
func (t *tokenNode) End() token.Pos { return t.pos + token.Pos(t.n) }

// usedBefore reports whether a statement of body before st mentions name.
func usedBefore(body []ast.Stmt, st ast.Stmt, name string) bool {
	for _, b := range body {
		if b == st {
			return false
		}
		found := false
		ast.Inspect(b, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == name {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// spineIndexes reports whether the type of x depends on an index
// expression: an index on the path from x to the operand that decides its
// type (not in a call's arguments, nor in a function literal).
func spineIndexes(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.IndexExpr:
		return true
	case *ast.ParenExpr:
		return spineIndexes(x.X)
	case *ast.SliceExpr:
		return spineIndexes(x.X)
	case *ast.StarExpr:
		return spineIndexes(x.X)
	case *ast.UnaryExpr:
		return spineIndexes(x.X)
	case *ast.BinaryExpr:
		return spineIndexes(x.X) || spineIndexes(x.Y)
	case *ast.SelectorExpr:
		return spineIndexes(x.X)
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "append" || id.Name == "min" || id.Name == "max") {
			for _, a := range x.Args {
				if spineIndexes(a) {
					return true
				}
			}
		}
		return spineIndexes(x.Fun)
	}
	return false
}

// fromCompiled reports whether x may have a type that yaegi only knows as
// a compiled one: a call, a selector or a name, as opposed to a literal, a
// make or a conversion, which carry their type in the syntax.
func fromCompiled(x ast.Expr) bool {
	switch x := ast.Unparen(x).(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return true
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "make" || id.Name == "new" || universeTypes[id.Name] != nil) {
			return false
		}
		switch ast.Unparen(x.Fun).(type) {
		case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.FuncLit:
			return false
		}
		return true
	}
	return false
}

// ambiguous reports whether t contains the reflect type that yaegi gives a
// type a cell declared: `type Celsius float64` is float64 to reflect, so
// a []float64 global may well be a []Celsius, and writing float64 would
// strip its methods.
func (r *rewriter) ambiguous(t reflect.Type) bool {
	declared := r.s.declaredRTypes()
	if len(declared) == 0 {
		return false
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type) bool
	walk = func(t reflect.Type) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if declared[t] {
			return true
		}
		if t.PkgPath() != "" {
			return false // a compiled named type is just itself
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Pointer, reflect.Chan:
			return walk(t.Elem())
		case reflect.Map:
			return walk(t.Key()) || walk(t.Elem())
		case reflect.Func:
			for i := 0; i < t.NumIn(); i++ {
				if walk(t.In(i)) {
					return true
				}
			}
			for i := 0; i < t.NumOut(); i++ {
				if walk(t.Out(i)) {
					return true
				}
			}
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				if walk(t.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	return walk(t)
}

// compiledRoot reports whether the type of x comes from compiled code for
// sure: x starts from a package's function or variable, or from a global
// of a compiled named type, and only indexes, selects and calls from
// there.
func (r *rewriter) compiledRoot(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return r.compiledRoot(x.X)
	case *ast.IndexExpr:
		return r.compiledRoot(x.X)
	case *ast.SliceExpr:
		return r.compiledRoot(x.X)
	case *ast.StarExpr:
		return r.compiledRoot(x.X)
	case *ast.CallExpr:
		return r.compiledRoot(x.Fun)
	case *ast.SelectorExpr:
		if _, ok := r.pkgOf(x.X); ok {
			return true
		}
		return r.compiledRoot(x.X)
	case *ast.Ident:
		t := r.identType(x, 0)
		for t != nil && t.Kind() == reflect.Pointer && t.Name() == "" {
			t = t.Elem()
		}
		return t != nil && t.PkgPath() != ""
	}
	return false
}

// declaredRTypes returns the reflect types of the non-generic types the
// cells declared, as yaegi represents them.
func (s *Session) declaredRTypes() map[reflect.Type]bool {
	s.mu.Lock()
	var todo []string
	for name, n := range s.mu.names {
		if _, done := s.mu.typeRT[name]; n.kind == "type" && !done {
			todo = append(todo, name)
		}
	}
	s.mu.Unlock()
	for _, name := range todo {
		// A cell cannot redefine a type (checkRedefinitions), so the
		// answer holds for the session's life.
		var t reflect.Type
		if v, err := s.evalQuiet("*new(" + name + ")"); err == nil && v.IsValid() {
			t = v.Type()
		}
		s.mu.Lock()
		s.mu.typeRT[name] = t
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[reflect.Type]bool{}
	for _, t := range s.mu.typeRT {
		if t != nil {
			set[t] = true
		}
	}
	return set
}

// staticType infers the static type of x from the chunk's syntax, the
// session's globals and the symbol tables, without evaluating anything
// that could have an effect; nil when it cannot tell for sure.
func (r *rewriter) staticType(x ast.Expr, depth int) reflect.Type {
	if depth > maxInferDepth {
		return nil
	}
	depth++
	switch x := x.(type) {
	case *ast.ParenExpr:
		return r.staticType(x.X, depth)
	case *ast.BasicLit:
		switch x.Kind {
		case token.INT:
			return reflect.TypeFor[int]()
		case token.FLOAT:
			return reflect.TypeFor[float64]()
		case token.IMAG:
			return reflect.TypeFor[complex128]()
		case token.CHAR:
			return reflect.TypeFor[rune]()
		case token.STRING:
			return reflect.TypeFor[string]()
		}
	case *ast.Ident:
		return r.identType(x, depth)
	case *ast.SelectorExpr:
		return r.selectorType(x, depth)
	case *ast.CallExpr:
		return r.callResult(x, depth)
	case *ast.IndexExpr:
		t := derefArray(r.staticType(x.X, depth))
		if t == nil {
			return nil
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Array:
			return t.Elem()
		case reflect.String:
			return reflect.TypeFor[byte]()
		}
	case *ast.SliceExpr:
		t := derefArray(r.staticType(x.X, depth))
		if t == nil {
			return nil
		}
		switch t.Kind() {
		case reflect.String, reflect.Slice:
			return t
		case reflect.Array:
			return reflect.SliceOf(t.Elem())
		}
	case *ast.StarExpr:
		if t := r.staticType(x.X, depth); t != nil && t.Kind() == reflect.Pointer {
			return t.Elem()
		}
	case *ast.UnaryExpr:
		t := r.staticType(x.X, depth)
		if t == nil {
			return nil
		}
		switch x.Op {
		case token.AND:
			return reflect.PointerTo(t)
		case token.ARROW:
			if t.Kind() == reflect.Chan && t.ChanDir()&reflect.RecvDir != 0 {
				return t.Elem()
			}
		case token.SUB, token.ADD, token.XOR, token.NOT:
			if c, _ := untypedConst(x.X); !c {
				return t
			}
		}
	case *ast.BinaryExpr:
		return r.binaryType(x, depth)
	case *ast.CompositeLit:
		return r.typeExpr(x.Type)
	case *ast.FuncLit:
		return r.typeExpr(x.Type)
	case *ast.TypeAssertExpr:
		if x.Type != nil {
			return r.typeExpr(x.Type)
		}
	}
	return nil
}

func (r *rewriter) binaryType(x *ast.BinaryExpr, depth int) reflect.Type {
	switch x.Op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		return reflect.TypeFor[bool]()
	case token.SHL, token.SHR:
		if c, _ := untypedConst(x.X); c {
			return nil // typed by the context, which the session does not follow
		}
		return r.staticType(x.X, depth)
	}
	cx, _ := untypedConst(x.X)
	cy, _ := untypedConst(x.Y)
	switch {
	case cx && cy:
		return nil // a constant: no define of it needs help
	case cx:
		return r.constFits(x.X, r.staticType(x.Y, depth))
	case cy:
		return r.constFits(x.Y, r.staticType(x.X, depth))
	}
	tx, ty := r.staticType(x.X, depth), r.staticType(x.Y, depth)
	if tx == nil || tx != ty {
		return nil
	}
	return tx
}

// constFits returns t, or nil when r.strictConsts is set and the untyped
// constant c cannot take type t. A conversion around a mismatched
// operation lets yaegi report the mismatch (without it, its compiler
// crashes), while a declaration typed from the mismatch would hide it
// behind a confusing assignment error.
func (r *rewriter) constFits(c ast.Expr, t reflect.Type) reflect.Type {
	if t == nil || !r.strictConsts {
		return t
	}
	isString := false
	ast.Inspect(c, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			isString = true
		}
		return true
	})
	if isString != (t.Kind() == reflect.String) {
		return nil
	}
	return t
}

// identType is the type of a name: a define earlier in the chunk, or a
// global of an earlier cell.
func (r *rewriter) identType(id *ast.Ident, depth int) reflect.Type {
	if id.Obj != nil {
		if vs, ok := id.Obj.Decl.(*ast.ValueSpec); ok && id.Obj.Kind == ast.Var {
			// A var of the same declaration chunk.
			if vs.Type != nil {
				return r.typeExpr(vs.Type)
			}
			for i, n := range vs.Names {
				if n.Name == id.Name && len(vs.Values) == len(vs.Names) {
					return r.staticType(vs.Values[i], depth)
				}
			}
			return nil
		}
		as, ok := id.Obj.Decl.(*ast.AssignStmt)
		if !ok || id.Obj.Kind != ast.Var {
			return nil
		}
		for i, l := range as.Lhs {
			if l, ok := l.(*ast.Ident); !ok || l.Name != id.Name {
				continue
			}
			switch {
			case len(as.Lhs) == len(as.Rhs):
				return r.staticType(as.Rhs[i], depth)
			case len(as.Rhs) == 1 && len(as.Lhs) == 2 && commaOK(as.Rhs[0]):
				if i == 1 {
					return reflect.TypeFor[bool]()
				}
				return r.staticType(as.Rhs[0], depth)
			case len(as.Rhs) == 1:
				call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
				if !ok {
					return nil
				}
				if ft := r.staticType(call.Fun, depth); ft != nil && ft.Kind() == reflect.Func && ft.NumOut() == len(as.Lhs) {
					return ft.Out(i)
				}
			}
			return nil
		}
		return nil
	}
	switch id.Name {
	case "true", "false":
		if r.universal(id) {
			return reflect.TypeFor[bool]()
		}
	}
	if n, ok := r.userName(id.Name); ok && n.kind != "var" && n.kind != "func" {
		return nil // a constant may be untyped; a type is not a value
	}
	if v, ok := r.global(id.Name); ok && v.IsValid() {
		return v.Type()
	}
	if n, ok := r.userName(id.Name); ok && n.kind == "func" {
		if v, err := r.s.evalQuiet(id.Name); err == nil && v.IsValid() && v.Kind() == reflect.Func {
			return v.Type()
		}
	}
	return nil
}

// pkgOf returns the import path that x names when x is a package name.
func (r *rewriter) pkgOf(x ast.Expr) (string, bool) {
	id, ok := x.(*ast.Ident)
	if !ok || id.Obj != nil {
		return "", false
	}
	path, ok := r.imps[id.Name]
	if !ok {
		return "", false
	}
	if _, shadowed := r.global(id.Name); shadowed {
		return "", false
	}
	if _, shadowed := r.userName(id.Name); shadowed {
		return "", false
	}
	return path, true
}

func (r *rewriter) selectorType(x *ast.SelectorExpr, depth int) reflect.Type {
	if path, ok := r.pkgOf(x.X); ok {
		v, ok := r.s.symbols().byPath[path][x.Sel.Name]
		if !ok || !v.IsValid() || isTypeSymbol(v) || v.Type().PkgPath() == "go/constant" {
			return nil // unknown, a type, or an untyped constant
		}
		return v.Type()
	}
	t := r.staticType(x.X, depth)
	if t == nil {
		return nil
	}
	return memberType(t, x.Sel.Name)
}

// memberType is the type of the field or method value t.name.
func memberType(t reflect.Type, name string) reflect.Type {
	if t.Kind() == reflect.Interface {
		if m, ok := t.MethodByName(name); ok {
			return m.Type
		}
		return nil
	}
	for _, mt := range []reflect.Type{t, reflect.PointerTo(t)} {
		if m, ok := mt.MethodByName(name); ok {
			return withoutReceiver(m.Type)
		}
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct {
		if f, ok := st.FieldByName(name); ok {
			return f.Type
		}
	}
	return nil
}

func withoutReceiver(ft reflect.Type) reflect.Type {
	in := make([]reflect.Type, 0, ft.NumIn())
	for i := 1; i < ft.NumIn(); i++ {
		in = append(in, ft.In(i))
	}
	out := make([]reflect.Type, 0, ft.NumOut())
	for i := 0; i < ft.NumOut(); i++ {
		out = append(out, ft.Out(i))
	}
	return reflect.FuncOf(in, out, ft.IsVariadic())
}

// callResult is the type of a call's only result, or of a conversion.
func (r *rewriter) callResult(call *ast.CallExpr, depth int) reflect.Type {
	if r.isTypeExpr(call.Fun) {
		return r.typeExpr(call.Fun)
	}
	if id, ok := call.Fun.(*ast.Ident); ok && id.Obj == nil && builtins[id.Name] && r.universal(id) {
		switch id.Name {
		case "len", "cap", "copy":
			return reflect.TypeFor[int]()
		case "append":
			if len(call.Args) > 0 {
				return r.staticType(call.Args[0], depth)
			}
		case "min", "max":
			for _, a := range call.Args {
				if c, _ := untypedConst(a); !c {
					return r.staticType(a, depth)
				}
			}
		case "new":
			if len(call.Args) == 1 {
				if t := r.typeExpr(call.Args[0]); t != nil {
					return reflect.PointerTo(t)
				}
			}
		case "make":
			if len(call.Args) > 0 {
				return r.typeExpr(call.Args[0])
			}
		}
		return nil
	}
	switch call.Fun.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return nil // an instantiated generic function
	}
	ft := r.staticType(call.Fun, depth)
	if ft == nil || ft.Kind() != reflect.Func || ft.NumOut() != 1 {
		return nil
	}
	return ft.Out(0)
}

// isTypeExpr reports whether x denotes a type (so a call of it is a
// conversion) that typeExpr may know.
func (r *rewriter) isTypeExpr(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return r.isTypeExpr(x.X)
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true
	case *ast.StarExpr:
		return r.isTypeExpr(x.X)
	case *ast.Ident:
		if n, ok := r.userName(x.Name); ok {
			return n.kind == "type"
		}
		if x.Obj != nil {
			return x.Obj.Kind == ast.Typ
		}
		return universeTypes[x.Name] != nil && r.universal(x)
	case *ast.SelectorExpr:
		if path, ok := r.pkgOf(x.X); ok {
			return isTypeSymbol(r.s.symbols().byPath[path][x.Sel.Name])
		}
	}
	return false
}

// typeExpr returns the reflect type that the type expression x denotes, or
// nil for types the cells declared and anything else it does not know.
func (r *rewriter) typeExpr(x ast.Expr) (t reflect.Type) {
	defer func() {
		if recover() != nil {
			t = nil // reflect refuses, say, a map with an incomparable key
		}
	}()
	switch x := x.(type) {
	case *ast.ParenExpr:
		return r.typeExpr(x.X)
	case *ast.Ident:
		if x.Obj == nil && r.universal(x) {
			return universeTypes[x.Name]
		}
	case *ast.SelectorExpr:
		if path, ok := r.pkgOf(x.X); ok {
			if v := r.s.symbols().byPath[path][x.Sel.Name]; isTypeSymbol(v) {
				return v.Type().Elem()
			}
		}
	case *ast.StarExpr:
		if e := r.typeExpr(x.X); e != nil {
			return reflect.PointerTo(e)
		}
	case *ast.ArrayType:
		e := r.typeExpr(x.Elt)
		if e == nil {
			return nil
		}
		if x.Len == nil {
			return reflect.SliceOf(e)
		}
		if lit, ok := x.Len.(*ast.BasicLit); ok && lit.Kind == token.INT {
			if n, err := strconv.Atoi(lit.Value); err == nil {
				return reflect.ArrayOf(n, e)
			}
		}
	case *ast.MapType:
		k, v := r.typeExpr(x.Key), r.typeExpr(x.Value)
		if k != nil && v != nil {
			return reflect.MapOf(k, v)
		}
	case *ast.ChanType:
		if e := r.typeExpr(x.Value); e != nil {
			dir := reflect.BothDir
			switch x.Dir {
			case ast.SEND:
				dir = reflect.SendDir
			case ast.RECV:
				dir = reflect.RecvDir
			}
			return reflect.ChanOf(dir, e)
		}
	case *ast.InterfaceType:
		if len(x.Methods.List) == 0 {
			return reflect.TypeFor[any]()
		}
	case *ast.FuncType:
		if x.TypeParams != nil {
			return nil
		}
		in, variadic, ok := r.fieldList(x.Params)
		if !ok {
			return nil
		}
		out, _, ok := r.fieldList(x.Results)
		if !ok {
			return nil
		}
		return reflect.FuncOf(in, out, variadic)
	}
	return nil
}

// fieldList returns the types of a parameter or result list.
func (r *rewriter) fieldList(fl *ast.FieldList) (types []reflect.Type, variadic, ok bool) {
	if fl == nil {
		return nil, false, true
	}
	for _, f := range fl.List {
		tx := f.Type
		if e, ok := tx.(*ast.Ellipsis); ok {
			variadic = true
			tx = &ast.ArrayType{Elt: e.Elt}
		}
		t := r.typeExpr(tx)
		if t == nil {
			return nil, false, false
		}
		for range max(len(f.Names), 1) {
			types = append(types, t)
		}
	}
	return types, variadic, true
}

// typeSource writes t as source a cell can use, importing packages under a
// hidden name where needed; false when t cannot be written (a type the
// cells declared, an unexported or generic type, a struct literal type).
func (r *rewriter) typeSource(t reflect.Type) (string, bool) {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			if _, shadowed := r.userName(t.Name()); shadowed || universeTypes[t.Name()] == nil {
				return "", false
			}
			return t.Name(), true
		}
		names := r.s.symbols().types[t]
		if len(names) == 0 {
			return "", false
		}
		// Prefer a package the cells import, then the type's own.
		tn := names[0]
		for _, n := range names {
			if n.path == t.PkgPath() {
				tn = n
			}
		}
		for _, n := range names {
			if r.visibleName(n.path) != "" {
				tn = n
				break
			}
		}
		pkg := r.importName(tn.path)
		return pkg + "." + tn.name, pkg != ""
	}
	elem := func(prefix string, e reflect.Type) (string, bool) {
		s, ok := r.typeSource(e)
		return prefix + s, ok
	}
	switch t.Kind() {
	case reflect.Slice:
		return elem("[]", t.Elem())
	case reflect.Array:
		return elem(fmt.Sprintf("[%d]", t.Len()), t.Elem())
	case reflect.Pointer:
		return elem("*", t.Elem())
	case reflect.Map:
		k, ok := r.typeSource(t.Key())
		if !ok {
			return "", false
		}
		return elem("map["+k+"]", t.Elem())
	case reflect.Chan:
		e, ok := r.typeSource(t.Elem())
		if !ok {
			return "", false
		}
		if t.Elem().Kind() == reflect.Chan && t.Elem().Name() == "" {
			e = "(" + e + ")"
		}
		switch t.ChanDir() {
		case reflect.RecvDir:
			return "<-chan " + e, true
		case reflect.SendDir:
			return "chan<- " + e, true
		}
		return "chan " + e, true
	case reflect.Func:
		var in, out []string
		for i := 0; i < t.NumIn(); i++ {
			p, ok := r.typeSource(t.In(i))
			if !ok {
				return "", false
			}
			if t.IsVariadic() && i == t.NumIn()-1 {
				p = "..." + strings.TrimPrefix(p, "[]")
			}
			in = append(in, p)
		}
		for i := 0; i < t.NumOut(); i++ {
			p, ok := r.typeSource(t.Out(i))
			if !ok {
				return "", false
			}
			out = append(out, p)
		}
		s := "func(" + strings.Join(in, ", ") + ")"
		switch len(out) {
		case 0:
		case 1:
			s += " " + out[0]
		default:
			s += " (" + strings.Join(out, ", ") + ")"
		}
		return s, true
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "interface{}", true
		}
	}
	return "", false
}

// importName returns a name under which the cells see the package path:
// one a cell imported it as, or else a hidden one that the chunk imports
// first; "" when the session has no symbols for path.
func (r *rewriter) importName(path string) string {
	if name := r.visibleName(path); name != "" {
		return name
	}
	for name, p := range r.imps {
		if p == path && strings.HasPrefix(name, hiddenPrefix) {
			return name
		}
	}
	if _, ok := r.s.symbols().byPath[path]; !ok {
		return ""
	}
	for n := 1; ; n++ {
		name := hiddenPrefix + strconv.Itoa(n)
		if _, taken := r.imps[name]; !taken {
			r.imps[name] = path
			r.newImports = append(r.newImports, importSpec{key: name, name: name, path: path})
			return name
		}
	}
}

// visibleName returns the name a cell imported path as, if one is usable.
func (r *rewriter) visibleName(path string) string {
	var names []string
	for name, p := range r.imps {
		if p != path || name == "_" || name == "." || strings.HasPrefix(name, hiddenPrefix) {
			continue
		}
		if _, shadowed := r.global(name); shadowed {
			continue
		}
		if _, shadowed := r.userName(name); shadowed {
			continue
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names) // the same source for the same cell every time
	return names[0]
}

// hiddenPrefix starts the names of imports the session makes for itself.
const hiddenPrefix = "_gotrain_pkg"

// symbolTables is what New loaded, indexed on first use by symbols.
type symbolTables struct {
	tables   []interp.Exports // immutable
	symOnce  sync.Once
	symIndex *symbolIndex // set once by symOnce
}

// derefArray returns the array t points to, or t: indexing and slicing a
// pointer to an array act on the array. It passes nil through.
func derefArray(t reflect.Type) reflect.Type {
	if t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Array {
		return t.Elem()
	}
	return t
}
