package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
)

// exportOptions are gotrain export's flags.
type exportOptions struct {
	dropMagics bool
	// dir is where go list runs when the program's variables need their
	// types: a folder of the module that will build the program.
	dir string
	// set gives constants of the notebook other values (--set NAME=VALUE).
	set map[string]string
}

// exportDecl is a declaration that goes to package level.
type exportDecl struct {
	cell  int
	text  string
	names []string
}

// exportStmt is a top-level statement that runs in main.
type exportStmt struct {
	cell  int
	text  string
	names []string // the variables it defines
	// redefines says whether it defines a name an earlier cell defined.
	redefines bool
	start     int      // the offset of text in the draft
	node      ast.Stmt // in the draft
}

// exportNotebook returns the formatted main.go of the notebook b.
//
// A statement that defines a variable an earlier cell defined, with the
// same type, assigns it, as the kernel does: a variable declared again
// with its type is the same variable, given a fresh value. A function,
// type or constant declared again with the same text is the same one and
// is written once. Anything else defined twice is refused naming both
// cells. A variable a package-level declaration (a function, a method)
// uses becomes a package variable, declared with its type and assigned
// where the cell ran. Both need the variables' types, so such a notebook
// is type-checked, with the packages it imports as opts.dir's module has
// them.
func exportNotebook(path string, b []byte, opts exportOptions) ([]byte, error) {
	cells, err := notebookCells(path, b)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("gotrain export: %s: "+format, append([]any{path}, args...)...)
	}
	var imports []string
	seenImport := make(map[string]bool)
	var decls []exportDecl
	var stmts []exportStmt
	cellEnds := make(map[int]int)  // cell → the number of statements up to its end
	declIn := make(map[string]int) // name → the cell that declares it at package level
	declText := make(map[string]string)
	varIn := make(map[string]int) // name → the first cell that defines it as a variable
	set := make(map[string]bool)
	var cellOrder []int
	workers := new(exportWorkers)
	for _, c := range cells {
		src, err := stripMagics(path, c, opts.dropMagics, workers)
		if err != nil {
			return nil, err
		}
		cellOrder = append(cellOrder, c.n)
		for _, seg := range splitCell(src) {
			text := src[seg.start:seg.end]
			switch seg.kind {
			case "import":
				f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+text, parser.ImportsOnly)
				if err != nil {
					return nil, fail("cell %d: %v", c.n, err)
				}
				for _, spec := range f.Imports {
					line := spec.Path.Value
					if spec.Name != nil {
						line = spec.Name.Name + " " + line
					}
					if !seenImport[line] {
						seenImport[line] = true
						imports = append(imports, line)
					}
				}
			case "decl":
				text, names, err := setConstants(text, opts.set, set)
				if err != nil {
					return nil, fail("cell %d: %v", c.n, err)
				}
				same := true
				for _, name := range names {
					if prev, ok := varIn[name]; ok {
						return nil, fail("%q is a variable in cell %d and declared again in cell %d as a function, type or constant; rename one", name, prev, c.n)
					}
					prev, ok := declIn[name]
					if !ok {
						same = false
					} else if declText[name] != normalizeDecl(text) {
						return nil, fail("%q is declared in cell %d and again, differently, in cell %d; a program has one of each name: rename one, or delete the declaration that is no longer needed", name, prev, c.n)
					}
				}
				if same && len(names) > 0 {
					continue // the same declaration again: written once
				}
				for _, name := range names {
					declIn[name], declText[name] = c.n, normalizeDecl(text)
				}
				decls = append(decls, exportDecl{cell: c.n, text: text, names: names})
			default:
				names, err := stmtNames(text)
				if err != nil {
					return nil, fail("cell %d: %v", c.n, err)
				}
				st := exportStmt{cell: c.n, text: text}
				for _, name := range names {
					if name == "_" || name == "" {
						continue
					}
					if prev, ok := declIn[name]; ok {
						return nil, fail("%q is declared in cell %d as a function, type or constant and defined as a variable in cell %d; rename one", name, prev, c.n)
					}
					if prev, ok := varIn[name]; ok && prev != c.n {
						st.redefines = true
					} else if !ok {
						varIn[name] = c.n
					}
					st.names = append(st.names, name)
				}
				stmts = append(stmts, st)
			}
		}
		cellEnds[c.n] = len(stmts)
	}
	for name := range opts.set {
		if !set[name] {
			return nil, fail("--set %s: the notebook declares no constant %s", name, name)
		}
	}
	if workers.np != 0 {
		for _, imp := range exportWorkersImports {
			if !seenImport[imp] {
				seenImport[imp] = true
				imports = append(imports, imp)
			}
		}
		decls = append([]exportDecl{{cell: workers.cell, text: exportWorkersDecl}}, decls...)
		if last := cellOrder[len(cellOrder)-1]; workers.off == 0 {
			// The ranks leave the job together, as mpirun wants each to
			// before it exits.
			stmts = append(stmts, exportStmt{cell: last, text: exportLeave + "() // the end of %workers"})
			cellEnds[last] = len(stmts)
		}
	}
	p := &exportProgram{path: path, imports: imports, decls: decls, stmts: stmts, cells: cellOrder, cellEnds: cellEnds, workers: workers}
	var src []byte
	if p.needsTypes() {
		if src, err = p.typed(opts.dir); err != nil {
			return nil, err
		}
	} else {
		src = p.write(nil)
	}
	out, err := dropUnusedImports(src)
	if err != nil {
		return nil, fail("the program does not parse (a gotrain bug, or a cell that never ran): %v", err)
	}
	return format.Source(out)
}

