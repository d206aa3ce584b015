package cells

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Symbol is what a name at a position of a cell denotes.
type Symbol struct {
	// Decl is the declaration, as go/types writes it: "func strings.Fields(s string) []string".
	Decl string
	// Pkg and Name find its documentation: the package's import path and
	// "Name" or "Type.Method"; Pkg is empty for names the cells declared.
	Pkg, Name string
	// Cell and Line are, for a top-level name a cell declared, that cell's
	// source and the declaration's line in it.
	Cell string
	Line int
}

// inspect runs resolve and check on a cell in their tolerant mode, for
// completion and inspection: errors are ignored, and so is a cell that
// does not parse completely. It gives the cell's file, what checking it
// found and its package, or nils.
func (c *Compiler) inspect(code string) (*ast.File, *types.Info, *types.Package) {
	c.freshFileSet()
	r, _ := c.resolve(code, true)
	u := c.checkTolerant(r)
	if u == nil {
		return nil, nil, nil
	}
	return u.fileA, u.info, u.pkg
}

// offsetOf returns the byte offset in the cell of a position, or -1.
func (c *Compiler) offsetOf(lines []int, pos token.Pos) int {
	if !pos.IsValid() {
		return -1
	}
	p := c.fset.PositionFor(pos, true)
	if p.Filename != cellFile || p.Line < 1 || p.Line > len(lines) {
		return -1
	}
	return lines[p.Line-1] + p.Column - 1
}

func isIdentByte(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordBefore returns the start of the identifier that ends at off.
func wordBefore(code string, off int) int {
	start := off
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(code[:start])
		if !isIdentByte(r) {
			break
		}
		start -= size
	}
	return start
}

// Complete returns the names that can stand at byte offset off of a cell,
// and the byte range they replace.
func (c *Compiler) Complete(code string, off int) (matches []string, start, end int) {
	start, end = wordBefore(code, off), off
	prefix := code[start:off]
	file, info, pkg := c.inspect(code)
	if file == nil || pkg == nil {
		return nil, start, end
	}
	lines := lineStarts(code)
	seen := map[string]bool{}
	add := func(name string) {
		if strings.HasPrefix(name, prefix) && !seen[name] && !strings.HasPrefix(name, "_gt") && name != cellFunc && name != "_" {
			seen[name] = true
			matches = append(matches, name)
		}
	}
	if start > 0 && code[start-1] == '.' {
		dot := start - 1
		var x ast.Expr
		ast.Inspect(file, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok && c.offsetOf(lines, s.X.End()) == dot {
				x = s.X
			}
			return x == nil
		})
		if x == nil {
			return nil, start, end
		}
		if id, ok := x.(*ast.Ident); ok {
			if pn, ok := info.Uses[id].(*types.PkgName); ok {
				for _, n := range pn.Imported().Scope().Names() {
					if token.IsExported(n) {
						add(n)
					}
				}
				sort.Strings(matches)
				return matches, start, end
			}
		}
		if tv, ok := info.Types[x]; ok && tv.Type != nil {
			for _, n := range memberNames(tv.Type) {
				add(n)
			}
		}
		sort.Strings(matches)
		return matches, start, end
	}
	// A plain name: what is in scope where the cursor is, innermost first;
	// among the statements, at least the cell's own function scope.
	scope := pkg.Scope()
	if body := cellBody(file); body != nil {
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body == body && info.Scopes[fd.Type] != nil {
				if first := len(body.List); first > 0 {
					if a := c.offsetOf(lines, body.List[0].Pos()); a >= 0 && a <= off {
						scope = info.Scopes[fd.Type]
					}
				}
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		s := info.Scopes[n]
		if s == nil {
			return true
		}
		if a, b := c.offsetOf(lines, n.Pos()), c.offsetOf(lines, n.End()); a >= 0 && a <= off && off <= b {
			scope = s
		}
		return true
	})
	for s := scope; s != nil; s = s.Parent() {
		for _, n := range s.Names() {
			add(n)
		}
	}
	for _, is := range file.Imports {
		if is.Name != nil {
			add(is.Name.Name)
		}
	}
	for _, n := range pkg.Scope().Names() {
		add(n)
	}
	for _, imp := range pkg.Imports() {
		add(imp.Name())
	}
	for n := range c.imports {
		add(n)
	}
	sort.Strings(matches)
	return matches, start, end
}

