package cells

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Late binding: a name declared again with the same type is the same name
// to every cell, as a notebook user expects, not a new one that only later
// cells see.
//
//   - A top-level function has a slot (rt.Slot), a package variable of its
//     first declaring cell's package, that holds the newest definition of
//     the same signature and the marker of its cell. A later cell declaring
//     a function of the same name and signature stores its function in
//     that slot: in its init, and again each time it runs, so that running
//     an earlier declaration again makes it the one called again. Every
//     definition starts by handing its call over to the slot's function
//     when the slot holds another cell's, so every caller runs the newest:
//     earlier cells' functions, its own recursive calls, a function value
//     taken before (as in Julia; in Python such a value would keep the old
//     body). Its own cell calls a function directly, which with the check
//     at its entry costs about what a call in a Go program does (a call
//     through a func variable at every recursion was 1.6x go run's fib);
//     other cells call the slot's function, and a function used as a value
//     is the slot's function, so that a step function passed to a
//     strategy is the newest one, traced as such.
//   - A variable declared again (:= or var) with the same type is the
//     earlier variable: the checking view keeps declaring it, and the
//     cell's declaration becomes an assignment of a fresh value to it, as
//     a Python rebind, so that earlier functions and closures see the new
//     value.
//   - Anything else declared again makes a new name that later cells see:
//     a function with another signature, a variable with another type, a
//     type (Go's types are distinct), a constant (its value is compiled
//     into its users), a generic function (it has no value a slot could
//     hold). Earlier functions keep the old one, and a note names them;
//     where none does, nothing is printed.
//   - A method of a type without type parameters has a slot too, in its
//     type's cell: every method starts with the hand-over, so a later
//     cell that declares it again with its receiver and signature
//     compiles it as a function of the receiver and the parameters
//     (rebindDecls) and stores that in the slot; values made before and
//     after, method values and interfaces all run it, and the type is not
//     declared again. A new method, or one of another signature, declares
//     the type again with all its methods (Go keeps a type's methods with
//     the type, in its package): a new type, whose old one stale.go
//     follows.
//
// Two declarations have the same type when their types, spelled with
// package paths, are equal and each named type of the cells in them was
// declared by the same cell (typeKey).

// ref is a session name that a function of a cell names.
type ref struct {
	by    string // the function: its name, "Type.method", or the variable a func literal was assigned to
	name  string // the name it uses
	owner string // the path of the cell owning what the name meant then; "" for this cell, resolved by objects
	typ   bool   // the name is a type's
}

// owner returns the cell that holds an object's storage: a function's
// slot, a variable's package variable, a type's or constant's declaration.
func (o *object) owner() *Cell {
	if o.slot != nil {
		return o.slot
	}
	return o.cell
}

// newCell stands for the path of the cell being compiled in a type key: no
// stored key holds it, so a type of that cell equals no earlier one.
const newCell = "?"

// typeKey returns what identifies a type across cells: the type spelled
// with package paths, then, for each named type of the cells in it, its
// name and the path of its declaring cell (self for the cell being
// compiled).
func (c *Compiler) typeKey(t types.Type, self string) string {
	s := types.TypeString(t, func(p *types.Package) string { return p.Path() })
	var owners []string
	walkTypeNames(t, func(o *types.TypeName) {
		if o.Pkg() == nil || o.Pkg().Path() != "main" {
			return
		}
		path := self
		if f, ok := c.viewCell(o.Pos()); ok {
			path = f
		}
		owners = append(owners, o.Name()+"@"+path)
	})
	sort.Strings(owners)
	return strings.Join(append([]string{s}, slices.Compact(owners)...), " ")
}

// sigKey is typeKey of a function's signature without its parameters'
// names.
func (c *Compiler) sigKey(sig *types.Signature, self string) string {
	plain := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewVar(token.NoPos, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	return c.typeKey(types.NewSignatureType(nil, nil, nil, plain(sig.Params()), plain(sig.Results()), sig.Variadic()), self)
}

// walkTypeNames calls fn for each named type and alias within t.
func walkTypeNames(t types.Type, fn func(*types.TypeName)) {
	seen := map[types.Type]bool{}
	var walk func(t types.Type)
	tuple := func(tu *types.Tuple) {
		for i := 0; i < tu.Len(); i++ {
			walk(tu.At(i).Type())
		}
	}
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			fn(t.Obj())
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(t.TypeArgs().At(i))
			}
		case *types.Alias:
			fn(t.Obj())
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Chan:
			walk(t.Elem())
		case *types.Signature:
			tuple(t.Params())
			tuple(t.Results())
		case *types.Tuple:
			tuple(t)
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				walk(t.Field(i).Type())
			}
		case *types.Interface:
			for i := 0; i < t.NumExplicitMethods(); i++ {
				walk(t.ExplicitMethod(i).Type())
			}
			for i := 0; i < t.NumEmbeddeds(); i++ {
				walk(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := 0; i < t.Len(); i++ {
				walk(t.Term(i).Type())
			}
		}
	}
	walk(t)
}

