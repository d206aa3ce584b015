package main

import (
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
		{"redefined variable", []string{"x := 1", "x := 2"}, false, `"x" is defined in cell 1 and again in cell 2`},
		{"redefined function", []string{"func f() {}", "import \"fmt\"\nfunc f() { fmt.Println() }"}, false, `"f" is defined in cell 1 and again in cell 2`},
		{"magic", []string{"x := 1", "%workers 2\ny := x"}, false, `cell 2, line 1: "%workers 2" is a magic`},
		{"shell", []string{"!ls"}, false, `cell 1, line 1: "!ls"`},
		{"magic dropped", []string{"x := 1", "%workers 2\ny := x"}, true, ""},
		{"assignment is not a redefinition", []string{"x := 1", "x = 2"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := exportNotebook("nb.ipynb", notebookJSON(c.cells...), c.drop)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("export: %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nb.ipynb")):
				t.Fatalf("export: %v, want an error naming nb.ipynb and saying %q", err, c.want)
			}
		})
	}
}

// TestIssue33ExportNotebooks exports every notebook of notebooks/ and wants
// go vet clean programs, but for 04-multi-worker, which redefines s after
// %workers off and is refused naming both cells, and 07 and 08, whose
// functions use the session's variables (a known gap).
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
		err := runExport([]string{p, "-o", filepath.Join(dir, name), "--drop-magics"}, io.Discard, io.Discard)
		switch name {
		case "04-multi-worker":
			if err == nil || !strings.Contains(err.Error(), `"s" is defined in cell 3 and again in cell 8`) {
				t.Errorf("%s: %v, want the redefinition of s refused naming both cells", name, err)
			}
			continue
		case "07-resnet", "08-recurrent":
			continue // a known gap: their functions read session variables, which stay local to main
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(dir), name))
	}
	vet := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	vet.Dir = "../.."
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet %s: %v\n%s", pkgs, err, out)
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
