package cells

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strconv"
)

type topVar struct {
	name string
	typ  types.Type
	pos  token.Pos
	// zero, when the variable's value is the result of calling a
	// package-level function, declares it without naming its type (see
	// rt.Zero1): "_gtrt.Zero1(pkg.F)".
	zero string
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
		texpr, err := parser.ParseExpr(types.TypeString(v.typ, qualifier(u.imports, u.hidden)))
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

// qualifier names packages as a cell's file imports them, adding to
// hidden an import for a package the cell uses without importing it.
func qualifier(imports, hidden map[string]string) types.Qualifier {
	return func(p *types.Package) string {
		if p.Path() == "main" {
			return ""
		}
		for n, path := range imports {
			if path == p.Path() {
				return n
			}
		}
		for n, path := range hidden {
			if path == p.Path() {
				return n
			}
		}
		n := "_gtp" + strconv.Itoa(len(hidden))
		hidden[n] = p.Path()
		return n
	}
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