// rebindVars finds the top-level variables the cell declares again with
// the type they had, takes them out of u.vars into u.rebound, and reports
// whether it found any.
func (c *Compiler) rebindVars(u *unit) bool {
	u.rebound = map[string]*object{}
	var fresh []topVar
	for _, v := range u.vars {
		old := c.live[v.name]
		if old != nil && old.kind == objVar && old.typeKey == c.typeKey(v.typ, newCell) {
			u.rebound[v.name] = old
			continue
		}
		fresh = append(fresh, v)
	}
	u.vars = fresh
	return len(u.rebound) > 0
}

// rebindFuncs finds the functions the cell declares again with the
// signature they had, whose slot they take.
func (c *Compiler) rebindFuncs(u *unit) {
	for _, d := range u.fileB.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !hasSlot(fd) {
			continue
		}
		old := c.live[fd.Name.Name]
		fn, ok := u.info.Defs[fd.Name].(*types.Func)
		if old != nil && old.kind == objFunc && old.slot != nil && ok && old.typeKey == c.sigKey(fn.Signature(), newCell) {
			u.rebound[fd.Name.Name] = old
		}
	}
}

// rebindMethods finds the methods the cell declares again, for an earlier
// cell's type it does not declare, with the receiver and signature they
// had, whose slot they take. It returns the types of the cell's other
// methods, new ones or ones with another signature: the cell must declare
// those types again (check).
func (c *Compiler) rebindMethods(u *unit) map[string]*object {
	again := map[string]*object{}
	for _, d := range u.fileB.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name == "_" {
			continue
		}
		base := recvBase(fd.Recv.List[0].Type)
		if base == "" || declaresType(u.fileB, base) {
			continue
		}
		key := base + "." + fd.Name.Name
		old := c.live[key]
		fn := methodOf(u.pkg, base, fd.Name.Name)
		if old != nil && old.slot != nil && fn != nil && methodSlot(fd) && old.typeKey == c.methodKey(fn, newCell) {
			u.rebound[key] = old
			continue
		}
		if t := c.live[base]; t != nil && t.kind == objType {
			again[base] = t
		}
	}
	return again
}

// methodKey is sigKey of a method, after its receiver's kind: a method of
// *T and one of T are not the same method to callers.
func (c *Compiler) methodKey(fn *types.Func, self string) string {
	sig := fn.Signature()
	recv := "T "
	if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
		recv = "*T "
	}
	return recv + c.sigKey(sig, self)
}

