package session

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Chunk sources are wrapped exactly as yaegi wraps REPL input (see
// interp.parse in yaegi v0.16.1), and a //line directive that follows the
// wrapper makes every position, in our parser and in yaegi, the cell's own.
const (
	declWrap = "package main;"
	stmtWrap = "package main; func main() {"
	stmtTail = "\n}"
)

// prepared is a chunk ready for the interpreter.
type prepared struct {
	kind  chunkKind
	src   string // what Compile receives
	final bool   // the chunk ends with an expression whose value is shown
	// callee is the source of the final call's function when it is a name
	// or a selector chain (f, mon.Done, pkg.Func): evaluating it has no side
	// effects, so runCell can ask whether the call returns anything.
	callee  string
	imports map[string]string
	// specs are the imports an import chunk still makes, compiled one at a
	// time (see Session.runImports); typed defines add hidden imports here
	// too, ahead of a statement chunk.
	specs    []importSpec
	predecl  string // declarations to run before a statement chunk; see splitCommaOK
	postinit string // assignments to run after a declaration chunk; see deferVarInits
	// declaresMain is set for a declaration chunk with a func main, which
	// yaegi runs once the chunk compiles; see Session.retireMain.
	declaresMain bool
	decls        map[string]string // type and method keys to their source, recorded after success
	names        map[string]nameInfo
	unresolved   []*ast.Ident     // identifiers the chunk does not declare
	ranges       []token.Position // range statements over a value of unknown kind
	fset         *token.FileSet
	// declaredAt names the globals declared at a cell position: the
	// define's names at the statement, a var's name at the name. yaegi
	// reports a global it cannot type or initialize there.
	declaredAt map[[2]int]string
	// scopeCalls holds the cell positions ("L:C") of the function literals
	// localScopes wrapped statements in, to hide them from tracebacks.
	scopeCalls map[string]bool
}

// globalAt returns the names of the globals declared at pos, for messages.
func (p *prepared) globalAt(pos token.Position) string {
	if n, ok := p.declaredAt[[2]int{pos.Line, pos.Column}]; ok {
		return n
	}
	return "being declared"
}

// pos returns the cell position of p, a position in the chunk.
func (p *prepared) pos(at token.Pos) token.Position { return p.fset.Position(at) }

// nameInfo describes a global a cell declared, for completion, inspection
// and the rewrites that must know what a name is.
type nameInfo struct {
	kind   string   // "func", "type", "var" or "const"
	line   int      // the line in the cell that declared it
	src    string   // the declaration's first line
	params []string // a non-generic func's parameter types, as source
	result string   // a non-generic func's only result type, as source
	doc    string   // the // comment above the declaration, as text; set on commit
}

// importSpec is one import a chunk makes.
type importSpec struct {
	key              string // the name the import binds in the cells' file scope
	name             string // the explicit name, or ""
	path             string
	namePos, pathPos token.Position // in the cell; zero for a generated import
}

// source returns the import as a declaration whose positions are the cell's.
func (sp importSpec) source() string {
	at := func(p token.Position) string {
		if p.Line == 0 {
			return ""
		}
		return fmt.Sprintf("/*line _.go:%d:%d*/", p.Line, p.Column)
	}
	name := ""
	if sp.name != "" {
		name = at(sp.namePos) + sp.name + " "
	}
	return "import " + name + at(sp.pathPos) + strconv.Quote(sp.path)
}

// edit replaces src[start:end] with what render returns.
type edit struct {
	start, end int
	render     func() string
}

// rewriter prepares one chunk: it drops imports and declarations already
// made, rewrites what yaegi cannot run and refuses what cannot be rewritten.
type rewriter struct {
	s     *Session
	fset  *token.FileSet
	file  *token.File
	src   string // wrapped source
	edits []edit
	errs  ErrorList
	tmp   int // counter for generated names
	imps  map[string]string
	globs map[string]reflect.Value // the interpreter's globals, read once per chunk

	unknownRanges []token.Position
	newImports    []importSpec      // hidden imports the chunk needs first; see importName
	postinit      []func() string   // assignments deferVarInits moved out of the chunk
	strictConsts  bool              // see constFits
	globalLoops   map[ast.Node]bool // loops localScopes left at package scope
}

func lineCol(code string, off int) (line, col int) {
	line = 1 + strings.Count(code[:off], "\n")
	col = off - strings.LastIndex(code[:off], "\n")
	return line, col
}

// prepare parses c and returns the source to compile.
func (s *Session) prepare(cell string, c chunk) (*prepared, error) {
	line, col := lineCol(cell, c.start)
	text := fmt.Sprintf("\n//line _.go:%d:%d\n", line, col) + cell[c.start:c.end]
	var wrapped string
	if c.kind == stmtChunk {
		wrapped = stmtWrap + text + stmtTail
	} else {
		wrapped = declWrap + text
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "_.go", wrapped, parser.AllErrors)
	if err != nil {
		return nil, compileErrors(err)
	}
	r := &rewriter{s: s, fset: fset, file: fset.File(f.Pos()), src: wrapped, imps: map[string]string{}}
	p := &prepared{kind: c.kind, imports: map[string]string{}, decls: map[string]string{}, names: map[string]nameInfo{}}
	s.mu.Lock()
	for k, v := range s.mu.imports {
		r.imps[k] = v
	}
	s.mu.Unlock()
	switch c.kind {
	case importChunk:
		r.dedupImports(f, p)
	case declChunk:
		r.checkRedefinitions(f, p)
	}
	switch c.kind {
	case stmtChunk:
		r.typedDefines(f.Decls[0].(*ast.FuncDecl).Body.List, p)
		r.localScopes(f.Decls[0].(*ast.FuncDecl).Body.List, p)
	case declChunk:
		// Variables whose values move out of the chunk get their types
		// written; the others may need conversions.
		if !r.deferVarInits(f) {
			r.typedVars(f)
		}
	}
	r.collect(f)
	r.declaredNames(f, p)
	p.specs = append(p.specs, r.newImports...)
	p.unresolved = f.Unresolved
	p.ranges = r.unknownRanges
	p.fset = fset
	if c.kind == stmtChunk {
		body := f.Decls[0].(*ast.FuncDecl).Body.List
		if n := len(body); n > 0 {
			if es, ok := body[n-1].(*ast.ExprStmt); ok && !r.printCall(es.X) {
				p.final = true
				p.callee = calleeSource(es.X)
			}
		}
	}
	if err := r.errs.Err(); err != nil {
		return nil, err
	}
	out := r.text(0, len(wrapped))
	if c.kind == stmtChunk {
		// yaegi picks how to wrap REPL input by its first token. A chunk
		// that starts with func (`func() { ... }()`) is first tried as a
		// file, then wrapped in a func main that yaegi registers as the
		// package's main and runs again before every later program
		// (TestIssueRerunFuncLiteral). The empty statement makes every
		// statement chunk a function body, as the session means it.
		out = ";" + strings.TrimSuffix(strings.TrimPrefix(out, stmtWrap), stmtTail)
	} else {
		out = strings.TrimPrefix(out, declWrap)
	}
	p.src = out
	if len(r.postinit) > 0 {
		var assigns []string
		for _, a := range r.postinit {
			assigns = append(assigns, a())
		}
		p.postinit = ";" + strings.Join(assigns, "\n")
	}
	return p, nil
}

func (r *rewriter) off(p token.Pos) int { return r.file.Offset(p) }

func (r *rewriter) errorf(p token.Pos, format string, args ...any) {
	pos := r.fset.Position(p)
	r.errs = append(r.errs, Error{Pos: token.Position{Line: pos.Line, Column: pos.Column}, Msg: fmt.Sprintf(format, args...)})
}

// blank removes n's text but keeps its newlines, so later lines keep their
// numbers.
func (r *rewriter) blank(n ast.Node) {
	start, end := r.off(n.Pos()), r.off(n.End())
	text := r.src[start:end]
	r.edits = append(r.edits, edit{start, end, func() string {
		return strings.Map(func(c rune) rune {
			if c == '\n' {
				return c
			}
			return ' '
		}, text)
	}})
}

// text returns src[from:to] with the outermost edits inside it applied.
func (r *rewriter) text(from, to int) string {
	var b strings.Builder
	cur := from
	for _, e := range r.edits {
		if e.start < cur || e.end > to {
			continue // outside, or nested in an edit already applied
		}
		b.WriteString(r.src[cur:e.start])
		b.WriteString(e.render())
		cur = e.end
	}
	b.WriteString(r.src[cur:to])
	return b.String()
}

func (r *rewriter) nodeText(n ast.Node) string { return r.text(r.off(n.Pos()), r.off(n.End())) }

func (r *rewriter) pkgName(path string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if n, ok := r.s.pkgNames[path]; ok {
		return n
	}
	return pathBase(path)
}

func pathBase(p string) string {
	b := path.Base(p)
	if strings.HasPrefix(b, "v") && len(b) > 1 {
		if _, err := strconv.Atoi(b[1:]); err == nil {
			return path.Base(path.Dir(p)) // math/rand/v2 is package rand
		}
	}
	return b
}

func (r *rewriter) dedupImports(f *ast.File, p *prepared) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		kept := 0
		var drop []ast.Node
		for _, spec := range gd.Specs {
			is := spec.(*ast.ImportSpec)
			ipath, _ := strconv.Unquote(is.Path.Value)
			name := r.pkgName(ipath)
			if is.Name != nil {
				name = is.Name.Name
			}
			if seen, ok := r.imps[name]; ok && seen == ipath || p.imports[name] == ipath {
				drop = append(drop, is)
				continue
			}
			kept++
			p.imports[name] = ipath
			spec := importSpec{key: name, path: ipath, pathPos: r.fset.Position(is.Path.Pos())}
			if is.Name != nil {
				spec.name = is.Name.Name
				spec.namePos = r.fset.Position(is.Name.Pos())
			}
			p.specs = append(p.specs, spec)
		}
		if kept == 0 {
			r.blank(gd)
			continue
		}
		for _, n := range drop {
			r.blank(n)
		}
	}
	for k, v := range p.imports {
		r.imps[k] = v
	}
}

