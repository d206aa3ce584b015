package session

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// PackageDocs reads the Go source of one package in dir (the non-test files
// that build for this GOOS and GOARCH) and returns the doc comments of its
// exported identifiers as go/doc renders them to text, trimmed. Keys are
// "importPath.Name" for package-level funcs, types, vars and consts,
// "importPath.Type.Method" for methods and struct fields, and importPath
// itself for the package comment. Identifiers without a doc comment are
// left out.
//
// The session calls it for a package on the first inspection that needs
// it.
func PackageDocs(dir, importPath string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("session: docs of %s: %w", importPath, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		// Files for other platforms declare the same names again.
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("session: docs of %s: %w", importPath, err)
		}
		if len(files) > 0 && f.Name.Name != files[0].Name.Name {
			continue // a stray file of another package (a generator, say)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("session: docs of %s: want Go files in %s, got none", importPath, dir)
	}
	// PreserveAST keeps the per-spec comments of grouped consts and vars,
	// which are the only doc many enum-like constants have.
	mode := doc.PreserveAST
	// Package builtin documents the predeclared identifiers, all of them
	// lower case.
	builtin := importPath == "builtin"
	if builtin {
		mode |= doc.AllDecls
	}
	exported := func(name string) bool { return builtin || ast.IsExported(name) }
	p, err := doc.NewFromFiles(fset, files, importPath, mode)
	if err != nil {
		return nil, fmt.Errorf("session: docs of %s: %w", importPath, err)
	}
	out := map[string]string{}
	put := func(key, text string) {
		if t := strings.TrimSpace(string(p.Text(text))); t != "" {
			out[key] = t
		}
	}
	put(importPath, p.Doc)
	prefix := importPath + "."
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, spec := range v.Decl.Specs {
				vspec, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				text := v.Doc
				switch {
				case vspec.Doc != nil:
					text = vspec.Doc.Text()
				case vspec.Comment != nil:
					text = vspec.Comment.Text()
				}
				for _, n := range vspec.Names {
					if exported(n.Name) {
						put(prefix+n.Name, text)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func, recv string) {
		for _, f := range fs {
			if exported(f.Name) {
				put(prefix+recv+f.Name, f.Doc)
			}
		}
	}
	// Struct fields are keyed like methods: inspecting lossObj.FromLogits
	// looks up "Type.FromLogits" either way.
	fields := func(t *doc.Type) {
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != t.Name {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return
			}
			for _, f := range st.Fields.List {
				text := ""
				switch {
				case f.Doc != nil:
					text = f.Doc.Text()
				case f.Comment != nil:
					text = f.Comment.Text()
				}
				for _, n := range f.Names {
					if exported(n.Name) {
						put(prefix+t.Name+"."+n.Name, text)
					}
				}
			}
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs, "")
	for _, t := range p.Types {
		if !exported(t.Name) {
			continue
		}
		put(prefix+t.Name, t.Doc)
		fields(t)
		values(t.Consts)
		values(t.Vars)
		funcs(t.Funcs, "")
		funcs(t.Methods, t.Name+".")
	}
	return out, nil
}

// docIndex finds the doc comment of an identifier in its package's
// source, read once per package and only when asked for.
type docIndex struct {
	dir func(importPath string) string // the package's source directory, or ""

	mu   sync.Mutex
	pkgs map[string]map[string]string // import path to PackageDocs; nil if unreadable
}

// lookup returns the doc of name (an identifier or "Type.Method") in the
// package at importPath, or "" if there is none; an empty name asks for
// the package's own doc.
func (d *docIndex) lookup(importPath, name string) string {
	key := importPath
	if name != "" {
		key += "." + name
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	docs, ok := d.pkgs[importPath]
	if !ok {
		// Errors only mean that there is no doc to show: the signature
		// stands alone.
		if dir := d.dir(importPath); dir != "" {
			docs, _ = PackageDocs(dir, importPath)
		}
		d.pkgs[importPath] = docs
	}
	return docs[key]
}

// docAbove returns the text of the // comment lines directly above line
// (1-based) of cell, as go/doc renders a doc comment, or "".
func docAbove(cell string, line int) string {
	lines := strings.Split(cell, "\n")
	first := line - 1 // index of the declaration's line
	if line < 1 || first > len(lines) {
		return ""
	}
	for first > 0 && strings.HasPrefix(strings.TrimSpace(lines[first-1]), "//") {
		first--
	}
	var group ast.CommentGroup
	for _, l := range lines[first : line-1] {
		group.List = append(group.List, &ast.Comment{Text: strings.TrimSpace(l)})
	}
	if len(group.List) == 0 {
		return ""
	}
	var p comment.Parser
	var pr comment.Printer
	return strings.TrimSpace(string(pr.Text(p.Parse(group.Text()))))
}