// methodSlot reports whether a method declaration gets a slot: one with a
// body, of a type without type parameters (a slot holds one func value, and
// a generic type's method has none without its type arguments).
func methodSlot(fd *ast.FuncDecl) bool {
	if fd.Recv == nil || fd.Body == nil || fd.Name.Name == "_" {
		return false
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	_, plain := ast.Unparen(t).(*ast.Ident)
	return plain
}

// methodsOf returns the live methods of the type named typ, by name.
func (c *Compiler) methodsOf(typ string) []*object {
	var out []*object
	for name, o := range c.live {
		if o.kind == objMethod && recvOf(name) == typ {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *object) int { return strings.Compare(a.name, b.name) })
	return out
}

// recvOf returns the type of a method's "Type.method" name.
func recvOf(method string) string {
	t, _, _ := strings.Cut(method, ".")
	return t
}

// methodSlotName is the name, before exportPrefix and slotSuffix, of the
// slot of method "Type.method": apart from every function's, as no
// function of a cell is named with "_gtm_".
func methodSlotName(key string) string {
	t, m, _ := strings.Cut(key, ".")
	return t + "_gtm_" + m
}

// sessionFunc reports whether a top-level function of this name is one of
// the session's: not the cell's statements, nor init, nor blank.
func sessionFunc(name string) bool { return name != cellFunc && name != "init" && name != "_" }

// hasSlot reports whether a declared function gets a slot: a session
// function that is not generic.
func hasSlot(fd *ast.FuncDecl) bool {
	return fd.Recv == nil && fd.Type.TypeParams == nil && fd.Body != nil && sessionFunc(fd.Name.Name)
}

// slotSuffix ends the name of a function's slot, after exportPrefix and
// the function's name.
const slotSuffix = "_gtslot"

// selfMarker is the variable whose address tells a cell's definitions in
// a slot from another cell's.
const selfMarker = "_gtself"

// slotOf is the slot of this cell's function name: its own, or the earlier
// cell's it took.
func (g *generator) slotOf(name string) ast.Expr {
	if old := g.u.rebound[name]; old != nil {
		return g.slotIn(old.slot, name)
	}
	return ast.NewIdent(exportPrefix + name + slotSuffix)
}

// slotIn is the slot of function name that the earlier cell slot holds.
func (g *generator) slotIn(slot *Cell, name string) ast.Expr {
	g.used[slot.alias] = slot.path
	return &ast.SelectorExpr{X: ast.NewIdent(slot.alias), Sel: ast.NewIdent(exportPrefix + name + slotSuffix)}
}

// slotFn is the newest definition of this cell's function name, as a
// value.
func (g *generator) slotFn(name string) ast.Expr {
	return &ast.SelectorExpr{X: g.slotOf(name), Sel: ast.NewIdent("Fn")}
}

// ownFunc reports whether obj is a function of this cell with a slot.
func (g *generator) ownFunc(obj types.Object) bool {
	fn, ok := obj.(*types.Func)
	return ok && g.isPkgLevel(fn) && !g.isView(fn) && fn.Signature().TypeParams() == nil && sessionFunc(fn.Name())
}

// slotted is a function or method of the cell whose definition goes
// through a slot.
type slotted struct {
	slot    ast.Expr      // the slot
	declare string        // the slot's name, when this cell declares it
	sig     *ast.FuncType // the slot's function type, when declared
	value   ast.Expr      // what the slot holds for this cell: the function, or the method expression
	args    []ast.Expr    // the hand-over's arguments: the receiver, then the parameters
	fd      *ast.FuncDecl
}

// slotOfDecl returns the slot of a function or method declaration: a
// function's (hasSlot), a method's of this cell's type, or the slot of an
// earlier cell's method that this cell's declaration, made a function by
// rebindDecls, takes.
func (g *generator) slotOfDecl(fd *ast.FuncDecl) (slotted, bool) {
	if key, ok := g.rebound[fd]; ok {
		nameParams(fd.Type)
		return slotted{slot: g.slotIn(g.u.rebound[key].slot, methodSlotName(key)), value: ast.NewIdent(fd.Name.Name),
			args: paramNames(fd.Type), fd: fd}, true
	}
	if fd.Recv == nil {
		if !hasSlot(fd) {
			return slotted{}, false
		}
		name := fd.Name.Name
		nameParams(fd.Type)
		s := slotted{slot: g.slotOf(name), value: ast.NewIdent(name), args: paramNames(fd.Type), fd: fd}
		if g.u.rebound[name] == nil {
			s.declare, s.sig = exportPrefix+name+slotSuffix, &ast.FuncType{Params: fd.Type.Params, Results: fd.Type.Results}
		}
		return s, true
	}
	key, ok := g.deps.methodKeys[fd]
	if !ok || !methodSlot(fd) {
		return slotted{}, false
	}
	recv := fd.Recv.List[0]
	if len(recv.Names) == 0 || recv.Names[0].Name == "_" {
		recv.Names = []*ast.Ident{ast.NewIdent("_gtr")}
	}
	nameParams(fd.Type)
	name := exportPrefix + methodSlotName(key) + slotSuffix
	var typ ast.Expr = recv.Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = &ast.ParenExpr{X: st}
	}
	params := append([]*ast.Field{{Names: []*ast.Ident{ast.NewIdent("_gtr")}, Type: recv.Type}}, fd.Type.Params.List...)
	return slotted{slot: ast.NewIdent(name), declare: name,
		sig:   &ast.FuncType{Params: &ast.FieldList{List: params}, Results: fd.Type.Results},
		value: &ast.SelectorExpr{X: typ, Sel: ast.NewIdent(fd.Name.Name)},
		args:  append([]ast.Expr{ast.NewIdent(recv.Names[0].Name)}, paramNames(fd.Type)...), fd: fd}, true
}