// checkRedefinitions refuses a type or method that an earlier cell declared
// differently: yaegi would keep the old one without a word. An identical
// declaration (a cell run again) is dropped.
func (r *rewriter) checkRedefinitions(f *ast.File, p *prepared) {
	r.s.mu.Lock()
	known := r.s.mu.decls
	check := func(key, what string, n ast.Node, blankNode ast.Node) bool {
		src := r.src[r.off(n.Pos()):r.off(n.End())]
		prev, ok := known[key]
		switch {
		case !ok:
			p.decls[key] = src
		case prev.src == src:
			r.blank(blankNode)
			return true
		default:
			r.errorf(n.Pos(), "%s %s is already declared at line %d of an earlier cell; the interpreter cannot redefine it (restart the kernel, or choose a new name)", what, key, prev.line)
		}
		return false
	}
	defer r.s.mu.Unlock()
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			if len(d.Specs) == 1 && !d.Lparen.IsValid() {
				check(d.Specs[0].(*ast.TypeSpec).Name.Name, "type", d.Specs[0], d)
				continue
			}
			for _, spec := range d.Specs {
				check(spec.(*ast.TypeSpec).Name.Name, "type", spec, spec)
			}
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				continue
			}
			check(recvName(d.Recv.List[0].Type)+"."+d.Name.Name, "method", d, d)
		}
	}
}

