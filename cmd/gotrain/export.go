package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// runExport is gotrain export: it writes a notebook's code cells as a Go
// main package (DIR/main.go) that go build compiles and that prints what
// the cells print.
//
// The rules: imports are merged; func, method, type and const
// declarations go to package level; every other top-level statement (var
// declarations included) runs in main, in cell order, as in the session;
// a variable a function uses becomes a package variable, assigned where
// its cell ran. A name defined again follows the kernel's rule where a
// program can (see exportNotebook) and is refused naming both cells
// where it cannot. %workers makes a program for mpirun (export_workers.go).
// Another magic (%...) or shell (!...) line is refused naming its cell,
// unless --drop-magics. --set NAME=VALUE gives a constant
// another value, so that a long notebook runs short as a program.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the folder to write main.go into (default: the notebook's name, without .ipynb)")
	drop := fs.Bool("drop-magics", false, "drop % and ! lines instead of refusing them")
	set := make(setFlag)
	fs.Var(set, "set", "NAME=VALUE: give the notebook's constant NAME another value (repeatable), e.g. --set Iterations=10")
	if err := fs.Parse(reorderFlags(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("gotrain export: want one notebook: gotrain export NOTEBOOK.ipynb [-o DIR] [--drop-magics] [--set NAME=VALUE]...")
	}
	path := fs.Arg(0)
	dir := *out
	if dir == "" {
		dir = strings.TrimSuffix(filepath.Base(path), ".ipynb")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("gotrain export: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gotrain export: %v", err)
	}
	src, err := exportNotebook(path, b, exportOptions{dropMagics: *drop, dir: dir, set: set})
	if err != nil {
		return err
	}
	dst := filepath.Join(dir, "main.go")
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		return fmt.Errorf("gotrain export: %v", err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", dst)
	return nil
}

// reorderFlags moves flags after the notebook's name before it, so that
// both "export NB -o DIR" and "export -o DIR NB" work.
func reorderFlags(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "--o" || a == "-set" || a == "--set":
			flags = append(flags, a)
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
		default:
			rest = append(rest, a)
		}
	}
	return append(flags, rest...)
}

// setFlag is --set NAME=VALUE, repeatable.
type setFlag map[string]string

func (s setFlag) String() string { return fmt.Sprint(map[string]string(s)) }

func (s setFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || !isIdent(name) || value == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	s[name] = value
	return nil
}

// exportCell is one code cell: its number in the notebook (1-based, among
// all cells, as Jupyter shows them in order) and its source.
type exportCell struct {
	n   int
	src string
}

func notebookCells(path string, b []byte) ([]exportCell, error) {
	var nb struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, fmt.Errorf("gotrain export: %s: not a notebook: %v", path, err)
	}
	var cells []exportCell
	for i, c := range nb.Cells {
		if c.Type != "code" {
			continue
		}
		var lines []string
		if err := json.Unmarshal(c.Source, &lines); err != nil {
			var s string
			if err := json.Unmarshal(c.Source, &s); err != nil {
				return nil, fmt.Errorf("gotrain export: %s: cell %d: source is neither a string nor a list of strings", path, i+1)
			}
			lines = []string{s}
		}
		cells = append(cells, exportCell{n: i + 1, src: strings.Join(lines, "")})
	}
	return cells, nil
}

// stripMagics refuses (or with drop, blanks) the cell's % and ! lines. A
// %workers line becomes the statement that joins (or leaves) the ranks
// mpirun started, as w records; with drop it is dropped like the others.
func stripMagics(path string, c exportCell, drop bool, w *exportWorkers) (string, error) {
	lines := strings.Split(c.src, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "%") || strings.HasPrefix(t, "!") {
			switch {
			case drop:
			case t == "%workers" || strings.HasPrefix(t, "%workers "):
				stmt, err := w.line(c, i, t)
				if err != nil {
					return "", fmt.Errorf("gotrain export: %s: %v; or pass --drop-magics to run every cell in one process, where strategy.NewMultiWorkerMirrored is NewMirrored", path, err)
				}
				lines[i] = stmt + " // " + t
				continue
			default:
				return "", fmt.Errorf("gotrain export: %s: cell %d, line %d: %q is a magic, which has no meaning in a program; remove it, or pass --drop-magics", path, c.n, i+1, t)
			}
			lines[i] = "// dropped: " + t
		}
	}
	return strings.Join(lines, "\n"), nil
}