// addSlots declares the slots of the cell's functions and methods that
// have none yet, stores each definition in its slot, in init and when the
// cell runs, and starts each with the hand-over to the slot's function.
func (g *generator) addSlots() {
	var stores []ast.Stmt
	var decls []ast.Decl
	for _, d := range g.u.fileB.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		s, ok := g.slotOfDecl(fd)
		if !ok {
			continue
		}
		if s.declare != "" {
			decls = append(decls, &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{&ast.ValueSpec{
				Names: []*ast.Ident{ast.NewIdent(s.declare)},
				Type:  &ast.IndexExpr{X: g.rt("Slot"), Index: s.sig},
			}}})
		}
		stores = append(stores, &ast.AssignStmt{
			Lhs: []ast.Expr{&ast.SelectorExpr{X: s.slot, Sel: ast.NewIdent("Fn")}, &ast.SelectorExpr{X: s.slot, Sel: ast.NewIdent("ID")}},
			Tok: token.ASSIGN,
			Rhs: []ast.Expr{s.value, &ast.UnaryExpr{Op: token.AND, X: ast.NewIdent(selfMarker)}},
		})
		fd.Body.List = append([]ast.Stmt{g.handOver(s)}, fd.Body.List...)
	}
	if len(stores) == 0 {
		return
	}
	body := cellBody(g.u.fileB)
	body.List = append(append([]ast.Stmt{}, stores...), body.List...)
	decls = append(decls,
		&ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent(selfMarker)}, Type: ast.NewIdent("byte")}}},
		&ast.FuncDecl{Name: ast.NewIdent("init"), Type: &ast.FuncType{Params: &ast.FieldList{}}, Body: &ast.BlockStmt{List: stores}})
	g.u.fileB.Decls = append(g.u.fileB.Decls, decls...)
}

// handOver is `if slot.ID != &_gtself { return slot.Fn(args...) }`.
func (g *generator) handOver(s slotted) ast.Stmt {
	fd := s.fd
	call := &ast.CallExpr{Fun: &ast.SelectorExpr{X: s.slot, Sel: ast.NewIdent("Fn")}, Args: s.args}
	if n := len(fd.Type.Params.List); n > 0 {
		if _, ok := fd.Type.Params.List[n-1].Type.(*ast.Ellipsis); ok {
			call.Ellipsis = 1
		}
	}
	var then []ast.Stmt
	if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
		then = []ast.Stmt{&ast.ReturnStmt{Results: []ast.Expr{call}}}
	} else {
		then = []ast.Stmt{&ast.ExprStmt{X: call}, &ast.ReturnStmt{}}
	}
	return &ast.IfStmt{
		Cond: &ast.BinaryExpr{X: &ast.SelectorExpr{X: s.slot, Sel: ast.NewIdent("ID")}, Op: token.NEQ,
			Y: &ast.UnaryExpr{Op: token.AND, X: ast.NewIdent(selfMarker)}},
		Body: &ast.BlockStmt{List: then},
	}
}

// paramNames returns the names of a function's parameters, which
// nameParams has named.
func paramNames(ft *ast.FuncType) []ast.Expr {
	var args []ast.Expr
	for _, f := range ft.Params.List {
		for _, n := range f.Names {
			args = append(args, ast.NewIdent(n.Name))
		}
	}
	return args
}

// rebindDecls makes each method the cell declares again for an earlier
// cell's type (u.rebound) a function of the receiver and the parameters,
// which addSlots stores in the method's slot: Go declares a type's
// methods in its own package, and each cell is one.
func (g *generator) rebindDecls() {
	g.rebound = map[*ast.FuncDecl]string{}
	for _, d := range g.u.fileB.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		key, ok := g.deps.methodKeys[fd]
		if !ok || g.u.rebound[key] == nil {
			continue
		}
		recv := fd.Recv.List[0]
		if len(recv.Names) == 0 || recv.Names[0].Name == "_" {
			recv.Names = []*ast.Ident{ast.NewIdent("_gtr")}
		}
		fd.Type.Params.List = append([]*ast.Field{recv}, fd.Type.Params.List...)
		fd.Recv = nil
		fd.Name = ast.NewIdent("_gtm_" + methodSlotName(key))
		g.rebound[fd] = key
	}
}

// nameParams names a function's unnamed and blank parameters, which the
// hand-over passes on.
func nameParams(ft *ast.FuncType) {
	i := 0
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			f.Names = []*ast.Ident{ast.NewIdent("_gta" + strconv.Itoa(i))}
		}
		for j, n := range f.Names {
			if n.Name == "_" {
				f.Names[j] = ast.NewIdent("_gta" + strconv.Itoa(i))
			}
			i++
		}
	}
}

