package cells

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// genFile names the parts of a checked file that gotrain wrote.
const genFile = "gotrain"

// cellFunc is the function a cell's statements run in.
const cellFunc = "_gtcell"

// unit is a cell on its way to a package: its source as the checking view
// sees it, and what type-checking found.
type unit struct {
	code    string
	imports map[string]string // the session's imports with the cell's own
	own     map[string]string // the cell's own imports
	fileA   *ast.File         // declarations with empty bodies, statements as written
	fileB   *ast.File         // the cell as a package: top-level variables declared
	pkg     *types.Package
	info    *types.Info
	views   []*ast.File
	vars    []topVar // top-level variables, in order
	hidden  map[string]string
	show    bool // the last statement's value is the cell's result
	// again are earlier cells' types this cell declares again to add
	// methods to them; againSrc holds the source of their earlier methods,
	// by "Type.method".
	again    map[string]*object
	againSrc map[string]string
	deps     *cellDeps // what the cell's functions read (deps.go); set by generate
	// rebound are the earlier objects this cell's declarations of the same
	// name and type (a variable) or signature (a function) bind to
	// (bind.go): the variable's storage, the function's slot.
	rebound map[string]*object
	refs    map[string][]ref // what each function names (bind.go); set by generate
}

// ownMethods returns the "Type.method" names of the methods a cell
// declares.
func ownMethods(code string) map[string]bool {
	own := map[string]bool{}
	_, decls, _ := sortSegments(code, false)
	f, _ := parser.ParseFile(token.NewFileSet(), genFile, "package main\n"+decls, parser.SkipObjectResolution)
	if f == nil {
		return own
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
			own[recvBase(fd.Recv.List[0].Type)+"."+fd.Name.Name] = true
		}
	}
	return own
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type topVar struct {
	name string
	typ  types.Type
	pos  token.Pos
	// zero, when the variable's value is the result of calling a
	// package-level function, declares it without naming its type (see
	// rt.Zero1): "_gtrt.Zero1(pkg.F)".
	zero string
}

// prepare parses and type-checks a cell against the session.
func (c *Compiler) prepare(code string) (*unit, error) {
	return c.prepareWith(code, nil)
}

