package cells

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
)

// promote keeps a top-level loop's accumulators in locals. A cell's
// top-level variables are package variables, so later cells see them, and
// a loop that updates one would go through memory at every iteration (2x
// slower than go run, where they are locals of main). In a top-level for
// or range statement, a variable of this cell with a basic type is read
// from a local copy, and every statement that assigns it stores the local
// back right after: the package variable is up to date after each
// statement, whatever panics or interrupts, and reads cost no memory
// round trip.
//
// A variable is promoted only if nothing else can write it while the loop
// runs: no function or function literal of the cell assigns it or takes its
// address (earlier cells cannot name it), the loop does not take its
// address, and each of the loop's assignments to it sits in a statement
// list, where the store can follow.
func (g *generator) promote() {
	body := cellBody(g.u.fileB)
	if body == nil {
		return
	}
	info := g.u.info
	// Variables this cell's functions and function literals write or take
	// the address of, and those the top-level statements take the address
	// of.
	tainted := map[types.Object]bool{}
	for _, d := range g.u.fileB.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && fd.Body != body {
			markWrites(fd.Body, info, tainted)
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			markWrites(n.Body, info, tainted)
			return false
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					tainted[info.Uses[id]] = true
				}
			}
		}
		return true
	})

	for i, st := range body.List {
		switch st.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
		default:
			continue
		}
		vars := g.promotable(st, tainted)
		if len(vars) == 0 {
			continue
		}
		locals := map[types.Object]*ast.Ident{}
		var decl []ast.Stmt
		for _, v := range vars {
			local := ast.NewIdent("_gtp_" + v.Name())
			locals[v] = local
			decl = append(decl, &ast.AssignStmt{Lhs: []ast.Expr{local}, Tok: token.DEFINE, Rhs: []ast.Expr{ast.NewIdent(v.Name())}},
				&ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("_")}, Tok: token.ASSIGN, Rhs: []ast.Expr{ast.NewIdent(local.Name)}})
		}
		loop := astutil.Apply(st, func(c *astutil.Cursor) bool {
			switch n := c.Node().(type) {
			case *ast.Ident:
				if l := locals[info.Uses[n]]; l != nil {
					c.Replace(&ast.Ident{NamePos: n.NamePos, Name: l.Name})
				}
			case *ast.AssignStmt, *ast.IncDecStmt:
				var back []ast.Stmt
				for _, v := range assigned(n.(ast.Stmt), info) {
					if l := locals[v]; l != nil {
						back = append(back, &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent(v.Name())}, Tok: token.ASSIGN, Rhs: []ast.Expr{ast.NewIdent(l.Name)}})
					}
				}
				for j := len(back) - 1; j >= 0; j-- {
					c.InsertAfter(back[j])
				}
			}
			return true
		}, nil).(ast.Stmt)
		body.List[i] = &ast.BlockStmt{Lbrace: st.Pos(), List: append(decl, loop)}
	}
}

// markWrites records the variables body assigns or takes the address of.
func markWrites(body ast.Node, info *types.Info, into map[types.Object]bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt, *ast.IncDecStmt:
			for _, v := range assigned(n.(ast.Stmt), info) {
				into[v] = true
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					into[info.Uses[id]] = true
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && n.Tok == token.ASSIGN {
					into[info.Uses[id]] = true
				}
			}
		}
		return true
	})
}

// assigned returns the variables an assignment or ++/-- writes by name.
func assigned(st ast.Stmt, info *types.Info) []types.Object {
	var lhs []ast.Expr
	switch s := st.(type) {
	case *ast.AssignStmt:
		lhs = s.Lhs
	case *ast.IncDecStmt:
		lhs = []ast.Expr{s.X}
	}
	var out []types.Object
	for _, e := range lhs {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if o := info.Uses[id]; o != nil {
				out = append(out, o)
			}
		}
	}
	return out
}

// promotable returns the variables a top-level loop may keep in locals.
func (g *generator) promotable(st ast.Stmt, tainted map[types.Object]bool) []*types.Var {
	info := g.u.info
	scope := g.u.pkg.Scope()
	used := map[*types.Var]bool{}
	var order []*types.Var
	bad := map[types.Object]bool{}
	// Writes outside a statement list (a for loop's init or post, an if's
	// init, a range's key) leave no place for the store after them.
	var check func(n ast.Node, inList bool)
	check = func(n ast.Node, inList bool) {
		ast.Inspect(n, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.Ident:
				v, ok := info.Uses[m].(*types.Var)
				if !ok || v.Parent() != scope || g.isView(v) {
					return true
				}
				if b, ok := v.Type().(*types.Basic); !ok || b.Info()&types.IsUntyped != 0 {
					return true
				}
				if !used[v] {
					used[v] = true
					order = append(order, v)
				}
			case *ast.BlockStmt:
				for _, s := range m.List {
					check(s, true)
				}
				return false
			case *ast.CaseClause:
				for _, e := range m.List {
					check(e, false)
				}
				for _, s := range m.Body {
					check(s, true)
				}
				return false
			case *ast.CommClause:
				if m.Comm != nil {
					check(m.Comm, false)
				}
				for _, s := range m.Body {
					check(s, true)
				}
				return false
			case *ast.AssignStmt, *ast.IncDecStmt:
				if !inList || m != n {
					for _, v := range assigned(m.(ast.Stmt), info) {
						bad[v] = true
					}
				}
			case *ast.RangeStmt:
				if m.Tok == token.ASSIGN {
					for _, e := range []ast.Expr{m.Key, m.Value} {
						if id, ok := e.(*ast.Ident); ok {
							bad[info.Uses[id]] = true
						}
					}
				}
			case *ast.LabeledStmt:
				check(m.Stmt, inList)
				return false
			}
			return true
		})
	}
	check(st, false)
	var out []*types.Var
	for _, v := range order {
		if !tainted[v] && !bad[v] {
			out = append(out, v)
		}
	}
	return out
}