// normalizeDecl is a declaration's text without its comments and spacing,
// to tell the same declaration repeated from another one.
func normalizeDecl(text string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p\n"+text, 0)
	if err != nil {
		return text
	}
	var b bytes.Buffer
	for _, d := range f.Decls {
		format.Node(&b, fset, d)
		b.WriteByte('\n')
	}
	return b.String()
}

// setConstants returns the declaration text with the constants that set
// names given other values, and the names the declaration defines; done
// gains the names it set.
func setConstants(text string, set map[string]string, done map[string]bool) (string, []string, error) {
	const prefix = "package p\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+text, 0)
	if err != nil {
		return "", nil, err
	}
	var names []string
	type edit struct {
		from, to int
		value    string
	}
	var edits []edit
	for _, d := range f.Decls {
		names = append(names, declNames(d)...)
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				v, ok := set[n.Name]
				if !ok {
					continue
				}
				if len(vs.Values) != len(vs.Names) {
					return "", nil, fmt.Errorf("--set %s: the constant's value is implicit (iota); give it one in the notebook", n.Name)
				}
				if _, err := parser.ParseExpr(v); err != nil {
					return "", nil, fmt.Errorf("--set %s=%s: not a Go expression: %v", n.Name, v, err)
				}
				e := vs.Values[i]
				edits = append(edits, edit{fset.Position(e.Pos()).Offset - len(prefix), fset.Position(e.End()).Offset - len(prefix), v})
				done[n.Name] = true
			}
		}
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		text = text[:e.from] + e.value + text[e.to:]
	}
	return text, names, nil
}

// exportProgram is a notebook cut into what goes where.
type exportProgram struct {
	path     string
	imports  []string
	decls    []exportDecl
	stmts    []exportStmt
	cells    []int
	cellEnds map[int]int
	workers  *exportWorkers // what %workers asked for
}

// declUses returns the names the package-level declarations use but do
// not declare themselves (the parser's unresolved identifiers): a
// function's parameter or local x does not make a variable x of main
// package-level.
func (p *exportProgram) declUses() map[string]bool {
	used := make(map[string]bool)
	for _, d := range p.decls {
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+d.text, 0)
		if err != nil {
			continue
		}
		for _, id := range f.Unresolved {
			used[id.Name] = true
		}
	}
	return used
}

// needsTypes says whether a variable is defined twice or used by a
// package-level declaration.
func (p *exportProgram) needsTypes() bool {
	used := p.declUses()
	for _, st := range p.stmts {
		if st.redefines {
			return true
		}
		for _, n := range st.names {
			if used[n] {
				return true
			}
		}
	}
	return false
}

// write returns the program: the statements in main, where rewrite (when
// not nil) gives each statement's text and the variables main must mark
// used; hoisted, the package variables.
func (p *exportProgram) write(rewrite func(i int) (string, []string)) []byte {
	return p.writeWith(rewrite, "", false)
}

