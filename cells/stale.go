package cells

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// A type declared anew (its fields changed, a method added, or a method's
// signature changed: Go keeps a type's methods with it) is a new type, and
// the compiled code of earlier cells keeps the old one: a struct holding
// it, a function taking it, a method calling one that does, a variable
// holding any of them. Checking a later cell against the session's view,
// where the name means the new type, would let such code meet values of
// the new type: a value made after the change would run old code, or be
// the wrong type in memory. So everything that keeps the old
// type, directly or through others, is stale: the cell that made the new
// type says which, and a later cell that names one is refused with the
// cell to run again. Running that cell again declares it anew, against
// the new type.

// findStale returns each object that keeps a type since declared anew,
// directly or through the names it uses, with that type as "name@cell".
// Objects no longer live count too: a function keeps calling the old one
// of another signature. A function or method declared again with its
// signature is judged by its newest body, which is the one that runs.
//
// Types named in anew are taken as declared again already: the stale
// objects once a cell that declares them commits.
func (c *Compiler) findStale(anew map[string]bool) map[*object]string {
	stale := map[*object]string{}
	if !c.typeRedeclared && len(anew) == 0 {
		return stale
	}
	uses := func(o *object, fn func(name, owner string, typ bool) bool) {
		for _, r := range o.refs {
			if fn(r.name, r.owner, r.typ) {
				return
			}
		}
		if o.kind == objVar {
			for _, f := range strings.Fields(o.typeKey) {
				if n, p, ok := strings.Cut(f, "@"); ok && strings.HasPrefix(p, pathPrefix) && fn(n, p, true) {
					return
				}
			}
		}
	}
	// Until nothing changes: names use each other in cycles.
	for changed := true; changed; {
		changed = false
		for _, o := range c.all {
			if stale[o] != "" {
				continue
			}
			uses(o, func(name, owner string, typ bool) bool {
				cur, then := c.live[name], c.all[name+"@"+owner]
				switch {
				case typ && (cur == nil || cur.kind != objType || cur.owner().path != owner || anew[name]):
					stale[o] = name + "@" + owner
				case then != nil && stale[then] != "":
					stale[o] = stale[then]
				default:
					return false
				}
				changed = true
				return true
			})
		}
	}
	return stale
}

// staleNames returns, sorted, the live names that keep the type key
// ("name@cell"): the declarations, then the variables.
func (c *Compiler) staleNames(key string) (decls, vars []string) {
	for o, k := range c.stale {
		if k != key || c.live[o.name] != o {
			continue
		}
		if o.kind == objVar {
			vars = append(vars, o.name)
		} else {
			decls = append(decls, o.name)
		}
	}
	slices.Sort(decls)
	slices.Sort(vars)
	return decls, vars
}

// staleNote is the note for type old replaced by o: what keeps the old
// type, "" when nothing does.
func (c *Compiler) staleNote(old, o *object, again bool) string {
	decls, vars := c.staleNames(old.name + "@" + old.owner().path)
	if len(decls)+len(vars) == 0 {
		return ""
	}
	var b strings.Builder
	switch {
	case again:
		fmt.Fprintf(&b, "%s declared again with the methods this cell adds or changes (Go keeps a type's methods with the type)", old.name)
	case o.kind != objType:
		fmt.Fprintf(&b, "%s redefined as another kind of name", old.name)
	default:
		fmt.Fprintf(&b, "%s redefined as a new type", old.name)
	}
	if len(decls) > 0 {
		fmt.Fprintf(&b, "; these keep the old %s until their cells run again: %s", old.name, strings.Join(decls, ", "))
	}
	if len(vars) > 0 {
		fmt.Fprintf(&b, "; these variables hold values of the old %s until the cells that make them run again: %s", old.name, strings.Join(vars, ", "))
	}
	b.WriteString("; a later cell that uses them is refused until then")
	return b.String()
}

// staleUses returns an error for each name of the cell that is stale: a
// cell must not mix the old type's code and values with the new type's.
func (c *Compiler) staleUses(u *unit) ErrorList {
	stale := c.stale
	// A type this cell declares anew makes stale, in this cell already,
	// what keeps the old one.
	anew := map[string]bool{}
	for _, d := range u.fileB.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, sp := range gd.Specs {
				if o := c.live[sp.(*ast.TypeSpec).Name.Name]; o != nil && o.kind == objType {
					anew[o.name] = true
				}
			}
		}
	}
	if len(anew) > 0 {
		stale = c.findStale(anew)
	}
	if len(stale) == 0 {
		return nil
	}
	// Each stale name once, where the cell names it: code gotrain wrote
	// (a top-level variable's type) has no line in the cell.
	at := map[string]token.Pos{}
	use := func(pos token.Pos, name string) {
		if o := c.live[name]; o == nil || stale[o] == "" {
			return
		}
		if p, ok := at[name]; !ok || (!c.inCell(p) && c.inCell(pos)) {
			at[name] = pos
		}
	}
	// The cell's own file only: the views name stale things freely.
	ast.Inspect(u.fileB, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if obj := u.info.Uses[n]; obj != nil && obj.Pkg() == u.pkg && obj.Parent() == u.pkg.Scope() && c.inView(obj) {
				use(n.Pos(), obj.Name())
			}
		case *ast.SelectorExpr:
			if s := u.info.Selections[n]; s != nil && s.Kind() != types.FieldVal {
				if base := namedRecv(s.Obj()); base != nil && c.inView(base) {
					use(n.Sel.Pos(), base.Name()+"."+s.Obj().Name())
				}
			}
		}
		return true
	})
	var errs ErrorList
	for name, pos := range at {
		o := c.live[name]
		typ, _, _ := strings.Cut(stale[o], "@")
		what := "declared"
		if o.kind == objVar {
			what = "made"
		}
		e := Error{Msg: fmt.Sprintf("%s keeps the old %s, which a later cell declared again: run again the cell where %s is %s (%s), so that it uses the new %[2]s",
			name, typ, name, what, declLine(o))}
		if c.inCell(pos) {
			e.Line, e.Col = c.cellPos(pos)
		}
		errs = append(errs, e)
	}
	// Errors with a line first; one gotrain's code made last.
	slices.SortFunc(errs, func(a, b Error) int {
		if (a.Line == 0) != (b.Line == 0) {
			return cmp.Compare(b.Line, a.Line)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Col != b.Col {
			return a.Col - b.Col
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	return errs
}

// inView reports whether obj was declared by an earlier cell's view.
func (c *Compiler) inView(obj types.Object) bool {
	if !obj.Pos().IsValid() {
		return false
	}
	_, ok := c.viewCell(obj.Pos())
	return ok
}

// inCell reports whether pos is in the cell being compiled.
func (c *Compiler) inCell(pos token.Pos) bool {
	return pos.IsValid() && c.fset.PositionFor(pos, true).Filename == cellFile
}

// namedRecv returns the type name of a method's receiver, or nil.
func namedRecv(obj types.Object) *types.TypeName {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Signature().Recv() == nil {
		return nil
	}
	t := fn.Signature().Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj()
	}
	return nil
}

// declLine quotes the line that declares o in its cell.
func declLine(o *object) string {
	lines := strings.Split(o.code, "\n")
	if o.line < 1 || o.line > len(lines) {
		return "its cell"
	}
	l := strings.TrimSpace(lines[o.line-1])
	if r := []rune(l); len(r) > 60 {
		l = string(r[:57]) + "..."
	}
	return fmt.Sprintf("its line %d: %s", o.line, l)
}