// prepareWith is prepare with earlier cells' types (and their methods)
// declared again in this cell, because the cell adds methods to them.
func (c *Compiler) prepareWith(code string, again map[string]*object) (*unit, error) {
	u := &unit{code: code, imports: map[string]string{}, own: map[string]string{}, hidden: map[string]string{},
		again: again, againSrc: map[string]string{}}
	for n, p := range c.imports {
		u.imports[n] = p
	}
	imps, decls, stmts := sortSegments(code, true)
	if len(again) > 0 {
		// Outside the cell's file, so that no position of it is taken for
		// one of the cell; the cell's own methods replace earlier ones.
		own := ownMethods(code)
		var b strings.Builder
		b.WriteString(decls)
		b.WriteString("\n//line " + genFile + ":1\n")
		for _, name := range sortedKeys(again) {
			o := again[name]
			b.WriteString(o.full + "\n")
			for _, m := range sortedKeys(o.methods) {
				if !own[name+"."+m] {
					b.WriteString(o.methods[m] + "\n")
					u.againSrc[name+"."+m] = o.methods[m]
				}
			}
		}
		decls = b.String()
	}
	// The cell's imports first, on their own, to learn their names.
	impFile, err := parser.ParseFile(c.fset, genFile, "package main;"+imps, parser.SkipObjectResolution)
	if err != nil {
		return nil, syntaxErrors(err)
	}
	for _, is := range impFile.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		if path == "C" {
			l, col := c.cellPos(is.Pos())
			return nil, ErrorList{{l, col, `import "C" is not supported in a cell: cells are compiled without cgo; put the C code in a package of its own module and import that package`}}
		}
		name := ""
		if is.Name != nil {
			name = is.Name.Name
		}
		if name == "" {
			n, err := c.tc.PackageName(path)
			if err != nil {
				l, col := c.cellPos(is.Pos())
				return nil, ErrorList{{l, col, err.Error()}}
			}
			name = n
		}
		if name == "_" || name == "." {
			if name == "." {
				l, col := c.cellPos(is.Pos())
				return nil, ErrorList{{l, col, "dot imports are not supported in cells; import " + strconv.Quote(path) + " with a name"}}
			}
			name = "_" + strconv.Itoa(len(u.own)) + "_"
		}
		u.own[name] = path
		u.imports[name] = path
	}
	if err := c.tc.Require(u.importPaths()); err != nil {
		return nil, err
	}

	src := func() string {
		var b strings.Builder
		// What the cell did not write is in another file, so that no
		// error or position of it is taken for one of the cell.
		b.WriteString("package main\n//line " + genFile + ":1\n")
		writeImports(&b, u.imports)
		fmt.Fprintf(&b, "import _gtrt %q\n", rtPath)
		b.WriteString(decls)
		b.WriteString("//line " + genFile + ":1\nfunc " + cellFunc + "() {\n")
		b.WriteString(stmts)
		b.WriteString("\n}\n")
		return b.String()
	}()
	if u.fileA, err = parser.ParseFile(c.fset, genFile, src, parser.SkipObjectResolution); err != nil {
		return nil, syntaxErrors(err)
	}
	if u.fileB, err = parser.ParseFile(c.fset, genFile, src, parser.SkipObjectResolution); err != nil {
		return nil, syntaxErrors(err)
	}
	// A method of an earlier cell's type: Go keeps a type's methods in its
	// package, and each cell is one, so this cell declares the type again,
	// with its earlier methods and the new ones.
	if again == nil {
		add := map[string]*object{}
		for _, d := range u.fileA.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
				if base := recvBase(fd.Recv.List[0].Type); base != "" && !declaresType(u.fileA, base) {
					if o := c.live[base]; o != nil && o.kind == objType && o.full != "" {
						add[base] = o
					}
				}
			}
		}
		if len(add) > 0 {
			return c.prepareWith(code, add)
		}
	}
	skip := topNames(u.fileA)

	// Phase A: declarations with empty bodies and the statements as a
	// function body, to learn the types of the top-level variables.
	stubBodies(u.fileA)
	u.show = wrapLast(u.fileA, false)
	u.views = c.viewFiles(skip)
	_, infoA, errs := c.check(u.fileA, u.views)
	if !u.show {
		// A final call of a builtin with a value (min, len) is no
		// statement; the checker says so, and it is the cell's result.
		errs, u.show = c.dropUnusedLast(u.fileA, errs)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	body := cellBody(u.fileA)
	for _, st := range body.List {
		ids := definedIdents(st)
		for _, id := range ids {
			if obj, ok := infoA.Defs[id].(*types.Var); ok && id.Name != "_" {
				v := topVar{name: id.Name, typ: obj.Type(), pos: id.Pos()}
				if len(ids) == 1 {
					v.zero = c.zeroOf(st, infoA)
				}
				u.vars = append(u.vars, v)
			}
		}
	}
	if !u.show {
		u.show = resultCall(body, infoA)
	}
	// A variable declared again with its type is the earlier variable: the
	// view declares it, and the cell's declaration assigns it.
	if c.rebindVars(u) {
		for name := range u.rebound {
			delete(skip, name)
		}
		u.views = c.viewFiles(skip)
	}

	// Phase B: the cell as it compiles, its top-level variables at package
	// level so that its functions and later cells see them.
	if err := c.declareVars(u); err != nil {
		return nil, err
	}
	wrapLast(u.fileB, u.show)
	pkg, info, errs := c.check(u.fileB, u.views)
	if len(errs) > 0 {
		return nil, errs
	}
	u.pkg, u.info = pkg, info
	c.rebindFuncs(u)
	return u, nil
}

func (u *unit) importPaths() []string {
	var paths []string
	for _, p := range u.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return append(paths, rtPath)
}

