package cells

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// A traced step function (package strategy) keeps what it read when it was
// traced: an optimizer, a model, a float folded into its graph. So that
// reassigning such a session variable makes the next Run trace again, each
// function a cell declares registers the session variables it reads with
// internal/stepdeps, through rt.Deps:
//   - a function or method, in the cell's init;
//   - a func literal assigned to a top-level variable, right after the
//     assignment, each time it runs;
//   - the cell's statements, for any func literal written among them (one
//     passed to Run directly), in init.
//
// A function's variables are those its body reads anywhere, nested
// literals included, and those of the session functions and methods it
// names, through every cell: each declared function's set is kept on its
// object for later cells. The slots of the functions and methods it calls
// are read too: a later cell that redefines one stores into its slot
// (bind.go). Assigning a variable (x = ..., x += ..., x++) is
// not reading it, so a step that counts its calls in a session variable
// does not retrace when a loop resets it. A variable holding a function is
// read like any other; package strategy follows the function it holds when
// it traces.

// depVar is a session variable a function reads, or the slot of a
// function or method it calls: a redefinition stores into the slot, so a
// step traced through the old body retraces.
type depVar struct {
	name string  // the variable's, function's or method's ("Type.method") name
	obj  *object // the earlier cell's variable, or the object holding the slot; nil for one of the cell being compiled
	fn   bool    // it holds a function
	slot string  // for a slot, its name between exportPrefix and slotSuffix
}

// cellDeps is what a cell's functions read, each set closed over the calls.
type cellDeps struct {
	funcs   map[string][]depVar // by name
	methods map[string][]depVar // by "Type.method"
	lits    []litDeps           // func literals assigned at the top level
	body    []depVar            // every func literal among the cell's statements
	// methodKeys are the methods' declarations' "Type.method", taken
	// before generate renames unexported methods.
	methodKeys map[*ast.FuncDecl]string
}

// litDeps is a top-level assignment of a func literal to a variable.
type litDeps struct {
	stmt *ast.AssignStmt
	name string
	view bool // the variable is an earlier cell's
	deps []depVar
}

// depNode is one function of the cell: what it reads, and which of the
// cell's functions it names (by depKey).
type depNode struct {
	reads []depVar
	calls []string
}

// funcDeps finds what the functions of a checked cell read. It runs before
// generate rewrites the cell, on the names as written.
func (g *generator) funcDeps() *cellDeps {
	u := g.u
	nodes := map[string]*depNode{}
	out := &cellDeps{funcs: map[string][]depVar{}, methods: map[string][]depVar{}, methodKeys: map[*ast.FuncDecl]string{}}
	declaredFuncs(u.fileB, func(key string, fd *ast.FuncDecl) {
		if fd.Recv != nil {
			out.methodKeys[fd] = key[2:]
		}
		nodes[key] = g.scanDeps(fd.Body)
	})
	body := cellBody(u.fileB)
	var lits []string
	if body != nil {
		for _, st := range body.List {
			as, ok := st.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				continue
			}
			for i, rhs := range as.Rhs {
				lit, ok := ast.Unparen(rhs).(*ast.FuncLit)
				id, isID := ast.Unparen(as.Lhs[i]).(*ast.Ident)
				if !ok || !isID || !g.isPkgLevel(u.info.Uses[id]) {
					continue
				}
				key := "l:" + strconv.Itoa(len(out.lits))
				nodes[key] = g.scanDeps(lit.Body)
				out.lits = append(out.lits, litDeps{stmt: as, name: id.Name, view: g.isView(u.info.Uses[id])})
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok {
				key := "b:" + strconv.Itoa(len(lits))
				nodes[key] = g.scanDeps(lit.Body)
				lits = append(lits, key)
				return false
			}
			return true
		})
	}
	for key := range nodes {
		deps := closeDeps(nodes, key)
		switch key[0] {
		case 'f':
			out.funcs[key[2:]] = deps
		case 'm':
			out.methods[key[2:]] = deps
		case 'l':
			i, _ := strconv.Atoi(key[2:])
			out.lits[i].deps = deps
		}
	}
	out.body = closeDeps(nodes, lits...)
	return out
}

// declaredFuncs calls visit for each function and method with a body that
// f declares, other than the cell's statements and init, with its key:
// "f:name" for a function, "m:Type.method" for a method.
func declaredFuncs(f *ast.File, visit func(key string, fd *ast.FuncDecl)) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		switch {
		case fd.Recv != nil:
			if base := recvBase(fd.Recv.List[0].Type); base != "" {
				visit("m:"+base+"."+fd.Name.Name, fd)
			}
		case sessionFunc(fd.Name.Name):
			visit("f:"+fd.Name.Name, fd)
		}
	}
}