func (r *rewriter) declaredNames(f *ast.File, p *prepared) {
	add := func(id *ast.Ident, kind string, decl ast.Node) {
		if id.Name == "_" {
			return
		}
		src := r.src[r.off(decl.Pos()):r.off(decl.End())]
		src, _, _ = strings.Cut(src, "\n")
		p.names[id.Name] = nameInfo{kind: kind, line: r.fset.Position(id.Pos()).Line, src: strings.TrimSpace(src)}
	}
	p.declaredAt = map[[2]int]string{}
	at := func(pos token.Pos, names string) {
		cp := r.fset.Position(pos)
		p.declaredAt[[2]int{cp.Line, cp.Column}] = names
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "main" && p.kind == declChunk {
				p.declaresMain = true
			}
			if d.Recv == nil && d.Name.Name != "main" {
				add(d.Name, "func", d)
				if d.Type.TypeParams == nil {
					n := p.names[d.Name.Name]
					n.params = r.fieldTypes(d.Type)
					if res := d.Type.Results; res != nil && len(res.List) == 1 && len(res.List[0].Names) <= 1 {
						n.result = r.nodeText(res.List[0].Type)
					}
					p.names[d.Name.Name] = n
				}
			}
			if d.Name.Name == "main" && d.Recv == nil && d.Body != nil {
				// The statement wrapper: its top-level := define globals.
				for _, st := range d.Body.List {
					if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
						var names []string
						for _, l := range as.Lhs {
							if id, ok := l.(*ast.Ident); ok {
								add(id, "var", as)
								names = append(names, id.Name)
							}
						}
						at(as.Pos(), strings.Join(names, ", "))
					}
				}
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					add(sp.Name, "type", sp)
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range sp.Names {
						add(n, kind, sp)
						at(n.Pos(), n.Name)
					}
				}
			}
		}
	}
}

func recvName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// calleeSource returns the function expression of the call x as source when
// it is a name or a chain of selectors on a name, and "" otherwise.
func calleeSource(x ast.Expr) string {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return ""
	}
	var parts []string
	for e := call.Fun; ; {
		switch t := e.(type) {
		case *ast.Ident:
			parts = append(parts, t.Name)
			slices.Reverse(parts)
			return strings.Join(parts, ".")
		case *ast.SelectorExpr:
			parts = append(parts, t.Sel.Name)
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		default:
			return ""
		}
	}
}

// printCall reports whether x calls a fmt function whose (n int, err error)
// results nobody wants to see under a cell.
func (r *rewriter) printCall(x ast.Expr) bool {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil || r.imps[id.Name] != "fmt" {
		return false
	}
	n := sel.Sel.Name
	return strings.HasPrefix(n, "Print") || strings.HasPrefix(n, "Fprint") ||
		strings.HasPrefix(n, "Scan") || strings.HasPrefix(n, "Fscan") || strings.HasPrefix(n, "Sscan")
}

// global returns the value of an interpreter global named name, if any.
func (r *rewriter) global(name string) (reflect.Value, bool) {
	if r.globs == nil {
		r.globs = r.s.globals()
		if r.globs == nil {
			r.globs = map[string]reflect.Value{}
		}
	}
	v, ok := r.globs[name]
	return v, ok
}

// universal reports whether id refers to the universe scope: neither the
// chunk nor an earlier cell declared it.
func (r *rewriter) universal(id *ast.Ident) bool {
	if id.Obj != nil {
		return false
	}
	if _, ok := r.userName(id.Name); ok {
		return false
	}
	_, shadowed := r.global(id.Name)
	return !shadowed
}

func (r *rewriter) userName(name string) (nameInfo, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	n, ok := r.s.mu.names[name]
	return n, ok
}

// collect records the edits for every construct yaegi cannot run.
func (r *rewriter) collect(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && r.universal(id) {
				switch id.Name {
				case "min", "max":
					r.minMax(n, id.Name)
				case "clear":
					r.replace(id, "_gotrain.Clear")
				}
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				r.mapsCall(n, sel)
				r.genericCall(n, sel)
			}
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Obj == nil {
				if p, ok := r.imps[id.Name]; ok && (p == "slices" || p == "maps") {
					name := p + "." + n.Sel.Name
					if to, ok := shimNames[name]; ok {
						r.replace(n, to)
					} else if !nativeGeneric[name] && !(p == "maps" && mapsRewritten[n.Sel.Name]) {
						r.errorf(n.Pos(), "%s is generic and the interpreter cannot run it; supported: %s", name, supportedShims(p))
					}
				}
			}
		case *ast.RangeStmt:
			r.rangeStmt(n)
			r.rangeVars(n)
		case *ast.ForStmt:
			r.forVars(n)
		case *ast.GoStmt:
			r.goStmt(n)
		}
		return true
	})
	sort.SliceStable(r.edits, func(i, j int) bool {
		a, b := r.edits[i], r.edits[j]
		if a.start != b.start {
			return a.start < b.start
		}
		// An insertion goes before a replacement that starts where it
		// does, so that a conversion wraps a rewritten call.
		if (a.start == a.end) != (b.start == b.end) {
			return a.start == a.end
		}
		return a.end > b.end
	})
}

func (r *rewriter) replace(n ast.Node, with string) {
	r.edits = append(r.edits, edit{r.off(n.Pos()), r.off(n.End()), func() string { return with }})
}