func (p *exportProgram) writeWith(rewrite func(i int) (string, []string), hoisted string, draft bool) []byte {
	var file bytes.Buffer
	name := strings.TrimSuffix(filepath.Base(p.path), ".ipynb")
	fmt.Fprintf(&file, "// Command %s is %s exported by gotrain export: its cells'\n", name, filepath.Base(p.path))
	file.WriteString("// declarations at package level, their statements in order in main.\n")
	file.WriteString("// Build it inside a module that requires github.com/gotrain/gotrain.\n")
	if p.workers != nil {
		file.WriteString(p.workers.header())
	}
	file.WriteString("package main\n\nimport (\n")
	for _, imp := range p.imports {
		file.WriteString(imp + "\n")
	}
	file.WriteString(")\n\n")
	for _, d := range p.decls {
		fmt.Fprintf(&file, "// From cell %d.\n%s\n\n", d.cell, d.text)
	}
	file.WriteString(hoisted)
	file.WriteString("func main() {\n")
	i, open := 0, 0
	for _, c := range p.cells {
		var vars []string
		for ; i < p.cellEnds[c]; i++ {
			st := &p.stmts[i]
			if draft {
				if st.redefines {
					file.WriteString("{\n")
					open++
				}
				st.start = file.Len()
				file.WriteString(st.text + "\n")
				continue
			}
			text, v := st.text, st.names
			if rewrite != nil {
				text, v = rewrite(i)
			}
			file.WriteString(text + "\n")
			vars = append(vars, v...)
		}
		if len(vars) > 0 {
			// A session keeps a variable no later cell reads; a function
			// must use it.
			fmt.Fprintf(&file, "_ = []any{%s}\n", strings.Join(vars, ", "))
		}
		fmt.Fprintf(&file, "// End of cell %d.\n\n", c)
	}
	file.WriteString(strings.Repeat("}\n", open))
	file.WriteString("}\n")
	return file.Bytes()
}

// typed returns the program of a notebook whose variables need their
// types: it type-checks a draft, where each statement that defines a name
// again opens a block (so that both definitions have an object), then
// writes the program with those statements as assignments and the
// variables functions use at package level.
func (p *exportProgram) typed(dir string) ([]byte, error) {
	draft := p.writeWith(nil, "", true)
	fset, f, pkg, info, _, err := checkDraft(dir, draft)
	if err != nil {
		return nil, fmt.Errorf("gotrain export: %s: the notebook's variables need their types (a function uses one, or a cell defines one again), and type-checking failed: %v", p.path, err)
	}
	offset := func(n ast.Node) int { return fset.Position(n.Pos()).Offset }
	// Find each statement in the draft by its offset.
	var mainBody *ast.BlockStmt
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "main" && fd.Recv == nil {
			mainBody = fd.Body
		}
	}
	var walk func(list []ast.Stmt)
	k := 0
	walk = func(list []ast.Stmt) {
		for _, s := range list {
			for k < len(p.stmts) && offset(s) >= p.stmts[k].start+len(p.stmts[k].text) {
				k++
			}
			if k < len(p.stmts) && offset(s) >= p.stmts[k].start {
				p.stmts[k].node = s
				continue
			}
			if b, ok := s.(*ast.BlockStmt); ok {
				walk(b.List)
			}
		}
	}
	walk(mainBody.List)

	// Merge each variable defined again with the same type into the first.
	first := make(map[string]types.Object) // name → its first variable
	firstCell := make(map[string]int)
	canon := make(map[types.Object]types.Object)
	for _, st := range p.stmts {
		for _, id := range definedIdents(st.node) {
			obj := info.Defs[id]
			if obj == nil || id.Name == "_" {
				continue
			}
			f, ok := first[id.Name]
			if !ok {
				first[id.Name], firstCell[id.Name] = obj, st.cell
				canon[obj] = obj
				continue
			}
			if types.Identical(obj.Type(), f.Type()) {
				canon[obj] = f
				continue
			}
			return nil, fmt.Errorf("gotrain export: %s: %q is defined in cell %d (%s) and again in cell %d with another type (%s); a program's variable has one type: rename one", p.path, id.Name, firstCell[id.Name], typeName(f.Type(), pkg), st.cell, typeName(obj.Type(), pkg))
		}
	}
	used := p.declUses()
	hoist := func(obj types.Object) bool { return obj != nil && used[obj.Name()] }

	names := make(map[string]string) // import path → the name the program uses
	for _, spec := range f.Imports {
		path := strings.Trim(spec.Path.Value, "\"`")
		if spec.Name != nil {
			names[path] = spec.Name.Name
		} else if imp := importedPkg(pkg, path); imp != nil {
			names[path] = imp.Name()
		}
	}
	spell := func(obj types.Object, cell int) (string, error) {
		s, err := typeSpelling(obj.Type(), pkg, names)
		if err != nil {
			return "", fmt.Errorf("gotrain export: %s: cell %d: %s must be declared with its type (a function uses it, or a cell defines it again), but %v: give it a type the program can write", p.path, cell, obj.Name(), err)
		}
		return s, nil
	}
	var hoisted bytes.Buffer
	for _, st := range p.stmts {
		for _, id := range definedIdents(st.node) {
			obj := info.Defs[id]
			if obj == nil || id.Name == "_" || canon[obj] != obj || !hoist(obj) {
				continue
			}
			t, err := spell(obj, st.cell)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&hoisted, "// %s is defined in cell %d; the functions use it.\nvar %s %s\n\n", obj.Name(), st.cell, obj.Name(), t)
		}
	}
	var rewriteErr error
	rewrite := func(i int) (string, []string) {
		st := p.stmts[i]
		text, locals, err := rewriteStmt(st, draft, fset, info, canon, hoist, spell)
		if err != nil && rewriteErr == nil {
			rewriteErr = err
		}
		return text, locals
	}
	src := p.writeWith(rewrite, hoisted.String(), false)
	if rewriteErr != nil {
		return nil, rewriteErr
	}
	// Imports the variables' types need.
	var missing []string
	for path, name := range names {
		if importedPkg(pkg, path) == nil && !slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool { return strings.Trim(s.Path.Value, "\"`") == path }) {
			missing = append(missing, fmt.Sprintf("%s %q", name, path))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		src = bytes.Replace(src, []byte("import (\n"), []byte("import (\n"+strings.Join(missing, "\n")+"\n"), 1)
	}
	return src, nil
}

