package cells

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// objects describes the top-level names a checked cell declares, for later
// cells, as u.cell's: their keys name the cell by placeholderPath until
// commit knows its path.
func (c *Compiler) objects(u *unit) ([]*object, map[string]string) {
	cell := u.cell
	viewImp := map[string]string{}
	for n, p := range u.imports {
		viewImp[n] = p
	}
	// A package the view names that the cell did not import joins the
	// view's imports.
	spell := func(t types.Type) string { return types.TypeString(t, qualifier(nil, viewImp)) }
	var objs []*object
	add := func(name string, kind objKind, view string, pos token.Pos) {
		o := &object{name: name, kind: kind, cell: cell, access: name, view: view, code: u.code, line: c.fset.PositionFor(pos, true).Line}
		if !token.IsExported(name) {
			o.access = exportPrefix + name
			o.deref = kind == objVar
		}
		objs = append(objs, o)
	}
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
			for _, sg := range u.segs {
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
	// session. A name followed by a dot is how a declaration
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