// untypedConst reports whether x is a literal constant expression, whose
// type yaegi's generic inference would wrongly take from the first one.
func untypedConst(x ast.Expr) (isConst, isFloat bool) {
	switch x := x.(type) {
	case *ast.BasicLit:
		return true, x.Kind == token.FLOAT
	case *ast.ParenExpr:
		return untypedConst(x.X)
	case *ast.UnaryExpr:
		return untypedConst(x.X)
	case *ast.BinaryExpr:
		c1, f1 := untypedConst(x.X)
		c2, f2 := untypedConst(x.Y)
		return c1 && c2, f1 || f2
	}
	return false, false
}

// minMax rewrites the min and max builtins into generic helpers. yaegi
// infers the type argument from the first argument only, so typed
// arguments go first (min and max are symmetric), and all-constant calls
// with a float constant are made float64.
func (r *rewriter) minMax(call *ast.CallExpr, name string) {
	if len(call.Args) == 0 || call.Ellipsis.IsValid() {
		return
	}
	r.edits = append(r.edits, edit{r.off(call.Pos()), r.off(call.End()), func() string {
		var typed, consts []string
		anyFloat := false
		for _, a := range call.Args {
			c, f := untypedConst(a)
			anyFloat = anyFloat || f
			if c {
				consts = append(consts, r.nodeText(a))
			} else {
				typed = append(typed, r.nodeText(a))
			}
		}
		if len(typed) == 0 && anyFloat {
			consts[0] = "float64(" + consts[0] + ")"
		}
		return r.typed(r.typeOf(call), "_gotrain_"+name+"("+strings.Join(append(typed, consts...), ", ")+")")
	}})
}

// mapsCall rewrites maps.Keys, maps.Values and maps.Clone, which yaegi
// cannot instantiate, into a typed function literal when the map is a
// global whose key and value types can be written in Go syntax. Keys and
// Values return slices, not iterators; slices.Sorted and slices.Collect
// accept those.
func (r *rewriter) mapsCall(call *ast.CallExpr, sel *ast.SelectorExpr) {
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil || r.imps[id.Name] != "maps" || len(call.Args) != 1 {
		return
	}
	arg, ok := call.Args[0].(*ast.Ident)
	if !ok {
		return
	}
	k, e, ok := r.mapTypes(arg)
	if !ok {
		return
	}
	m := "map[" + k + "]" + e
	var body string
	switch sel.Sel.Name {
	case "Keys":
		body = "func(m " + m + ") []" + k + " { s := make([]" + k + ", 0, len(m)); for k := range m { s = append(s, k) }; return s }"
	case "Values":
		body = "func(m " + m + ") []" + e + " { s := make([]" + e + ", 0, len(m)); for _, v := range m { s = append(s, v) }; return s }"
	case "Clone":
		body = "func(m " + m + ") " + m + " { if m == nil { return nil }; c := make(" + m + ", len(m)); for k, v := range m { c[k] = v }; return c }"
	default:
		return
	}
	r.edits = append(r.edits, edit{r.off(call.Pos()), r.off(call.End()), func() string { return body + "(" + arg.Name + ")" }})
}

// mapTypes finds the key and element types of the map named id, from its
// declaration in the chunk or from the interpreter's globals.
func (r *rewriter) mapTypes(id *ast.Ident) (k, e string, ok bool) {
	if id.Obj == nil {
		v, ok := r.global(id.Name)
		if !ok || v.Kind() != reflect.Map {
			return "", "", false
		}
		k, e = v.Type().Key().String(), v.Type().Elem().String()
		return k, e, writable(k) && writable(e)
	}
	var typ ast.Expr
	switch d := id.Obj.Decl.(type) {
	case *ast.ValueSpec:
		typ = d.Type
		if typ == nil && len(d.Values) == len(d.Names) {
			for i, n := range d.Names {
				if n.Name == id.Name {
					typ = exprType(d.Values[i])
				}
			}
		}
	case *ast.AssignStmt:
		if len(d.Lhs) == len(d.Rhs) {
			for i, l := range d.Lhs {
				if l, ok := l.(*ast.Ident); ok && l.Name == id.Name {
					typ = exprType(d.Rhs[i])
				}
			}
		}
	}
	mt, ok := typ.(*ast.MapType)
	if !ok {
		return "", "", false
	}
	return r.nodeText(mt.Key), r.nodeText(mt.Value), true
}

// exprType is the type written in a composite literal or make call.
func exprType(x ast.Expr) ast.Expr {
	switch x := x.(type) {
	case *ast.CompositeLit:
		return x.Type
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "make" && len(x.Args) > 0 {
			return x.Args[0]
		}
	}
	return nil
}

// writable reports whether a reflect type string is also valid Go source
// in a cell: built from predeclared types only.
func writable(t string) bool {
	return !strings.ContainsAny(t, ". ")
}

// typed converts a generic helper's result to t when t is known. yaegi
// v0.16.1 cannot type a global declared from a generic call (`m :=
// slices.Max(xs)` at a cell's top level fails with "nil reflect type"),
// while a conversion gives the declaration its type.
func (r *rewriter) typed(t, call string) string {
	if t == "" {
		return call
	}
	return t + "(" + call + ")"
}

// genericCall rewrites a call of an interpreted generic helper (slices.Max
// and the like) so that its result has a static type; see typed.
func (r *rewriter) genericCall(call *ast.CallExpr, sel *ast.SelectorExpr) {
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil {
		return
	}
	p := r.imps[id.Name]
	to, ok := shimNames[p+"."+sel.Sel.Name]
	if !ok || !strings.HasPrefix(to, "_gotrain_") {
		return
	}
	r.edits = append(r.edits, edit{r.off(call.Pos()), r.off(call.End()), func() string {
		var args []string
		for _, a := range call.Args {
			args = append(args, r.nodeText(a))
		}
		return r.typed(r.typeOf(call), to+"("+strings.Join(args, ", ")+")")
	}})
}