func typeName(t types.Type, pkg *types.Package) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	})
}

// importedPkg returns the package of path that pkg imports, or nil.
func importedPkg(pkg *types.Package, path string) *types.Package {
	for _, imp := range pkg.Imports() {
		if imp.Path() == path {
			return imp
		}
	}
	return nil
}

// definedIdents returns the identifiers a top-level statement defines:
// the left of :=, the names of var.
func definedIdents(s ast.Stmt) []*ast.Ident {
	var out []*ast.Ident
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, l := range s.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					out = append(out, id)
				}
			}
		}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, spec := range g.Specs {
				out = append(out, spec.(*ast.ValueSpec).Names...)
			}
		}
	}
	return out
}

// rewriteStmt returns the statement's text in the program, and the local
// variables it declares in main. A statement whose variables are all new
// locals is kept; one that defines a package variable, or a variable
// again, becomes declarations of its new locals and an assignment.
func rewriteStmt(st exportStmt, draft []byte, fset *token.FileSet, info *types.Info,
	canon map[types.Object]types.Object, hoist func(types.Object) bool, spell func(types.Object, int) (string, error)) (string, []string, error) {
	ids := definedIdents(st.node)
	keep := true
	var locals []string
	for _, id := range ids {
		obj := info.Defs[id]
		if obj == nil || id.Name == "_" {
			continue
		}
		if canon[obj] != obj || hoist(obj) {
			keep = false
		} else {
			locals = append(locals, id.Name)
		}
	}
	if keep {
		return st.text, st.names, nil
	}
	src := func(from, to token.Pos) string {
		return string(draft[fset.Position(from).Offset:fset.Position(to).Offset])
	}
	var b strings.Builder
	b.WriteString(string(draft[st.start:fset.Position(st.node.Pos()).Offset])) // the comments before it
	declare := func(id *ast.Ident) error {
		obj := info.Defs[id]
		t, err := spell(obj, st.cell)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "var %s %s\n", id.Name, t)
		return nil
	}
	isLocal := func(id *ast.Ident) bool { return slices.Contains(locals, id.Name) && info.Defs[id] != nil }
	switch s := st.node.(type) {
	case *ast.AssignStmt:
		var lhs []string
		for _, id := range ids {
			if isLocal(id) {
				if err := declare(id); err != nil {
					return "", nil, err
				}
			}
			lhs = append(lhs, id.Name)
		}
		fmt.Fprintf(&b, "%s = %s", strings.Join(lhs, ", "), src(s.Rhs[0].Pos(), s.Rhs[len(s.Rhs)-1].End()))
	case *ast.DeclStmt:
		for _, spec := range s.Decl.(*ast.GenDecl).Specs {
			vs := spec.(*ast.ValueSpec)
			var lhs []string
			for _, id := range vs.Names {
				if isLocal(id) {
					if err := declare(id); err != nil {
						return "", nil, err
					}
				}
				lhs = append(lhs, id.Name)
			}
			switch {
			case len(vs.Values) > 0:
				fmt.Fprintf(&b, "%s = %s\n", strings.Join(lhs, ", "), src(vs.Values[0].Pos(), vs.Values[len(vs.Values)-1].End()))
			default:
				for _, id := range vs.Names {
					obj := info.Defs[id]
					if obj == nil || id.Name == "_" || canon[obj] == obj {
						continue // a new variable starts at its zero value
					}
					t, err := spell(obj, st.cell)
					if err != nil {
						return "", nil, err
					}
					fmt.Fprintf(&b, "%s = %s // declared again: the same variable, zeroed\n", id.Name, zeroValue(obj.Type(), t))
				}
			}
		}
	}
	return b.String(), locals, nil
}
