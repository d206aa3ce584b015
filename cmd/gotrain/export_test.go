package main

import (
	"go/token"
	"go/types"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// exportDir is a fresh folder inside the module (so that go build finds
// gotrain's packages), named with an underscore so ./... skips it.
func exportDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("../..", "_export_test_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func notebookJSON(cells ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"cells":[`)
	for i, c := range cells {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"cell_type":"code","source":` + strconv.Quote(c) + `}`)
	}
	b.WriteString(`],"nbformat":4}`)
	return []byte(b.String())
}

// TestIssue33ExportRefuses names the cells of a redefinition and of a
// magic, and drops the magic when asked.
func TestIssue33ExportRefuses(t *testing.T) {
	cases := []struct {
		name  string
		cells []string
		drop  bool
		want  string // "" for no error
	}{
		{"variable defined again with another type", []string{"x := 1", "x := \"two\""}, false, `"x" is defined in cell 1 (int) and again in cell 2 with another type (string)`},
		{"variable defined again as a function", []string{"x := 1", "func x() {}"}, false, `"x" is a variable in cell 1 and declared again in cell 2`},
		{"function declared again differently", []string{"func f() {}", "import \"fmt\"\nfunc f() { fmt.Println() }"}, false, `"f" is declared in cell 1 and again, differently, in cell 2`},
		{"constant declared again differently", []string{"const N = 1", "const N = 2"}, false, `"N" is declared in cell 1 and again, differently, in cell 2`},
		{"magic", []string{"x := 1", "%time\ny := x"}, false, `cell 2, line 1: "%time" is a magic`},
		{"workers restart", []string{"%workers 2", "%workers restart"}, false, `cell 2, line 1: "%workers restart": want %workers N,`},
		{"workers status", []string{"%workers status"}, false, `cell 1, line 1: "%workers status": want %workers N,`},
		{"workers twice", []string{"%workers 2", "%workers off", "%workers -np 3"}, false, `cell 3, line 1: "%workers -np 3": the program joined its workers in cell 1`},
		{"workers off first", []string{"x := 1", "%workers off"}, false, `cell 2, line 1: "%workers off": no %workers N before it`},
		{"workers without N", []string{"%workers -np"}, false, `cell 1, line 1: "%workers -np": -np: no value`},
		{"workers other flag", []string{"%workers -np 2 --verbose"}, false, `unexpected "--verbose"`},
		{"workers", []string{"x := 1", "%workers -np 2\ny := x"}, false, ""},
		{"shell", []string{"!ls"}, false, `cell 1, line 1: "!ls"`},
		{"magic dropped", []string{"x := 1", "%workers 2\ny := x"}, true, ""},
		{"assignment is not a redefinition", []string{"x := 1", "x = 2"}, false, ""},
		{"variable defined again with its type", []string{"x := 1", "x := 2"}, false, ""},
		{"the same constant again", []string{"const N = 1", "// N again.\nconst N = 1"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := exportNotebook("nb.ipynb", notebookJSON(c.cells...), exportOptions{dropMagics: c.drop, dir: "."})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("export: %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nb.ipynb")):
				t.Fatalf("export: %v, want an error naming nb.ipynb and saying %q", err, c.want)
			}
		})
	}
}

// TestIssue33ExportNotebooks exports every notebook of notebooks/ (04's
// %workers as a program for mpirun) and wants go vet clean programs: 04 defines s and its training set-up again after %workers off,
// with the same types; 07's and 08's functions read session variables.
func TestIssue33ExportNotebooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every notebook")
	}
	dir := exportDir(t)
	paths, err := filepath.Glob("../../notebooks/*.ipynb")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no notebooks: %v", err)
	}
	var pkgs []string
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".ipynb")
		if err := runExport([]string{p, "-o", filepath.Join(dir, name)}, io.Discard, io.Discard); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(dir), name))
	}
	if len(pkgs) != 8 {
		t.Errorf("%d notebooks exported, want all 8", len(pkgs))
	}
	vet := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	vet.Dir = "../.."
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet %s: %v\n%s", pkgs, err, out)
	}
}

// TestIssue33ExportWorkers: %workers makes a program for mpirun, which says
// how to build and run it at the top, joins the ranks where the notebook
// said %workers and leaves them at %workers off (or the end of main).
func TestIssue33ExportWorkers(t *testing.T) {
	cases := []struct {
		name  string
		cells []string
		want  []string // in this order in main.go
	}{
		{"loopback workers and off", []string{"x := 1", "%workers 2", "y := 2", "%workers off\nz := 3"}, []string{
			"The notebook ran on 2 workers (%workers in cell 2)",
			"go build -tags mpi -o prog .",
			"mpirun --bind-to none -np 2 ./prog",
			"after %workers off (cell 4) rank 0 alone runs the cells",
			"func gotrainJoinWorkers() {",
			"x := 1",
			"gotrainJoinWorkers() // %workers 2",
			"y := 2",
			"gotrainLeaveWorkers() // %workers off",
			"z := 3",
		}},
		{"mpirun on hosts, to the end", []string{"%workers -np 4 --hostfile hosts --address 10.0.0.1", "x := 1"}, []string{
			"mpirun --bind-to none -np 4 --hostfile hosts ./prog",
			"the ranks leave the job together at the end of main",
			"gotrainJoinWorkers() // %workers -np 4 --hostfile hosts --address 10.0.0.1",
			"x := 1",
			"gotrainLeaveWorkers() // the end of %workers",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := exportNotebook("nb.ipynb", notebookJSON(c.cells...), exportOptions{dir: "."})
			if err != nil {
				t.Fatal(err)
			}
			rest := string(src)
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("main.go lacks %q after the lines before it:\n%s", w, src)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestIssue33ExportRunsAsTheSession exports small notebooks, runs them and
// wants what the kernel prints: a variable defined again with its type is
// the same variable (a closure made before sees the new value; var without
// a value zeroes it), a function reads the session's variables, and --set
// changes a constant.
func TestIssue33ExportRunsAsTheSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs programs")
	}
	cases := []struct {
		name  string
		cells []string
		set   []string
		want  string
	}{
		{"closure sees the variable defined again",
			[]string{"import \"fmt\"\nx := 1\nshow := func() { fmt.Println(\"x is\", x) }\nshow()", "x := 2\nshow()"}, nil,
			"x is 1\nx is 2\n"},
		{"function reads a session variable",
			[]string{"import \"fmt\"\nn, label := 3, \"n\"", "func show() { fmt.Println(\"n is\", n) }\nshow()\nfmt.Println(label)", "n = 4\nshow()", "n := 5\nshow()"}, nil,
			"n is 3\nn\nn is 4\nn is 5\n"},
		{"var declared again is zeroed",
			[]string{"import \"fmt\"\nvar p *int\nv := 5\np = &v\nfmt.Println(p != nil)", "var p *int\nfmt.Println(p == nil)"}, nil,
			"true\ntrue\n"},
		{"package var declared with an imported type",
			[]string{"import (\n\"fmt\"\n\"strings\"\n)\nvar b strings.Builder\nb.WriteString(\"hi\")", "func say() { fmt.Println(b.String()) }\nsay()"}, nil,
			"hi\n"},
		{"a defining statement with a new local and a package variable",
			[]string{"import \"fmt\"\ncount, name := 2, \"steps\"", "func twice() int { return 2 * count }\nfmt.Println(twice(), name)"}, nil,
			"4 steps\n"},
		{"the same constant in two cells, set",
			[]string{"import \"fmt\"\nconst Iterations = 150\nfmt.Println(Iterations)", "const Iterations = 150\nfmt.Println(Iterations + 1)"}, []string{"--set", "Iterations=10"},
			"10\n11\n"},
	}
	dir := exportDir(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nb := filepath.Join(dir, strconv.Itoa(i)+".ipynb")
			if err := os.WriteFile(nb, notebookJSON(c.cells...), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "p"+strconv.Itoa(i))
			if err := runExport(append([]string{nb, "-o", out}, c.set...), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			run := exec.Command("go", "run", "./"+filepath.Join(filepath.Base(dir), filepath.Base(out)))
			run.Dir = "../.."
			got, err := run.CombinedOutput()
			if err != nil || string(got) != c.want {
				src, _ := os.ReadFile(filepath.Join(out, "main.go"))
				t.Errorf("go run: %v; got\n%s\nwant\n%s\nprogram:\n%s", err, got, c.want, src)
			}
		})
	}
	if err := runExport([]string{"../../notebooks/01-quickstart.ipynb", "-o", filepath.Join(dir, "q"), "--set", "NoSuch=1"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "declares no constant NoSuch") {
		t.Errorf("--set NoSuch=1: %v, want an error naming the missing constant", err)
	}
}

// TestIssue33ExportQuickstart runs the exported quick start and wants the
// notebook's 44 steps, the first four with the losses of nn's Example (the
// same seeds and loop).
func TestIssue33ExportQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	dir := exportDir(t)
	if err := runExport([]string{"../../notebooks/01-quickstart.ipynb", "-o", dir}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("go", "run", "./"+filepath.Base(dir))
	run.Dir = "../.."
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	steps := regexp.MustCompile(`step (\d+): loss (\d+\.\d+)`).FindAllStringSubmatch(string(out), -1)
	if len(steps) != 44 {
		t.Fatalf("%d step lines, want 44:\n%s", len(steps), out)
	}
	for i, want := range []float64{1.1868, 0.9937, 0.9710, 1.0023} {
		got, _ := strconv.ParseFloat(steps[i][2], 64)
		if steps[i][1] != strconv.Itoa(i+1) || math.Abs(got-want) > 2e-4 {
			t.Errorf("line %q, want step %d: loss %.4f", steps[i][0], i+1, want)
		}
	}
	if !strings.Contains(string(out), "quick start: step 40/40") {
		t.Errorf("no final monitor line in:\n%s", out)
	}
}

// TestIssue33ExportTypeSpelling spells a package variable's type as the
// program writes it, adding the import a type needs, and refuses the types
// a program cannot write.
func TestIssue33ExportTypeSpelling(t *testing.T) {
	main := types.NewPackage("main", "main")
	nn := types.NewPackage("github.com/gotrain/gotrain/nn", "nn")
	internal := types.NewPackage("github.com/gotrain/gotrain/internal/mpi", "mpi")
	named := func(pkg *types.Package, name string) types.Type {
		return types.NewNamed(types.NewTypeName(token.NoPos, pkg, name, nil), types.NewStruct(nil, nil), nil)
	}
	cases := []struct {
		name    string
		typ     types.Type
		want    string // the spelling, or the error's text
		imports string // the import the spelling added
	}{
		{"basic", types.Typ[types.Int], "int", ""},
		{"imported", types.NewPointer(named(nn, "Tensor")), "*nn.Tensor", "nn"},
		{"main's own", types.NewSlice(named(main, "Block")), "[]Block", ""},
		{"map of imported", types.NewMap(types.Typ[types.String], named(nn, "Tensor")), "map[string]nn.Tensor", "nn"},
		{"unexported", types.NewPointer(named(nn, "tensor")), "its type tensor is unexported in github.com/gotrain/gotrain/nn", ""},
		{"internal", named(internal, "World"), "its type World is in the internal package github.com/gotrain/gotrain/internal/mpi", ""},
		{"invalid", types.Typ[types.Invalid], "the type could not be worked out", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names := make(map[string]string)
			got, err := typeSpelling(c.typ, main, names)
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if c.imports != "" && names[nn.Path()] != c.imports {
				t.Errorf("imports %v, want %s as %s", names, nn.Path(), c.imports)
			}
		})
	}
}

// TestIssue33ExportNeedsModule: a notebook whose variables need their
// types, exported outside a module that has gotrain's packages, gets an
// error that says why the types are needed and what go list said.
func TestIssue33ExportNeedsModule(t *testing.T) {
	nb := notebookJSON("import \"github.com/gotrain/gotrain/nn\"\nlayer := nn.Dense(2)", "func width() int { _ = layer; return 2 }")
	_, err := exportNotebook("nb.ipynb", nb, exportOptions{dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "nb.ipynb: the notebook's variables need their types") || !strings.Contains(err.Error(), "go list") {
		t.Fatalf("export outside a module: %v, want an error saying the types are needed and go list failed", err)
	}
}