// typeOf guesses the static type of x as source text, from literals,
// declarations in the chunk and the interpreter's globals; "" when unknown.
func (r *rewriter) typeOf(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.INT:
			return "int"
		case token.FLOAT:
			return "float64"
		case token.STRING:
			return "string"
		case token.CHAR:
			return "rune"
		}
	case *ast.ParenExpr:
		return r.typeOf(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD || x.Op == token.XOR {
			return r.typeOf(x.X)
		}
		if x.Op == token.NOT {
			return "bool"
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR:
			return "bool"
		case token.SHL, token.SHR:
			return r.typeOf(x.X)
		}
		if c, _ := untypedConst(x.X); c {
			if t := r.typeOf(x.Y); t != "" {
				return t
			}
		}
		return r.typeOf(x.X)
	case *ast.CompositeLit:
		if x.Type != nil {
			return r.nodeText(x.Type)
		}
	case *ast.IndexExpr:
		if t := r.typeOf(x.X); strings.HasPrefix(t, "[]") {
			return t[2:]
		}
	case *ast.Ident:
		if x.Name == "true" || x.Name == "false" {
			return "bool"
		}
		if x.Obj != nil {
			return r.localType(x)
		}
		if v, ok := r.global(x.Name); ok && v.IsValid() {
			if t := v.Type().String(); writable(t) {
				return t
			}
		}
	case *ast.CallExpr:
		return r.callType(x)
	}
	return ""
}

func (r *rewriter) callType(call *ast.CallExpr) string {
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		if fun.Obj != nil {
			if d, ok := fun.Obj.Decl.(*ast.FuncDecl); ok && d.Type.TypeParams == nil {
				if res := d.Type.Results; res != nil && len(res.List) == 1 && len(res.List[0].Names) <= 1 {
					return r.nodeText(res.List[0].Type)
				}
			}
			return ""
		}
		if n, ok := r.userName(fun.Name); ok && n.kind == "func" {
			return n.result
		}
		if v, ok := r.global(fun.Name); ok && v.Kind() == reflect.Func && v.Type().NumOut() == 1 {
			if t := v.Type().Out(0).String(); writable(t) {
				return t
			}
			return ""
		}
		if !r.universal(fun) && fun.Name != "min" && fun.Name != "max" {
			return ""
		}
		switch {
		case fun.Name == "len" || fun.Name == "cap":
			return "int"
		case intTypes[fun.Name] || fun.Name == "float64" || fun.Name == "float32" || fun.Name == "string" || fun.Name == "bool":
			return fun.Name
		case fun.Name == "min" || fun.Name == "max":
			if _, ok := r.userName(fun.Name); ok {
				return ""
			}
			anyFloat := false
			for _, a := range call.Args {
				c, f := untypedConst(a)
				anyFloat = anyFloat || f
				if !c {
					return r.typeOf(a)
				}
			}
			if anyFloat {
				return "float64"
			}
			if len(call.Args) > 0 {
				return r.typeOf(call.Args[0])
			}
		}
	case *ast.SelectorExpr:
		id, ok := fun.X.(*ast.Ident)
		if !ok || id.Obj != nil || len(call.Args) == 0 {
			return ""
		}
		switch r.imps[id.Name] + "." + fun.Sel.Name {
		case "slices.Max", "slices.Min":
			if t := r.typeOf(call.Args[0]); strings.HasPrefix(t, "[]") {
				return t[2:]
			}
		case "slices.Clone", "slices.Sorted", "slices.Collect":
			return r.typeOf(call.Args[0])
		case "maps.Keys", "maps.Values":
			if a, ok := call.Args[0].(*ast.Ident); ok {
				if k, e, ok := r.mapTypes(a); ok {
					if fun.Sel.Name == "Keys" {
						return "[]" + k
					}
					return "[]" + e
				}
			}
		}
	}
	return ""
}

// localType follows a local identifier to its declaration in the chunk.
func (r *rewriter) localType(id *ast.Ident) string {
	switch d := id.Obj.Decl.(type) {
	case *ast.AssignStmt:
		if len(d.Lhs) == len(d.Rhs) {
			for i, l := range d.Lhs {
				if l, ok := l.(*ast.Ident); ok && l.Name == id.Name && l.Pos() == id.Obj.Pos() {
					return r.typeOf(d.Rhs[i])
				}
			}
		}
	case *ast.ValueSpec:
		if d.Type != nil {
			return r.nodeText(d.Type)
		}
		for i, n := range d.Names {
			if n.Name == id.Name && i < len(d.Values) {
				return r.typeOf(d.Values[i])
			}
		}
	case *ast.Field:
		return r.nodeText(d.Type)
	}
	return ""
}

// nativeGeneric lists the generic functions yaegi's own generic sources run.
var nativeGeneric = map[string]bool{"slices.Contains": true, "slices.Index": true}

// mapsRewritten are the maps functions mapsCall and rangeStmt handle when
// they can; elsewhere yaegi's own error stands.
var mapsRewritten = map[string]bool{"Keys": true, "Values": true, "Clone": true}

var builtins = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true,
	"delete": true, "imag": true, "len": true, "make": true, "max": true, "min": true,
	"new": true, "panic": true, "print": true, "println": true, "real": true, "recover": true,
}

