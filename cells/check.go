package cells

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"sort"
	"strings"
)

// genFile names the parts of a checked file that gotrain wrote.
const genFile = "gotrain"

// cellFunc is the function a cell's statements run in.
const cellFunc = "_gtcell"

// unit is a checked cell on its way to a package: its source as the
// checking view sees it, what type-checking found, and the objects that
// describe its names.
type unit struct {
	code    string
	segs    []segment
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
	// rebound are the earlier objects this cell's declarations of the same
	// name and type (a variable) or signature (a function) bind to
	// (bind.go): the variable's storage, the function's slot.
	rebound map[string]*object
	// cell is the build the cell becomes, numbered once its source's hash
	// says it is a new one; objs describe its top-level names for later
	// cells, which see them through viewImp (objects).
	cell    *Cell
	objs    []*object
	viewImp map[string]string
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// check is the check stage: it takes a resolved cell and type-checks it
// against the view of the earlier cells. A method the cell declares for an
// earlier cell's type with another signature than the one whose slot it
// would take makes the cell declare that type again, and be checked again
// so; the methods it declares again for the other earlier types take their
// slots in every pass, the last one included. It gives a unit for
// generate, with the objects describing the cell's names, or the cell's
// errors.
func (c *Compiler) check(r *resolved) (*unit, error) {
	again := r.again
	for {
		u, err := c.checkWith(r, again)
		if err != nil {
			return nil, err
		}
		add := c.rebindMethods(u)
		if !hasNewKey(again, add) {
			u.cell = &Cell{}
			u.objs, u.viewImp = c.objects(u)
			return u, nil
		}
		again = maps.Clone(again)
		if again == nil {
			again = map[string]*object{}
		}
		maps.Copy(again, add)
	}
}

// hasNewKey reports whether add has a key that m has not.
func hasNewKey(m, add map[string]*object) bool {
	for k := range add {
		if _, ok := m[k]; !ok {
			return true
		}
	}
	return false
}

// checkWith type-checks a cell with the earlier cells' types again (and
// their methods) declared again in it, twice: phase A learns the types of
// its top-level variables, phase B checks the cell as it compiles, its
// variables at package level.
func (c *Compiler) checkWith(r *resolved, again map[string]*object) (*unit, error) {
	u := &unit{code: r.code, segs: r.segs, imports: r.imports, own: r.own, hidden: map[string]string{},
		again: again, againSrc: map[string]string{}}
	src := c.source(r, again, u.againSrc, false)
	var err error
	if len(again) == 0 {
		// The file resolve parsed is this source's but for where its
		// imports are written, which phase A does not depend on.
		u.fileA = r.file
	} else if u.fileA, err = parser.ParseFile(c.fset, genFile, src, parser.SkipObjectResolution); err != nil {
		return nil, syntaxErrors(err)
	}
	if u.fileB, err = parser.ParseFile(c.fset, genFile, src, parser.SkipObjectResolution); err != nil {
		return nil, syntaxErrors(err)
	}
	skip := topNames(u.fileA)

	// Phase A: declarations with empty bodies and the statements as a
	// function body, to learn the types of the top-level variables.
	stubBodies(u.fileA)
	u.show = wrapLast(u.fileA, false)
	u.views = c.viewFiles(skip)
	_, infoA, errs := c.typeCheck(u.fileA, u.views)
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
	pkg, info, errs := c.typeCheck(u.fileB, u.views)
	if len(errs) > 0 {
		return nil, errs
	}
	u.pkg, u.info = pkg, info
	if errs := c.staleUses(u); len(errs) > 0 {
		return nil, errs
	}
	c.rebindFuncs(u)
	return u, nil
}

// checkTolerant is check in the tolerant mode of completion and
// inspection: the cell's file as written, bodies included, checked once
// with its errors ignored, so that a cell being typed still says what its
// names denote. It gives a unit with fileA, info and pkg only; nil for a
// cell with no file to check.
func (c *Compiler) checkTolerant(r *resolved) *unit {
	file, _ := parser.ParseFile(c.fset, genFile, c.source(r, nil, nil, true), parser.SkipObjectResolution|parser.AllErrors)
	if file == nil {
		return nil
	}
	pkg, info, _ := c.typeCheck(file, c.viewFiles(topNames(file)))
	return &unit{code: r.code, segs: r.segs, imports: r.imports, own: r.own, fileA: file, pkg: pkg, info: info}
}

// source is the file check parses: the cell's imports with the session's,
// its declarations with those of the earlier types again (their earlier
// methods it does not declare go to againSrc, by "Type.method"), and its
// statements as the body of cellFunc. The tolerant mode leaves out the
// run-time package, which completion must not offer.
func (c *Compiler) source(r *resolved, again map[string]*object, againSrc map[string]string, tolerant bool) string {
	var b strings.Builder
	// What the cell did not write is in another file, so that no error or
	// position of it is taken for one of the cell.
	b.WriteString("package main\n//line " + genFile + ":1\n")
	writeImports(&b, r.imports)
	if !tolerant {
		fmt.Fprintf(&b, "import _gtrt %q\n", rtPath)
	}
	b.WriteString(r.decls)
	if len(again) > 0 {
		// Outside the cell's file likewise; the cell's own methods
		// replace earlier ones.
		b.WriteString("\n//line " + genFile + ":1\n")
		for _, name := range sortedKeys(again) {
			b.WriteString(again[name].full + "\n")
			for _, m := range c.methodsOf(name) {
				if !r.methods[m.name] {
					b.WriteString(m.full + "\n")
					againSrc[m.name] = m.full
				}
			}
		}
	}
	b.WriteString("//line " + genFile + ":1\nfunc " + cellFunc + "() {\n")
	b.WriteString(r.stmts)
	b.WriteString("\n}\n")
	return b.String()
}

// typeCheck type-checks a cell's file with the views of earlier cells.
func (c *Compiler) typeCheck(file *ast.File, views []*ast.File) (*types.Package, *types.Info, ErrorList) {
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
		// Cells share the session's imports, and a view carries its
		// cell's, so an unused import is normal; checking them all cost a
		// third of a check at cell 1,500.
		DisableUnusedImportCheck: true,
		Error: func(err error) {
			var te types.Error
			if !errors.As(err, &te) {
				errs = append(errs, Error{Msg: err.Error()})
				return
			}
			p := te.Fset.PositionFor(te.Pos, true)
			if p.Filename != cellFile {
				// Views are generated from declarations that type-checked:
				// what fails there is a bug.
				internal = append(internal, te.Error())
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
			if d.Recv != nil && len(d.Recv.List) == 1 {
				names[recvBase(d.Recv.List[0].Type)+"."+d.Name.Name] = true
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

func writeImports(b *strings.Builder, imp map[string]string) {
	names := make([]string, 0, len(imp))
	for n := range imp {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, "import %s %q\n", n, imp[n])
	}
}

// recvBase returns the name of a method receiver's base type.
func recvBase(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
