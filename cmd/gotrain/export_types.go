package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
)

// exportImporter returns an importer of paths and everything they import,
// from the export data `go list -export` builds in dir: the packages a
// notebook imports, as the module that will build the program resolves
// them.
func exportImporter(fset *token.FileSet, dir string, paths []string) (types.Importer, error) {
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export %s in %s: %v: %s", strings.Join(paths, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	exports := make(map[string]string)
	for _, line := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("go list -export gave no export data for %s", path)
		}
		return os.Open(file)
	}), nil
}

// checkDraft type-checks the draft program src and returns its package and
// what it knows of its identifiers. Errors are expected (a function that
// reads a variable main declares finds it undefined) and ignored: only the
// types of main's variables are wanted, and the exported program is
// checked again by whoever builds it.
func checkDraft(dir string, src []byte) (*token.FileSet, *ast.File, *types.Package, *types.Info, []error, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	var paths []string
	for _, spec := range f.Imports {
		p := strings.Trim(spec.Path.Value, "\"`")
		if p != "C" {
			paths = append(paths, p)
		}
	}
	info := &types.Info{
		Types: make(map[ast.Expr]types.TypeAndValue),
		Defs:  make(map[*ast.Ident]types.Object),
		Uses:  make(map[*ast.Ident]types.Object),
	}
	var errs []error
	conf := types.Config{Error: func(err error) { errs = append(errs, err) }}
	if len(paths) > 0 {
		imp, err := exportImporter(fset, dir, paths)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		conf.Importer = imp
	}
	pkg, _ := conf.Check("main", fset, []*ast.File{f}, info)
	return fset, f, pkg, info, errs, nil
}

// typeSpelling writes t as the program spells it: packages by the names
// the program imports them as (names, a map from path to name, gains the
// ones it lacks), the main package's own types unqualified. It fails for a
// type a program outside its package cannot name: an unexported or
// internal one, or one of no valid type.
func typeSpelling(t types.Type, main *types.Package, names map[string]string) (string, error) {
	var bad error
	var check func(t types.Type, depth int)
	check = func(t types.Type, depth int) {
		if bad != nil || depth > 20 {
			return
		}
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() == types.Invalid {
				bad = fmt.Errorf("the type could not be worked out")
			} else if t.Info()&types.IsUntyped != 0 {
				bad = fmt.Errorf("the type is %s", t)
			}
		case *types.Named:
			obj := t.Obj()
			if p := obj.Pkg(); p != nil && p != main {
				if !obj.Exported() {
					bad = fmt.Errorf("its type %s is unexported in %s", obj.Name(), p.Path())
				} else if isInternal(p.Path()) {
					bad = fmt.Errorf("its type %s is in the internal package %s", obj.Name(), p.Path())
				}
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				check(t.TypeArgs().At(i), depth+1)
			}
		case *types.Alias:
			check(types.Unalias(t), depth+1)
		case *types.Pointer:
			check(t.Elem(), depth+1)
		case *types.Slice:
			check(t.Elem(), depth+1)
		case *types.Array:
			check(t.Elem(), depth+1)
		case *types.Chan:
			check(t.Elem(), depth+1)
		case *types.Map:
			check(t.Key(), depth+1)
			check(t.Elem(), depth+1)
		case *types.Signature:
			check(t.Params(), depth+1)
			check(t.Results(), depth+1)
		case *types.Tuple:
			for i := 0; i < t.Len(); i++ {
				check(t.At(i).Type(), depth+1)
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				check(t.Field(i).Type(), depth+1)
			}
		}
	}
	check(t, 0)
	if bad != nil {
		return "", bad
	}
	return types.TypeString(t, func(p *types.Package) string {
		if p == main {
			return ""
		}
		if name, ok := names[p.Path()]; ok {
			return name
		}
		names[p.Path()] = p.Name()
		return p.Name()
	}), nil
}

func isInternal(path string) bool {
	return path == "internal" || strings.HasPrefix(path, "internal/") || strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}

// zeroValue is the expression for t's zero value, which a variable
// declared again without a value is given.
func zeroValue(t types.Type, spelled string) string {
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return "nil"
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false"
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Info()&types.IsNumeric != 0:
			return "0"
		}
	}
	return "*new(" + spelled + ")"
}