// check type-checks a cell's file with the views of earlier cells.
func (c *Compiler) check(file *ast.File, views []*ast.File) (*types.Package, *types.Info, ErrorList) {
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Implicits:  map[ast.Node]types.Object{},
		Scopes:     map[ast.Node]*types.Scope{},
	}
	var errs ErrorList
	var internal []string
	conf := types.Config{
		Importer: c.tc.Importer(c.fset),
		Sizes:    types.SizesFor("gc", goarch),
		Error: func(err error) {
			var te types.Error
			if !errors.As(err, &te) {
				errs = append(errs, Error{Msg: err.Error()})
				return
			}
			p := te.Fset.PositionFor(te.Pos, true)
			if p.Filename != cellFile {
				// Views are generated; what fails there is either an
				// unused import of an earlier cell (harmless) or a bug.
				if !unusedImport(te.Msg) {
					internal = append(internal, te.Error())
				}
				return
			}
			if unusedImport(te.Msg) {
				return
			}
			if strings.HasPrefix(te.Msg, "declared and not used: ") && isTopLevel(file, te.Pos) {
				return
			}
			errs = append(errs, Error{p.Line, p.Column, te.Msg})
		},
	}
	pkg, _ := conf.Check("main", c.fset, append(append([]*ast.File{}, views...), file), info)
	if len(errs) == 0 && len(internal) > 0 {
		errs = append(errs, Error{Msg: "cells: the session's view of earlier cells does not type-check (a bug in gotrain): " + strings.Join(internal, "; ")})
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Col < errs[j].Col
	})
	return pkg, info, dedupe(errs)
}

// unusedImport reports whether msg is the checker's complaint about an
// unused import: cells share the session's imports, so that is normal.
func unusedImport(msg string) bool {
	return strings.HasPrefix(msg, "\"") && strings.Contains(msg, "imported") && strings.HasSuffix(msg, "not used")
}

// isTopLevel reports whether the variable declared at pos is one of the
// cell's top-level variables, which need no use: later cells may use them.
func isTopLevel(file *ast.File, pos token.Pos) bool {
	body := cellBody(file)
	if body == nil {
		return false
	}
	for _, st := range body.List {
		for _, id := range definedIdents(st) {
			if id.Pos() == pos {
				return true
			}
		}
	}
	return false
}

// cellBody returns the body of the function holding a cell's statements.
func cellBody(f *ast.File) *ast.BlockStmt {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == cellFunc {
			return fd.Body
		}
	}
	return nil
}

// definedIdents returns the names a top-level statement declares: those of
// a := or of a var declaration.
func definedIdents(st ast.Stmt) []*ast.Ident {
	var ids []*ast.Ident
	switch st := st.(type) {
	case *ast.AssignStmt:
		if st.Tok == token.DEFINE {
			for _, e := range st.Lhs {
				if id, ok := e.(*ast.Ident); ok {
					ids = append(ids, id)
				}
			}
		}
	case *ast.DeclStmt:
		if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, s := range gd.Specs {
				ids = append(ids, s.(*ast.ValueSpec).Names...)
			}
		}
	case *ast.LabeledStmt:
		return definedIdents(st.Stmt)
	}
	return ids
}

// topNames returns every name a cell declares at its top level.
func topNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != cellFunc {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	if body := cellBody(f); body != nil {
		for _, st := range body.List {
			for _, id := range definedIdents(st) {
				names[id.Name] = true
			}
		}
	}
	return names
}