// goStmt makes a panic in a goroutine that a cell starts a message in the
// notebook instead of the end of the kernel. Go evaluates the function and
// its arguments where the go statement runs; yaegi shares one loop variable
// across iterations (Go 1.21 semantics), so a rewrite that evaluated them
// later, inside the goroutine, would be wrong for `go work(i)` in a loop.
// In order of preference:
//   - a function literal gets a recovering defer at the top of its body;
//   - a function whose parameter types are known (declared in a cell, or a
//     global of a writable func type) is called through a typed literal
//     that receives the arguments;
//   - any other call goes through a compiled trampoline that receives the
//     function and arguments as values (yaegi's own go statement would
//     evaluate a compiled callee's arguments late, so a synchronous
//     interpreted call collects them first);
//   - builtins and variadic calls of unknown functions get a recovering
//     closure, whose arguments are evaluated in the goroutine (BUG).
func (r *rewriter) goStmt(g *ast.GoStmt) {
	line := r.fset.Position(g.Pos()).Line
	call := g.Call
	guard := fmt.Sprintf("defer func() { if r := recover(); r != nil { _gotrain.GoPanic(%d, r) } }(); ", line)
	if lit, ok := call.Fun.(*ast.FuncLit); ok {
		at := r.off(lit.Body.Lbrace) + 1
		r.edits = append(r.edits, edit{at, at, func() string { return guard }})
		return
	}
	r.edits = append(r.edits, edit{r.off(g.Pos()), r.off(g.End()), func() string {
		fun := r.nodeText(call.Fun)
		var args []string
		for _, a := range call.Args {
			args = append(args, r.nodeText(a))
		}
		ellipsis := ""
		if call.Ellipsis.IsValid() {
			ellipsis = "..."
		}
		if params, ok := r.paramTypes(call.Fun); ok && len(params) == len(args) {
			var decl, use []string
			for i, p := range params {
				name := fmt.Sprintf("_gotrain_a%d", i)
				decl = append(decl, name+" "+p)
				if strings.HasPrefix(p, "...") {
					name += "..."
				}
				use = append(use, name)
			}
			return fmt.Sprintf("go func(%s) { %s%s(%s) }(%s%s)", strings.Join(decl, ", "), guard, fun, strings.Join(use, ", "), strings.Join(args, ", "), ellipsis)
		}
		id, isIdent := call.Fun.(*ast.Ident)
		if call.Ellipsis.IsValid() || isIdent && builtins[id.Name] && r.universal(id) {
			return fmt.Sprintf("go func() { %s%s }()", guard, r.nodeText(call))
		}
		return fmt.Sprintf("func(f any, a ...any) { go _gotrain.Go(%d, f, a...) }(%s)", line, strings.Join(append([]string{fun}, args...), ", "))
	}})
}

// paramTypes returns the parameter types of the function fun names, as
// source text ("...T" for a variadic one), when they are known and can be
// written in a cell.
func (r *rewriter) paramTypes(fun ast.Expr) ([]string, bool) {
	id, ok := fun.(*ast.Ident)
	if !ok {
		return nil, false
	}
	if id.Obj != nil {
		switch d := id.Obj.Decl.(type) {
		case *ast.FuncDecl:
			if d.Type.TypeParams == nil {
				return r.fieldTypes(d.Type), true
			}
		case *ast.AssignStmt:
			for i, l := range d.Lhs {
				if l, ok := l.(*ast.Ident); ok && l.Name == id.Name && i < len(d.Rhs) && len(d.Lhs) == len(d.Rhs) {
					if lit, ok := d.Rhs[i].(*ast.FuncLit); ok {
						return r.fieldTypes(lit.Type), true
					}
				}
			}
		}
		return nil, false
	}
	if n, ok := r.userName(id.Name); ok && n.kind == "func" && n.params != nil {
		return n.params, true
	}
	v, ok := r.global(id.Name)
	if !ok || v.Kind() != reflect.Func {
		return nil, false
	}
	t := v.Type()
	var params []string
	for i := 0; i < t.NumIn(); i++ {
		p := t.In(i).String()
		if t.IsVariadic() && i == t.NumIn()-1 {
			p = "..." + t.In(i).Elem().String()
		}
		if !writable(strings.TrimPrefix(p, "...")) {
			return nil, false
		}
		params = append(params, p)
	}
	return params, true
}

// fieldTypes lists a function type's parameter types as source text.
func (r *rewriter) fieldTypes(ft *ast.FuncType) []string {
	params := []string{}
	for _, f := range ft.Params.List {
		t := r.nodeText(f.Type)
		n := max(len(f.Names), 1)
		for range n {
			params = append(params, t)
		}
	}
	return params
}

var intTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true, "rune": true, "byte": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

func isIntKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uintptr
}

// rangeKind guesses what a range expression ranges over, from the syntax
// and the interpreter's globals: "int", "func", "keys" (a rewritten
// maps.Keys/Values, which yields elements) or "" when it is an ordinary
// container or unknown.
func (r *rewriter) rangeKind(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT {
			return "int"
		}
	case *ast.ParenExpr:
		return r.rangeKind(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD || x.Op == token.XOR {
			return r.rangeKind(x.X)
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.SHL, token.SHR, token.AND, token.OR, token.XOR, token.AND_NOT:
			if r.rangeKind(x.X) == "int" || r.rangeKind(x.Y) == "int" {
				return "int"
			}
		}
	case *ast.FuncLit:
		return "func"
	case *ast.CallExpr:
		if intTypes[r.callType(x)] {
			return "int"
		}
		switch fun := x.Fun.(type) {
		case *ast.Ident:
			if fun.Obj == nil && (fun.Name == "len" || fun.Name == "cap" || intTypes[fun.Name]) {
				return "int"
			}
		case *ast.SelectorExpr:
			if id, ok := fun.X.(*ast.Ident); ok && id.Obj == nil {
				switch r.imps[id.Name] + "." + fun.Sel.Name {
				case "maps.Keys":
					return "keys"
				case "maps.Values":
					return "values"
				case "slices.All", "slices.Values", "slices.Backward", "maps.All":
					return "func"
				}
			}
		}
	case *ast.Ident:
		if x.Obj != nil {
			return r.localKind(x)
		}
		if n, ok := r.userName(x.Name); ok && n.kind == "func" {
			return "func"
		}
		if v, ok := r.global(x.Name); ok {
			return kindOf(v)
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil {
			if v, ok := r.global(id.Name); ok {
				for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
					if v.IsNil() {
						return ""
					}
					v = v.Elem()
				}
				if v.Kind() == reflect.Struct {
					if f := v.FieldByName(x.Sel.Name); f.IsValid() {
						return kindOf(f)
					}
				}
			}
		}
	}
	return ""
}

