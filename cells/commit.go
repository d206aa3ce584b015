package cells

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// commit is the commit stage, the only one that changes the session's
// tables: it takes a loaded cell with what check and generate gave, keeps
// a new build under its source's hash with the objects describing its
// names and what its functions read and name, makes its declarations the newest of their names, and
// remembers the cell's source for a run of it unchanged. It
// gives the notes that say which earlier functions a redefinition leaves
// on the old definition (bind.go).
func (c *Compiler) commit(u *unit, gen *generated, cell *Cell, reused bool) []string {
	if !reused {
		for _, o := range u.objs {
			if o.cell == cell {
				o.typeKey = strings.ReplaceAll(o.typeKey, placeholderPath, cell.path)
			}
		}
		keepDeps(gen.deps, u.objs)
		keepRefs(gen.refs, cell, u.objs)
		cell.objs, cell.viewImp = u.objs, u.viewImp
		c.byHash[gen.hash] = cell
	}
	var notices []string
	var types [][2]*object // earlier types this cell declares anew, and what replaces each
	for _, o := range cell.objs {
		old := c.live[o.name]
		if old != nil && old != o && old.cell != cell {
			if old.kind == objType && old.owner() != o.owner() {
				types = append(types, [2]*object{old, o})
				c.typeRedeclared = true
			} else if n := c.redefinition(o, old); n != "" {
				notices = append(notices, n)
			}
		}
		if old != o {
			c.live[o.name] = o
			c.all[o.name+"@"+o.owner().path] = o
			c.gen++
		}
		// A type declared anew has the methods its cell gives it: the old
		// type's go with it.
		if old != nil && old != o && old.kind == objType && o.kind != objMethod {
			for _, m := range c.methodsOf(o.name) {
				if m.cell != cell {
					delete(c.live, m.name)
					c.gen++
				}
			}
		}
	}
	for name, path := range u.own {
		if c.imports[name] != path {
			c.imports[name] = path
			c.gen++
		}
	}
	c.stale = c.findStale(nil)
	for _, t := range types {
		if n := c.staleNote(t[0], t[1], u.again[t[0].name] != nil); n != "" {
			notices = append(notices, n)
		}
	}
	sort.Strings(notices)
	if len(c.recent) >= maxRecent {
		c.recent = map[string]recentCell{}
	}
	c.recent[u.code] = recentCell{c.gen, cell}
	return notices
}