func declaresType(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, s := range gd.Specs {
				if s.(*ast.TypeSpec).Name.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// stubBodies empties the bodies of a file's functions other than the
// cell's own: the view of a declaration needs its signature only.
func stubBodies(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || (fd.Recv == nil && fd.Name.Name == cellFunc) {
			continue
		}
		fd.Body = &ast.BlockStmt{Lbrace: fd.Body.Lbrace, Rbrace: fd.Body.Rbrace, List: []ast.Stmt{
			&ast.ExprStmt{X: &ast.CallExpr{Fun: ast.NewIdent("panic"), Args: []ast.Expr{&ast.BasicLit{Kind: token.INT, Value: "0"}}}},
		}}
	}
}

// wrapLast turns a cell's final expression into its result: a bare
// expression always, a call only when call is set (phase A has learnt that
// it returns one value). It reports whether it wrapped.
func wrapLast(f *ast.File, call bool) bool {
	body := cellBody(f)
	if body == nil || len(body.List) == 0 {
		return false
	}
	es, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok {
		return false
	}
	switch x := ast.Unparen(es.X).(type) {
	case *ast.CallExpr:
		if !call {
			return false
		}
	case *ast.UnaryExpr:
		if x.Op == token.ARROW && !call {
			return false
		}
	}
	pos := es.X.Pos()
	es.X = &ast.CallExpr{Fun: &ast.SelectorExpr{X: &ast.Ident{NamePos: pos, Name: "_gtrt"}, Sel: &ast.Ident{NamePos: pos, Name: "Show"}}, Args: []ast.Expr{es.X}, Lparen: pos}
	return true
}

// dropUnusedLast removes the checker's "is not used" error for the cell's
// final expression statement, reporting whether it did.
func (c *Compiler) dropUnusedLast(f *ast.File, errs ErrorList) (ErrorList, bool) {
	body := cellBody(f)
	if body == nil || len(body.List) == 0 {
		return errs, false
	}
	es, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok {
		return errs, false
	}
	l, col := c.cellPos(es.Pos())
	var out ErrorList
	dropped := false
	for _, e := range errs {
		if strings.HasSuffix(e.Msg, "is not used") && strings.Contains(e.Msg, "(value of") && e.Line == l && e.Col == col {
			dropped = true
			continue
		}
		out = append(out, e)
	}
	return out, dropped
}

// resultCall reports whether a cell ends with a call or receive that gives
// one value.
func resultCall(body *ast.BlockStmt, info *types.Info) bool {
	if len(body.List) == 0 {
		return false
	}
	es, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok {
		return false
	}
	tv, ok := info.Types[es.X]
	if !ok || tv.IsVoid() || tv.Type == nil {
		return false
	}
	_, tuple := tv.Type.(*types.Tuple)
	return !tuple
}

// declareVars moves a cell's top-level variables to package level: each
// := and var at the top becomes an assignment, run in order, to a package
// variable of the type phase A found.
func (c *Compiler) declareVars(u *unit) error {
	body := cellBody(u.fileB)
	var list []ast.Stmt
	for _, st := range body.List {
		list = append(list, toAssign(st)...)
	}
	body.List = list
	var errs ErrorList
	for _, v := range u.vars {
		if bad := unnameable(v.typ); bad != "" {
			if v.zero == "" {
				errs = append(errs, Error{Msg: fmt.Sprintf("%s has type %s, which a later cell could not name (%s is not exported); assign it the result of a call of a package's function, or give it a type of your own, such as an interface it implements", v.name, v.typ, bad)})
				continue
			}
			zero, err := parser.ParseExpr(v.zero)
			if err != nil {
				return fmt.Errorf("cells: declaring %s: %v", v.name, err)
			}
			u.fileB.Decls = append(u.fileB.Decls, &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{
				&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent(v.name)}, Values: []ast.Expr{zero}},
			}})
			continue
		}
		texpr, err := parser.ParseExpr(types.TypeString(v.typ, u.qualifier))
		if err != nil {
			return fmt.Errorf("cells: spelling the type of %s: %v", v.name, err)
		}
		u.fileB.Decls = append(u.fileB.Decls, &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{
			&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent(v.name)}, Type: texpr},
		}})
	}
	if len(errs) > 0 {
		return errs
	}
	for name, path := range u.hidden {
		addImport(u.fileB, name, path)
	}
	return nil
}

// zeroOf returns the declaration without a type name of a top-level
// variable that st gives the result of one call: of a function of an
// imported package or of the cells, with a shape rt has a Zero function
// for. It returns "" otherwise.
func (c *Compiler) zeroOf(st ast.Stmt, info *types.Info) string {
	var rhs []ast.Expr
	switch s := st.(type) {
	case *ast.AssignStmt:
		rhs = s.Rhs
	case *ast.DeclStmt:
		if vs, ok := s.Decl.(*ast.GenDecl).Specs[0].(*ast.ValueSpec); ok && vs.Type == nil {
			rhs = vs.Values
		}
	}
	if len(rhs) != 1 {
		return ""
	}
	call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr)
	if !ok {
		return ""
	}
	// Only a function's name: evaluating it at load time calls nothing.
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		if !ok {
			return ""
		}
		if _, ok := info.Uses[x].(*types.PkgName); !ok {
			return ""
		}
	case *ast.Ident:
		if fn, ok := info.Uses[f].(*types.Func); !ok || fn.Parent() != fn.Pkg().Scope() {
			return ""
		}
	default:
		return ""
	}
	sig, ok := info.Types[call.Fun].Type.(*types.Signature)
	if !ok || sig.Results().Len() != 1 || sig.TypeParams().Len() > 0 {
		return ""
	}
	n := sig.Params().Len()
	name := "Zero" + strconv.Itoa(n)
	if sig.Variadic() {
		n--
		name = "ZeroV" + strconv.Itoa(n)
	}
	if n > 3 || (sig.Variadic() && n > 2) {
		return ""
	}
	return "_gtrt." + name + "(" + c.printNode(call.Fun) + ")"
}