// exportSegment is one top-level statement or declaration of a cell.
type exportSegment struct {
	kind       string // "import", "decl" or "stmt"
	start, end int
}

// splitCell cuts a cell into its top-level statements and declarations at
// the semicolons (written or inserted) outside brackets, as the cell
// compiler does: Go has no grammar for a file that mixes them.
func splitCell(src string) []exportSegment {
	fset := token.NewFileSet()
	file := fset.AddFile("cell", -1, len(src))
	var s scanner.Scanner
	s.Init(file, []byte(src), nil, 0)
	type tok struct {
		pos int
		tok token.Token
	}
	var toks []tok
	for {
		pos, t, _ := s.Scan()
		if t == token.EOF {
			break
		}
		toks = append(toks, tok{file.Offset(pos), t})
	}
	var segs []exportSegment
	depth, start := 0, -1
	header := false // in the header of a for, if, switch or select, whose semicolons are its own
	for i, t := range toks {
		if start < 0 {
			if t.tok == token.SEMICOLON {
				continue
			}
			start = i
			header = t.tok == token.FOR || t.tok == token.IF || t.tok == token.SWITCH || t.tok == token.SELECT
		}
		switch t.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			if t.tok == token.LBRACE && depth == 0 {
				header = false
			}
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth = max(depth-1, 0)
		}
		if (t.tok == token.SEMICOLON && depth == 0 && !header) || i == len(toks)-1 {
			end := t.pos
			if t.tok != token.SEMICOLON {
				end = len(src)
			}
			// Keep the comments just before the segment with it.
			from := toks[start].pos
			if len(segs) > 0 {
				from = segs[len(segs)-1].end
				if src[from] == ';' {
					from++
				}
			}
			text := src[toks[start].pos:end]
			segs = append(segs, exportSegment{kind: classifySegment(toks[start].tok, text), start: from, end: end})
			start = -1
		}
	}
	return segs
}

func classifySegment(first token.Token, text string) string {
	switch first {
	case token.IMPORT:
		return "import"
	case token.TYPE, token.CONST:
		return "decl"
	case token.FUNC:
		// A declaration, or a function literal called as a statement.
		if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+text, 0); err == nil {
			return "decl"
		}
	}
	return "stmt"
}

// declNames returns what a declaration defines: functions, types,
// constants, and methods as Type.Method.
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return []string{d.Name.Name}
		}
		t := d.Recv.List[0].Type
		for {
			switch x := t.(type) {
			case *ast.StarExpr:
				t = x.X
				continue
			case *ast.IndexExpr:
				t = x.X
				continue
			case *ast.IndexListExpr:
				t = x.X
				continue
			}
			break
		}
		if id, ok := t.(*ast.Ident); ok {
			return []string{id.Name + "." + d.Name.Name}
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}

// stmtNames returns the variables a top-level statement defines (x := ...,
// var x ...).
func stmtNames(text string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+text+"\n}", 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						out = append(out, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			out = append(out, declNames(s.Decl)...)
		}
	}
	return out, nil
}

// dropUnusedImports removes the imports that no selector uses: a cell's
// session tolerates them, go build does not.
func dropUnusedImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	used := make(map[string]bool)
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var keep []ast.Spec
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		for _, s := range g.Specs {
			spec := s.(*ast.ImportSpec)
			p, _ := strconv.Unquote(spec.Path.Value)
			name := importName(p)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name == "_" || name == "." || used[name] || !isIdent(name) {
				keep = append(keep, spec)
			}
		}
		g.Specs = slices.Clip(keep)
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// importName is the name a package of path likely has: its last element,
// or the one before a major version's (math/rand/v2 is rand).
func importName(path string) string {
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	return name
}

// isIdent reports whether a path's last element is the package's likely
// name; one that is not (gopkg.in/yaml.v3) is kept, as its name is unknown.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