func kindOf(v reflect.Value) string {
	switch {
	case isIntKind(v.Kind()):
		return "int"
	case v.Kind() == reflect.Func:
		return "func"
	}
	return ""
}

// localKind follows an identifier to its declaration in the same chunk.
func (r *rewriter) localKind(id *ast.Ident) string {
	switch id.Obj.Kind {
	case ast.Fun:
		return "func"
	case ast.Con:
		if vs, ok := id.Obj.Decl.(*ast.ValueSpec); ok {
			if t, ok := vs.Type.(*ast.Ident); ok {
				if intTypes[t.Name] {
					return "int"
				}
				return ""
			}
			for i, n := range vs.Names {
				if n.Name == id.Name && i < len(vs.Values) {
					return r.rangeKind(vs.Values[i])
				}
			}
		}
	case ast.Var:
		switch d := id.Obj.Decl.(type) {
		case *ast.AssignStmt:
			if len(d.Lhs) == len(d.Rhs) {
				for i, l := range d.Lhs {
					if l, ok := l.(*ast.Ident); ok && l.Name == id.Name {
						return r.rangeKind(d.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			if t, ok := d.Type.(*ast.Ident); ok && intTypes[t.Name] {
				return "int"
			}
			if _, ok := d.Type.(*ast.FuncType); ok {
				return "func"
			}
			for i, n := range d.Names {
				if n.Name == id.Name && i < len(d.Values) {
					return r.rangeKind(d.Values[i])
				}
			}
		case *ast.Field:
			if t, ok := d.Type.(*ast.Ident); ok && intTypes[t.Name] {
				return "int"
			}
			if _, ok := d.Type.(*ast.FuncType); ok {
				return "func"
			}
		}
	}
	return ""
}

// rangeStmt rewrites `for i := range n` over an integer into a counting
// loop on the same line, with n evaluated once as Go specifies.
func (r *rewriter) rangeStmt(rs *ast.RangeStmt) {
	switch r.rangeKind(rs.X) {
	case "":
		r.unknownRanges = append(r.unknownRanges, r.fset.Position(rs.X.Pos()))
	case "func":
		r.errorf(rs.X.Pos(), "range over function is not supported by the interpreter; collect the values into a slice first")
	case "keys", "values":
		// Ranging over the iterator maps.Keys(m) or maps.Values(m) is
		// ranging over m itself, keeping the key or the value.
		call := rs.X.(*ast.CallExpr)
		if len(call.Args) != 1 || rs.Value != nil {
			return
		}
		arg := call.Args[0]
		r.edits = append(r.edits, edit{r.off(call.Pos()), r.off(call.End()), func() string { return r.nodeText(arg) }})
		if rs.Key != nil && r.rangeKind(rs.X) == "values" {
			start := r.off(rs.Key.Pos())
			r.edits = append(r.edits, edit{start, start, func() string { return "_, " }})
		}
	case "int":
		r.tmp++
		n := fmt.Sprintf("_gotrain_n%d", r.tmp)
		key := fmt.Sprintf("_gotrain_i%d", r.tmp)
		define := true
		if id, ok := rs.Key.(*ast.Ident); ok && id.Name != "_" {
			key = id.Name
			define = rs.Tok == token.DEFINE
		}
		start, end := r.off(rs.For), r.off(rs.Body.Lbrace)
		x := rs.X
		r.edits = append(r.edits, edit{start, end, func() string {
			xs := r.nodeText(x)
			if !define {
				// `for i = range n` assigns an existing variable; n is then
				// evaluated on each iteration, which only differs from Go
				// when n changes inside the loop.
				return fmt.Sprintf("for %s = (%s) - (%s); %s < (%s); %s++ ", key, xs, xs, key, xs, key)
			}
			zero := "(" + xs + ")-(" + xs + ")" // typed like n, but evaluates it twice more
			if c, _ := untypedConst(x); c {
				zero = "0"
			} else if t := r.typeOf(x); t != "" {
				zero = t + "(0)"
			}
			return fmt.Sprintf("for %s, %s := %s, (%s); %s < %s; %s++ ", key, n, zero, xs, key, n, key)
		}})
	}
}

// yaegi gives a loop one variable for all its iterations, as Go did before
// 1.22, so closures and pointers made in the body all saw the last value
// (TestIssueLoopVariablePerIteration). rangeVars and forVars give each
// iteration its own copy by declaring `i := i` at the start of the body,
// on the same line, when the body needs one: a function literal or an &
// refers to the variable, or (for range only) the body assigns it.

// rangeVars copies the variables a range statement declares. A range
// loop's own counter is never the variable, so the copy is always right.
func (r *rewriter) rangeVars(rs *ast.RangeStmt) {
	if rs.Tok != token.DEFINE || r.globalLoops[rs] {
		return
	}
	objs := identObjs(rs.Key, rs.Value)
	captured, assigned := loopVarUses(rs.Body, objs)
	var copies []string
	for i, o := range objs {
		if captured[i] || assigned[i] {
			copies = append(copies, o.Name)
		}
	}
	r.copyLoopVars(rs.Body, copies, nil, nil)
}

// forVars copies the variables a three-clause loop declares. In Go 1.22
// the next iteration's variable starts from this one's last value, so a
// copy the body assigns is also carried back to the loop's variable, at
// the end of the body and before each continue. A body that redeclares
// such a variable or has a labelled continue keeps yaegi's single
// variable for it.
func (r *rewriter) forVars(fs *ast.ForStmt) {
	init, ok := fs.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || r.globalLoops[fs] {
		return
	}
	objs := identObjs(init.Lhs...)
	captured, assigned := loopVarUses(fs.Body, objs)
	var copies, carried []string
	for i, o := range objs {
		switch {
		case captured[i] && !assigned[i]:
			copies = append(copies, o.Name)
		case captured[i] && assigned[i] && !redeclared(fs.Body, o):
			carried = append(carried, o.Name)
		}
	}
	var conts []*ast.BranchStmt
	if len(carried) > 0 {
		var labelled bool
		if conts, labelled = loopContinues(fs.Body); labelled {
			carried, conts = nil, nil
		}
	}
	r.copyLoopVars(fs.Body, copies, carried, conts)
}

// identObjs returns the objects of the named identifiers among xs.
func identObjs(xs ...ast.Expr) []*ast.Object {
	var objs []*ast.Object
	for _, x := range xs {
		if id, ok := x.(*ast.Ident); ok && id.Name != "_" && id.Obj != nil {
			objs = append(objs, id.Obj)
		}
	}
	return objs
}

// copyLoopVars gives each iteration its own copy of the loop variables
// copies and carried, and writes each carried copy back to the loop's
// variable when the body ends and at each of conts (the body's continue
// statements). The copies go in a block of their own around the body:
// yaegi scopes a loop's body with its header, so a copy declared in the
// body itself would also replace the variable the condition and the post
// statement use. The loop's variables are reached through pointers taken
// before the copies hide them.
func (r *rewriter) copyLoopVars(body *ast.BlockStmt, copies, carried []string, conts []*ast.BranchStmt) {
	if len(copies)+len(carried) == 0 {
		return
	}
	var open, back strings.Builder
	open.WriteString("{ ")
	for _, n := range carried {
		r.tmp++
		p := fmt.Sprintf("_gotrain_loop%d", r.tmp)
		open.WriteString(p + " := &" + n + "; ")
		back.WriteString("*" + p + " = " + n + "; ")
	}
	open.WriteString("{ ")
	for _, n := range append(copies, carried...) {
		open.WriteString(n + " := " + n + "; ")
	}
	at, end := r.off(body.Lbrace)+1, r.off(body.Rbrace)
	r.edits = append(r.edits,
		edit{at, at, open.String},
		edit{end, end, func() string { return "; " + back.String() + "}}" }})
	if back.Len() == 0 {
		return
	}
	for _, c := range conts {
		r.replace(c, "{ "+back.String()+"continue }")
	}
}

// loopContinues returns the unlabelled continue statements of a loop's
// body that continue that loop (not one nested in it), and whether the
// body has a labelled one.
func loopContinues(body *ast.BlockStmt) (conts []*ast.BranchStmt, labelled bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt:
			// An unlabelled continue inside continues the inner loop;
			// a labelled one may continue this one.
			_, l := loopContinues(loopBody(n))
			labelled = labelled || l
			return false
		case *ast.BranchStmt:
			if n.Tok == token.CONTINUE {
				if n.Label != nil {
					labelled = true
				} else {
					conts = append(conts, n)
				}
			}
		}
		return true
	})
	return conts, labelled
}

func loopBody(n ast.Node) *ast.BlockStmt {
	if f, ok := n.(*ast.ForStmt); ok {
		return f.Body
	}
	return n.(*ast.RangeStmt).Body
}

// redeclared reports whether body declares another variable named as obj
// outside its function literals, which would make a write-back name the
// wrong variable.
func redeclared(body *ast.BlockStmt, obj *ast.Object) bool {
	found := false
	inspectOutsideFuncLits(body, func(n ast.Node) {
		if id, ok := n.(*ast.Ident); ok && id.Name == obj.Name && id.Obj != nil && id.Obj != obj {
			found = true
		}
	})
	return found
}

// loopVarUses reports, for each of objs, whether body refers to it from a
// function literal or takes its address, and whether body assigns it.
func loopVarUses(body *ast.BlockStmt, objs []*ast.Object) (captured, assigned []bool) {
	captured, assigned = make([]bool, len(objs)), make([]bool, len(objs))
	index := func(x ast.Expr) int {
		if id, ok := x.(*ast.Ident); ok {
			for i, o := range objs {
				if id.Obj == o {
					return i
				}
			}
		}
		return -1
	}
	var walk func(n ast.Node, inLit bool)
	walk = func(n ast.Node, inLit bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				if !inLit {
					walk(n.Body, true)
					return false
				}
			case *ast.Ident:
				if i := index(n); i >= 0 && inLit {
					captured[i] = true
				}
			case *ast.UnaryExpr:
				if i := index(n.X); i >= 0 && n.Op == token.AND {
					captured[i] = true
				}
			case *ast.AssignStmt:
				for _, x := range n.Lhs {
					if i := index(x); i >= 0 {
						assigned[i] = true
					}
				}
			case *ast.IncDecStmt:
				if i := index(n.X); i >= 0 {
					assigned[i] = true
				}
			}
			return true
		})
	}
	walk(body, false)
	return captured, assigned
}