// qualifier names packages as the cell's file imports them, adding a
// hidden import for a package the cell uses without importing it.
func (u *unit) qualifier(p *types.Package) string {
	if p.Path() == "main" {
		return ""
	}
	for n, path := range u.imports {
		if path == p.Path() {
			return n
		}
	}
	for n, path := range u.hidden {
		if path == p.Path() {
			return n
		}
	}
	n := "_gtp" + strconv.Itoa(len(u.hidden))
	u.hidden[n] = p.Path()
	return n
}

func addImport(f *ast.File, name, path string) {
	spec := &ast.ImportSpec{Name: ast.NewIdent(name), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(path)}}
	f.Decls = append([]ast.Decl{&ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{spec}}}, f.Decls...)
	f.Imports = append(f.Imports, spec)
}

// toAssign rewrites a top-level define or var declaration as assignments.
func toAssign(st ast.Stmt) []ast.Stmt {
	switch s := st.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			s.Tok = token.ASSIGN
		}
	case *ast.LabeledStmt:
		if inner := toAssign(s.Stmt); len(inner) == 1 {
			s.Stmt = inner[0]
			return []ast.Stmt{s}
		}
	case *ast.DeclStmt:
		gd, ok := s.Decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			return []ast.Stmt{st}
		}
		var out []ast.Stmt
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			var lhs []ast.Expr
			for _, n := range vs.Names {
				lhs = append(lhs, n)
			}
			values := vs.Values
			if len(values) == 0 {
				// var x T: zero again each time the cell runs.
				for range lhs {
					values = append(values, &ast.StarExpr{X: &ast.CallExpr{Fun: ast.NewIdent("new"), Args: []ast.Expr{vs.Type}}})
				}
			} else if vs.Type != nil && len(values) == len(lhs) {
				// Keep the declared type: var x float64 = 1.
				for i, v := range values {
					values[i] = &ast.CallExpr{Fun: &ast.ParenExpr{X: vs.Type}, Args: []ast.Expr{v}}
				}
			}
			out = append(out, &ast.AssignStmt{Lhs: lhs, TokPos: vs.Pos(), Tok: token.ASSIGN, Rhs: values})
		}
		return out
	}
	return []ast.Stmt{st}
}

// unnameable returns the first type within t that code outside its
// package cannot name, or "".
func unnameable(t types.Type) string {
	seen := map[types.Type]bool{}
	var walk func(t types.Type) string
	walk = func(t types.Type) string {
		if seen[t] {
			return ""
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			o := t.Obj()
			if o.Pkg() != nil && o.Pkg().Path() != "main" && !o.Exported() {
				return o.Pkg().Path() + "." + o.Name()
			}
			if o.Parent() != nil && o.Pkg() != nil && o.Parent() != o.Pkg().Scope() {
				return o.Name() + " (declared inside a function)"
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				if s := walk(t.TypeArgs().At(i)); s != "" {
					return s
				}
			}
		case *types.Pointer:
			return walk(t.Elem())
		case *types.Slice:
			return walk(t.Elem())
		case *types.Array:
			return walk(t.Elem())
		case *types.Map:
			if s := walk(t.Key()); s != "" {
				return s
			}
			return walk(t.Elem())
		case *types.Chan:
			return walk(t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := 0; i < tup.Len(); i++ {
					if s := walk(tup.At(i).Type()); s != "" {
						return s
					}
				}
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if s := walk(t.Field(i).Type()); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(t)
}
