package cells

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
)

// resolved is a cell on its way to check: its parts sorted, its imports
// bound to names and built, and the earlier cells' types it adds methods
// to.
type resolved struct {
	code  string
	segs  []segment // split's
	decls string    // the declarations, each marked with its place in the cell
	stmts string    // the statements, marked likewise
	// imports are the session's imports with the cell's own, which own
	// holds apart: name to path.
	imports map[string]string
	own     map[string]string
	// methods are the "Type.method" names of the methods the cell
	// declares.
	methods map[string]bool
	// again are earlier cells' types the cell adds a method to that has no
	// slot to take: Go keeps a type's methods in its package, and each
	// cell is one, so the cell declares such a type again, with its
	// earlier methods (check).
	again map[string]*object
	// file is the parse, with the imports check's source has; check's
	// phase A takes it when no type is declared again.
	file *ast.File
}

// resolve is the resolve stage: it takes a cell's source, splits it and
// parses it once, binds its imports to names and has the Toolchain build
// them (fetching their modules), and finds the earlier types the cell
// declares again. It gives what check needs, or the cell's syntax and
// import errors. The tolerant mode, for completion and inspection, gives
// no errors: it takes what parses of a cell being typed, and leaves out
// the imports that do not resolve.
func (c *Compiler) resolve(code string, tolerant bool) (*resolved, error) {
	r := &resolved{code: code, segs: split(code), imports: map[string]string{}, own: map[string]string{},
		methods: map[string]bool{}, again: map[string]*object{}}
	for n, p := range c.imports {
		r.imports[n] = p
	}
	imps, decls, stmts := sortSegments(code, r.segs, true)
	r.decls, r.stmts = decls, stmts
	mode := parser.SkipObjectResolution
	if tolerant {
		mode |= parser.AllErrors
	}
	f, err := parser.ParseFile(c.fset, genFile, "package main\n"+imps+decls+"//line "+genFile+":1\nfunc "+cellFunc+"() {\n"+stmts+"\n}\n", mode)
	if tolerant {
		if f != nil {
			c.bindImports(r, f.Imports, true)
		}
		return r, nil
	}
	if err != nil {
		return nil, syntaxErrors(err)
	}
	if err := c.bindImports(r, f.Imports, false); err != nil {
		return nil, err
	}
	if err := c.tc.Require(r.importPaths()); err != nil {
		return nil, err
	}
	// A method of an earlier cell's type declared again with its receiver
	// and signature takes the method's slot (bind.go), which check
	// confirms; a new one, or one of a generic type, cannot join the type.
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		base := recvBase(fd.Recv.List[0].Type)
		r.methods[base+"."+fd.Name.Name] = true
		if base == "" || declaresType(f, base) {
			continue
		}
		o := c.live[base]
		if m := c.live[base+"."+fd.Name.Name]; o == nil || o.kind != objType || (m != nil && m.slot != nil && methodSlot(fd)) {
			continue
		}
		r.again[base] = o
	}
	// The imports as check's source writes them: by the names bound here,
	// with the run-time package's.
	kept := f.Decls[:0]
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); !ok || gd.Tok != token.IMPORT {
			kept = append(kept, d)
		}
	}
	f.Decls, f.Imports = kept, nil
	addImport(f, "_gtrt", rtPath)
	for _, n := range sortedKeys(r.imports) {
		addImport(f, n, r.imports[n])
	}
	r.file = f
	return r, nil
}

// bindImports binds each of the cell's imports to its name: the one it
// gives, or the package's; a blank import gets a name of its own, so that
// generate keeps it. The tolerant mode leaves out what does not resolve,
// and the imports without a name to use.
func (c *Compiler) bindImports(r *resolved, imports []*ast.ImportSpec, tolerant bool) error {
	for _, is := range imports {
		path, _ := strconv.Unquote(is.Path.Value)
		if tolerant && c.tc.Require([]string{path}) != nil {
			continue
		}
		name, err := c.importName(is, path)
		if tolerant && (err != nil || name == "_") {
			continue
		}
		if err != nil {
			return err
		}
		if name == "_" {
			name = "_" + strconv.Itoa(len(r.own)) + "_"
		}
		r.own[name] = path
		r.imports[name] = path
	}
	return nil
}

// importName returns the name an import binds: the one it gives, or the
// package's.
func (c *Compiler) importName(is *ast.ImportSpec, path string) (string, error) {
	at := func(msg string) error {
		l, col := c.cellPos(is.Pos())
		return ErrorList{{l, col, msg}}
	}
	if path == "C" {
		return "", at(`import "C" is not supported in a cell: cells are compiled without cgo; put the C code in a package of its own module and import that package`)
	}
	name := ""
	if is.Name != nil {
		name = is.Name.Name
	}
	if name == "" {
		n, err := c.tc.PackageName(path)
		if err != nil {
			return "", at(err.Error())
		}
		name = n
	}
	if name == "." {
		return "", at("dot imports are not supported in cells; import " + strconv.Quote(path) + " with a name")
	}
	return name, nil
}

// importPaths returns the paths of the packages the cell's file imports,
// the run-time package included.
func (r *resolved) importPaths() []string {
	paths := make([]string, 0, len(r.imports)+1)
	for _, p := range r.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return append(paths, rtPath)
}