// memberNames returns the fields and methods of a value of type t.
func memberNames(t types.Type) []string {
	var names []string
	ms := types.NewMethodSet(t)
	if _, isPtr := t.Underlying().(*types.Pointer); !isPtr && !types.IsInterface(t) {
		ms = types.NewMethodSet(types.NewPointer(t))
	}
	for i := 0; i < ms.Len(); i++ {
		names = append(names, visibleName(ms.At(i).Obj()))
	}
	var fields func(t types.Type, depth int)
	fields = func(t types.Type, depth int) {
		if depth > 4 {
			return
		}
		st := structOf(t)
		if st == nil {
			return
		}
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			names = append(names, f.Name())
			if f.Embedded() {
				fields(f.Type(), depth+1)
			}
		}
	}
	fields(t, 0)
	return names
}

// visibleName is a member's name as the cell wrote it.
func visibleName(o types.Object) string {
	return strings.TrimPrefix(o.Name(), exportPrefix)
}

// Describe says what the name at byte offset off of a cell denotes.
func (c *Compiler) Describe(code string, off int) (Symbol, bool) {
	file, info, _ := c.inspect(code)
	if file == nil {
		return Symbol{}, false
	}
	lines := lineStarts(code)
	var found *ast.Ident
	ast.Inspect(file, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			a := c.offsetOf(lines, id.Pos())
			if a >= 0 && a <= off && off <= a+len(id.Name) {
				found = id
			}
		}
		return found == nil
	})
	if found == nil {
		return Symbol{}, false
	}
	obj := info.Uses[found]
	if obj == nil {
		obj = info.Defs[found]
	}
	if obj == nil {
		return Symbol{}, false
	}
	qual := func(p *types.Package) string {
		if p.Path() == "main" {
			return ""
		}
		return p.Name()
	}
	sym := Symbol{Decl: types.ObjectString(obj, qual)}
	if b, ok := obj.(*types.Builtin); ok {
		sym.Pkg, sym.Name = "builtin", b.Name()
		return sym, true
	}
	if obj.Pkg() != nil && obj.Pkg().Path() == "main" && obj.Parent() == obj.Pkg().Scope() {
		_, fromView := c.viewCell(obj.Pos())
		if o := c.live[obj.Name()]; o != nil && fromView {
			sym.Cell, sym.Line = o.code, o.line
		} else if c.fset.PositionFor(obj.Pos(), true).Filename == cellFile {
			sym.Cell, sym.Line = code, c.fset.PositionFor(obj.Pos(), true).Line
		}
	}
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		// The doc of a field is under its struct type's name.
		ast.Inspect(file, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok && se.Sel == found {
				if sel := info.Selections[se]; sel != nil {
					t := sel.Recv()
					if p, ok := t.(*types.Pointer); ok {
						t = p.Elem()
					}
					if nt, ok := t.(*types.Named); ok && nt.Obj().Pkg() != nil && nt.Obj().Pkg().Path() != "main" {
						sym.Pkg, sym.Name = nt.Obj().Pkg().Path(), nt.Obj().Name()+"."+v.Name()
					}
				}
			}
			return true
		})
		return sym, true
	}
	if pn, ok := obj.(*types.PkgName); ok {
		sym.Pkg = pn.Imported().Path()
		return sym, true
	}
	if obj.Pkg() != nil && obj.Pkg().Path() != "main" {
		sym.Pkg = obj.Pkg().Path()
		sym.Name = obj.Name()
		if f, ok := obj.(*types.Func); ok {
			if recv := f.Type().(*types.Signature).Recv(); recv != nil {
				t := recv.Type()
				if p, ok := t.(*types.Pointer); ok {
					t = p.Elem()
				}
				if n, ok := t.(*types.Named); ok {
					sym.Name = n.Obj().Name() + "." + obj.Name()
				}
			}
		}
	}
	return sym, true
}
