package session

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// yaegi runs a statement chunk at package scope, and at package scope it
// gives every variable of one name one slot, whatever block declared it:
// after `x := 1; if c { x := 2 }`, x is 2, and a copy `i := i` in a loop
// body never ends the loop (TestIssueShadowedGlobal). Inside a function it
// scopes blocks as Go does. So a compound statement of a chunk that
// declares variables runs as the body of a function literal called on the
// spot, written on the statement's own lines:
//
//	func() { for _, v := range xs { ... } }()
//
// The variables of the chunk's own level stay globals and the literal
// reaches them as a closure does. A statement that leaves the literal's
// reach (return, goto, a labelled branch to a label outside it, defer,
// whose timing would change) stays as it is, and so does yaegi's scoping
// of it.

// localScopes wraps the compound statements of a statement chunk's top
// level that declare variables, and records the loops left at package
// scope in r.globalLoops.
func (r *rewriter) localScopes(body []ast.Stmt, p *prepared) {
	for _, st := range body {
		switch st.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt,
			*ast.SelectStmt, *ast.BlockStmt, *ast.LabeledStmt:
		default:
			continue
		}
		declares, escapes := scopeUses(st)
		if declares && !escapes {
			if p.scopeCalls == nil {
				p.scopeCalls = map[string]bool{}
			}
			at := r.fset.Position(st.Pos())
			p.scopeCalls[fmt.Sprintf("%d:%d", at.Line, at.Column)] = true
			start, end := r.off(st.Pos()), r.off(st.End())
			r.edits = append(r.edits,
				edit{start, start, func() string { return "func() { " }},
				edit{end, end, func() string { return " }()" }})
			continue
		}
		inspectOutsideFuncLits(st, func(n ast.Node) {
			switch n.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				if r.globalLoops == nil {
					r.globalLoops = map[ast.Node]bool{}
				}
				r.globalLoops[n] = true
			}
		})
	}
}

// scopeUses reports whether st declares a variable, constant or type, and
// whether it has a statement that would act differently inside a function
// literal. Function literals in st are not looked into: they are functions
// already.
func scopeUses(st ast.Stmt) (declares, escapes bool) {
	labels := map[string]bool{}
	inspectOutsideFuncLits(st, func(n ast.Node) {
		if l, ok := n.(*ast.LabeledStmt); ok {
			labels[l.Label.Name] = true
		}
	})
	inspectOutsideFuncLits(st, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			declares = declares || n.Tok == token.DEFINE
		case *ast.RangeStmt:
			declares = declares || n.Tok == token.DEFINE
		case *ast.DeclStmt:
			declares = true
		case *ast.ReturnStmt, *ast.DeferStmt:
			escapes = true
		case *ast.BranchStmt:
			if n.Tok == token.GOTO || n.Label != nil && !labels[n.Label.Name] {
				escapes = true
			}
		}
	})
	return declares, escapes
}

// inspectOutsideFuncLits calls f for every node of n that is not inside a
// function literal.
func inspectOutsideFuncLits(n ast.Node, f func(ast.Node)) {
	ast.Inspect(n, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		f(n)
		return true
	})
}

// hideScopeCalls removes the frames of the function literals localScopes
// added from a traceback (innermost first, as panicPositions returns it):
// the call's frame goes, and the literal's own frame is the cell's.
func hideScopeCalls(positions []string, calls map[string]bool) []string {
	out := positions[:0:0]
	for _, pos := range positions {
		at, fn, _ := strings.Cut(pos, " in ")
		if fn == "cell" && calls[at] && len(out) > 0 {
			if last := out[len(out)-1]; strings.HasSuffix(last, " in main.func") {
				out[len(out)-1] = strings.TrimSuffix(last, "main.func") + "cell"
				continue
			}
		}
		out = append(out, pos)
	}
	return out
}