// scanDeps returns what a function body reads: session variables, and the
// session functions and methods it names.
func (g *generator) scanDeps(body ast.Node) *depNode {
	info := g.u.info
	n := &depNode{}
	// Identifiers a statement assigns: writing a variable is not reading it.
	written := map[*ast.Ident]bool{}
	ast.Inspect(body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.AssignStmt:
			for _, e := range m.Lhs {
				if id, ok := ast.Unparen(e).(*ast.Ident); ok {
					written[id] = true
				}
			}
		case *ast.IncDecStmt:
			if id, ok := ast.Unparen(m.X).(*ast.Ident); ok {
				written[id] = true
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{m.Key, m.Value} {
				if id, ok := e.(*ast.Ident); ok && m.Tok == token.ASSIGN {
					written[id] = true
				}
			}
		}
		return true
	})
	ast.Inspect(body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.Ident:
			switch obj := info.Uses[m].(type) {
			case *types.Var:
				if written[m] || !g.isPkgLevel(obj) {
					return true
				}
				d := depVar{name: obj.Name()}
				_, d.fn = obj.Type().Underlying().(*types.Signature)
				if g.isView(obj) {
					if d.obj = g.c.live[obj.Name()]; d.obj == nil {
						return true
					}
				}
				n.reads = append(n.reads, d)
			case *types.Func:
				if !g.isPkgLevel(obj) {
					return true
				}
				if g.isView(obj) {
					if o := g.c.live[obj.Name()]; o != nil {
						n.reads = append(n.reads, o.deps...)
						if o.slot != nil {
							n.reads = append(n.reads, depVar{name: o.name, obj: o, slot: o.name})
						}
					}
					return true
				}
				n.calls = append(n.calls, "f:"+obj.Name())
				if obj.Signature().TypeParams() == nil {
					n.reads = append(n.reads, depVar{name: obj.Name(), slot: obj.Name()})
				}
			}
		case *ast.SelectorExpr:
			sel := info.Selections[m]
			if sel == nil || (sel.Kind() != types.MethodVal && sel.Kind() != types.MethodExpr) {
				return true
			}
			f := sel.Obj().(*types.Func)
			recv := f.Type().(*types.Signature).Recv()
			if f.Pkg() != g.u.pkg || recv == nil {
				return true
			}
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			named, ok := t.(*types.Named)
			if !ok {
				return true
			}
			base := named.Obj()
			key := base.Name() + "." + f.Name()
			if g.isView(base) {
				if o := g.c.live[key]; o != nil && o.kind == objMethod {
					n.reads = append(n.reads, o.deps...)
					if o.slot != nil {
						n.reads = append(n.reads, depVar{name: key, obj: o, slot: methodSlotName(key)})
					}
				}
				return true
			}
			n.calls = append(n.calls, "m:"+key)
			if named.TypeParams().Len() == 0 {
				n.reads = append(n.reads, depVar{name: key, slot: methodSlotName(key)})
			}
		}
		return true
	})
	return n
}