// scanRefs records, before the rewrites, the session names each function
// and type of the cell names, and what each meant: by "f:name" for a
// function, "m:Type.method" for a method, "t:name" for a type's
// declaration, "l:name" for a func literal assigned to a top-level
// variable.
func (g *generator) scanRefs() map[string][]ref {
	out := map[string][]ref{}
	scan := func(key, by string, n ast.Node) {
		seen := map[string]bool{}
		ast.Inspect(n, func(m ast.Node) bool {
			id, ok := m.(*ast.Ident)
			if !ok {
				return true
			}
			obj := g.u.info.Uses[id]
			if !g.isPkgLevel(obj) || seen[obj.Name()] {
				return true
			}
			seen[obj.Name()] = true
			_, isType := obj.(*types.TypeName)
			r := ref{by: by, name: obj.Name(), typ: isType}
			if g.isView(obj) {
				o := g.c.live[obj.Name()]
				if o == nil {
					return true
				}
				r.owner = o.owner().path
			} else if old := g.u.rebound[obj.Name()]; old != nil {
				r.owner = old.owner().path
			}
			out[key] = append(out[key], r)
			return true
		})
	}
	declaredFuncs(g.u.fileB, func(key string, fd *ast.FuncDecl) { scan(key, key[2:], fd) })
	for _, d := range g.u.fileB.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				scan("t:"+ts.Name.Name, ts.Name.Name, ts)
			}
		}
	}
	for _, l := range g.deps.lits {
		for i, lhs := range l.stmt.Lhs {
			if id, ok := ast.Unparen(lhs).(*ast.Ident); ok && id.Name == l.name && i < len(l.stmt.Rhs) {
				scan("l:"+l.name, l.name, l.stmt.Rhs[i])
			}
		}
	}
	return out
}

// keepRefs gives a cell's objects what their functions name, now that the
// cell's path is known.
func keepRefs(refs map[string][]ref, cell *Cell, objs []*object) {
	resolve := func(rs []ref) []ref {
		out := make([]ref, len(rs))
		for i, r := range rs {
			if r.owner == "" {
				r.owner = cell.path
			}
			out[i] = r
		}
		return out
	}
	for _, o := range objs {
		switch o.kind {
		case objFunc:
			o.refs = resolve(refs["f:"+o.name])
		case objType:
			o.refs = resolve(refs["t:"+o.name])
		case objMethod:
			o.refs = resolve(refs["m:"+o.name])
		case objVar:
			if rs, ok := refs["l:"+o.name]; ok {
				o.refs = resolve(rs)
			}
		}
	}
}

// keepers returns, sorted, the functions of cells other than cell that
// still use old once a declaration of cell replaces it.
func (c *Compiler) keepers(old *object, cell *Cell) []string {
	owner := old.owner().path
	var out []string
	for _, o := range c.live {
		if o == old || o.cell == cell {
			continue
		}
		for _, r := range o.refs {
			if r.name == old.name && r.owner == owner {
				out = append(out, r.by)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// redefinition returns the note for o replacing old, declared by another
// cell, where old is not a type (staleNote says what keeps an old type):
// "" when every user of old now uses o, or when nothing earlier uses old.
func (c *Compiler) redefinition(o, old *object) string {
	if o.owner() == old.owner() || o.kind == objMethod {
		return "" // late-bound: the same slot or variable; or a method of a type declared again, which the type's note covers
	}
	keep := c.keepers(old, o.cell)
	if len(keep) == 0 {
		return ""
	}
	list := strings.Join(keep, ", ")
	switch {
	case o.kind == objFunc && old.kind == objFunc && (o.slot == nil || old.slot == nil):
		return fmt.Sprintf("%s redefined: a generic function is bound when its callers compile; these keep calling the old one: %s", o.name, list)
	case o.kind == objFunc && old.kind == objFunc:
		return fmt.Sprintf("%s redefined with another signature: these keep calling the old one: %s", o.name, list)
	case o.kind == objVar && old.kind == objVar:
		return fmt.Sprintf("%s redefined with another type: these keep the old variable: %s", o.name, list)
	case o.kind == objConst && old.kind == objConst:
		return fmt.Sprintf("%s redefined: a constant is compiled into its users; these keep the old value: %s", o.name, list)
	}
	return fmt.Sprintf("%s redefined as another kind of name: these keep the old one: %s", o.name, list)
}