// objects describes the top-level names a checked cell declares, for later
// cells, as u.cell's: their keys name the cell by placeholderPath until
// commit knows its path.
func (c *Compiler) objects(u *unit) ([]*object, map[string]string) {
	cell := u.cell
	viewImp := map[string]string{}
	for n, p := range u.imports {
		viewImp[n] = p
	}
	spell := func(t types.Type) string {
		return types.TypeString(t, func(p *types.Package) string {
			if p.Path() == "main" {
				return ""
			}
			for n, path := range viewImp {
				if path == p.Path() {
					return n
				}
			}
			n := "_gtp" + strconv.Itoa(len(viewImp))
			viewImp[n] = p.Path()
			return n
		})
	}
	var objs []*object
	add := func(name string, kind objKind, view string, pos token.Pos) {
		o := &object{name: name, kind: kind, cell: cell, access: name, view: view, code: u.code, line: c.fset.PositionFor(pos, true).Line}
		if !token.IsExported(name) {
			o.access = exportPrefix + name
			o.deref = kind == objVar
		}
		objs = append(objs, o)
	}
	segs := split(u.code)
	lines := lineStarts(u.code)
	for _, d := range u.fileA.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		base := recvBase(fd.Recv.List[0].Type)
		if base == "" || fd.Name.Name == "_" {
			continue
		}
		key := base + "." + fd.Name.Name
		src, ok := u.againSrc[key]
		if p := c.fset.PositionFor(fd.Pos(), true); !ok && p.Filename == cellFile {
			off := lines[p.Line-1] + p.Column - 1
			for _, sg := range segs {
				if sg.start == off {
					src = u.code[sg.start:sg.end]
				}
			}
		}
		add(key, objMethod, c.printNode(fd), fd.Pos())
		o := objs[len(objs)-1]
		o.access, o.full = "", src
		if fn := methodOf(u.pkg, base, fd.Name.Name); fn != nil && methodSlot(fd) {
			o.typeKey, o.slot = c.methodKey(fn, placeholderPath), cell
			if old := u.rebound[key]; old != nil {
				o.slot = old.slot
			}
		}
	}
	for _, d := range u.fileA.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && sessionFunc(d.Name.Name) {
				add(d.Name.Name, objFunc, c.printNode(d), d.Pos())
				o := objs[len(objs)-1]
				if fn, ok := u.pkg.Scope().Lookup(d.Name.Name).(*types.Func); ok && fn.Signature().TypeParams() == nil {
					o.typeKey, o.slot = c.sigKey(fn.Signature(), placeholderPath), cell
					if old := u.rebound[o.name]; old != nil {
						o.slot = old.slot
					}
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == "_" {
						continue
					}
					view := "type " + c.printNode(s)
					add(s.Name.Name, objType, view, d.Pos())
					objs[len(objs)-1].full = view
				case *ast.ValueSpec:
					if d.Tok != token.CONST {
						continue
					}
					for _, n := range s.Names {
						if n.Name == "_" {
							continue
						}
						k, ok := u.pkg.Scope().Lookup(n.Name).(*types.Const)
						if !ok {
							continue
						}
						add(n.Name, objConst, constView(k, spell), n.Pos())
					}
				}
			}
		}
	}
	for _, v := range u.vars {
		if unnameable(v.typ) != "" {
			viewImp["_gtrt"] = rtPath
			add(v.name, objVar, "var "+v.name+" = "+v.zero, v.pos)
		} else {
			add(v.name, objVar, "var "+v.name+" "+spell(v.typ), v.pos)
		}
		objs[len(objs)-1].typeKey = c.typeKey(v.typ, placeholderPath)
	}
	// A variable declared again with its type stays the earlier one.
	for _, name := range sortedKeys(u.rebound) {
		if o := u.rebound[name]; o.kind == objVar {
			objs = append(objs, o)
		}
	}
	// A view keeps only the imports its declarations name: every later
	// check resolves each one again, which made checking grow with the
	// session (issue 24). A name followed by a dot is how a declaration
	// printed by go/printer uses a package; one kept wrongly is harmless.
	for n := range viewImp {
		if n == "." || strings.HasPrefix(n, "_gt") {
			continue
		}
		used := false
		for _, o := range objs {
			if o.cell == cell && strings.Contains(o.view, n+".") {
				used = true
				break
			}
		}
		if !used {
			delete(viewImp, n)
		}
	}
	return objs, viewImp
}

// methodOf returns the method name of the package-level type base in pkg,
// or nil.
func methodOf(pkg *types.Package, base, name string) *types.Func {
	tn, ok := pkg.Scope().Lookup(base).(*types.TypeName)
	if !ok {
		return nil
	}
	named, ok := types.Unalias(tn.Type()).(*types.Named)
	if !ok {
		return nil
	}
	for i := 0; i < named.NumMethods(); i++ {
		if m := named.Method(i); m.Name() == name {
			return m
		}
	}
	return nil
}

// constView declares a constant by its value, so that the view does not
// depend on the expression (or the iota) that made it.
func constView(k *types.Const, spell func(types.Type) string) string {
	val := k.Val().ExactString()
	if num, den, ok := strings.Cut(val, "/"); ok {
		val = "(" + num + ".0/" + den + ")"
	}
	if b, ok := k.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		switch b.Kind() {
		case types.UntypedRune:
			return fmt.Sprintf("const %s = rune(%s)", k.Name(), val)
		case types.UntypedFloat:
			if !strings.ContainsAny(val, ".e") {
				val += ".0"
			}
		}
		return fmt.Sprintf("const %s = %s", k.Name(), val)
	}
	return fmt.Sprintf("const %s %s = %s", k.Name(), spell(k.Type()), val)
}