// closeDeps returns what the nodes at keys read, through the cell's
// functions they name, each variable once, sorted by name.
func closeDeps(nodes map[string]*depNode, keys ...string) []depVar {
	seen := map[string]bool{}
	type varKey struct {
		name, slot string
		obj        *object
	}
	have := map[varKey]bool{}
	var out []depVar
	var visit func(key string)
	visit = func(key string) {
		n := nodes[key]
		if seen[key] || n == nil {
			return
		}
		seen[key] = true
		for _, d := range n.reads {
			if k := (varKey{d.name, d.slot, d.obj}); !have[k] {
				have[k] = true
				out = append(out, d)
			}
		}
		for _, k := range n.calls {
			visit(k)
		}
	}
	for _, k := range keys {
		visit(k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// registerDeps adds the rt.Deps calls for what funcDeps found, after the
// cell's rewrites: init's for the declared functions, methods and the
// cell's statements, and one after each top-level assignment of a func
// literal.
func (g *generator) registerDeps() {
	d := g.deps
	var calls []ast.Stmt
	for _, decl := range g.u.fileB.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Type.TypeParams != nil {
			continue
		}
		key, rebound := g.rebound[fd]
		switch {
		case rebound:
			calls = g.appendDeps(calls, ast.NewIdent(fd.Name.Name), key, d.methods[key])
		case fd.Recv == nil && fd.Name.Name == cellFunc:
			calls = g.appendDeps(calls, ast.NewIdent(cellFunc), "", d.body)
		case fd.Recv == nil:
			calls = g.appendDeps(calls, ast.NewIdent(fd.Name.Name), fd.Name.Name, d.funcs[fd.Name.Name])
		default:
			g.registerMethod(&calls, fd)
		}
	}
	if len(calls) > 0 {
		g.u.fileB.Decls = append(g.u.fileB.Decls, &ast.FuncDecl{Name: ast.NewIdent("init"), Type: &ast.FuncType{Params: &ast.FieldList{}},
			Body: &ast.BlockStmt{List: calls}})
	}
	body := cellBody(g.u.fileB)
	for _, l := range d.lits {
		i := 0
		for i < len(body.List) && body.List[i] != l.stmt {
			i++
		}
		if i == len(body.List) {
			continue // the assignment was rewritten: nothing registers it
		}
		var fn ast.Expr = ast.NewIdent(l.name)
		if l.view {
			fn = g.ref(l.name)
		}
		if reg := g.appendDeps(nil, fn, l.name, l.deps); len(reg) > 0 {
			body.List = append(body.List[:i+1], append(reg, body.List[i+1:]...)...)
		}
	}
}

// registerMethod adds the rt.Deps call of a method, named by its method
// expression: (*T).m or T.m, as the runtime names the method's code.
func (g *generator) registerMethod(calls *[]ast.Stmt, fd *ast.FuncDecl) {
	key, ok := g.deps.methodKeys[fd]
	rt := fd.Recv.List[0].Type
	star, ptr := rt.(*ast.StarExpr)
	if ptr {
		rt = star.X
	}
	base, isID := rt.(*ast.Ident)
	if !ok || !isID {
		return // a generic type's method has no value without its type arguments
	}
	var recv ast.Expr = ast.NewIdent(base.Name)
	if ptr {
		recv = &ast.ParenExpr{X: &ast.StarExpr{X: recv}}
	}
	*calls = g.appendDeps(*calls, &ast.SelectorExpr{X: recv, Sel: ast.NewIdent(fd.Name.Name)}, key, g.deps.methods[key])
}

// appendDeps appends `rt.Deps(fn, name, rt.Var(&v, "v"), ...)` to list
// when fn reads anything. A variable an earlier cell declared that is no
// longer the newest of its name is left out: no later cell can name it.
func (g *generator) appendDeps(list []ast.Stmt, fn ast.Expr, name string, deps []depVar) []ast.Stmt {
	args := []ast.Expr{fn, &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(name)}}
	for _, d := range deps {
		var v ast.Expr = ast.NewIdent(d.name)
		switch {
		case d.slot != "":
			// A slot stays where it is, whichever definition is the newest.
			v = g.depSlot(d)
			if v == nil {
				continue
			}
			args = append(args, &ast.CallExpr{Fun: g.rt("Code"), Args: []ast.Expr{
				&ast.UnaryExpr{Op: token.AND, X: v}, &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(d.name)}}})
			continue
		case d.obj != nil:
			if g.c.live[d.name] != d.obj {
				continue
			}
			v = g.ref(d.name)
		}
		args = append(args, &ast.CallExpr{Fun: g.rt("Var"), Args: []ast.Expr{
			&ast.UnaryExpr{Op: token.AND, X: v}, &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(d.name)}}})
	}
	if len(args) == 2 {
		return list
	}
	return append(list, &ast.ExprStmt{X: &ast.CallExpr{Fun: g.rt("Deps"), Args: args}})
}

// depSlot is the slot a slot dependency names: an earlier cell's, or this
// cell's own, declared or taken; nil for one that has no slot.
func (g *generator) depSlot(d depVar) ast.Expr {
	if d.obj != nil {
		if d.obj.slot == nil {
			return nil
		}
		return g.slotIn(d.obj.slot, d.slot)
	}
	if !strings.Contains(d.name, ".") {
		return g.slotOf(d.name)
	}
	if old := g.u.rebound[d.name]; old != nil {
		return g.slotIn(old.slot, d.slot)
	}
	return ast.NewIdent(exportPrefix + d.slot + slotSuffix)
}

// keepDeps records on a cell's functions and types what they read, for
// later cells that call them.
func keepDeps(deps *cellDeps, objs []*object) {
	vars := map[string]*object{}
	code := map[string]*object{}
	for _, o := range objs {
		switch o.kind {
		case objVar:
			vars[o.name] = o
		case objFunc, objMethod:
			code[o.name] = o
		}
	}
	resolve := func(deps []depVar) []depVar {
		out := make([]depVar, 0, len(deps))
		for _, d := range deps {
			if d.obj == nil {
				if d.slot != "" {
					d.obj = code[d.name]
				} else {
					d.obj = vars[d.name]
				}
				if d.obj == nil {
					continue
				}
			}
			out = append(out, d)
		}
		return out
	}
	for _, o := range objs {
		switch o.kind {
		case objFunc:
			o.deps = resolve(deps.funcs[o.name])
		case objMethod:
			o.deps = resolve(deps.methods[o.name])
		}
	}
}
