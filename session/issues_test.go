package session

import (
	"strings"
	"testing"
)

// TestIssueRerunFuncLiteral: a cell that starts with a function literal
// (`func() { ... }()`) ran again before every later cell, because yaegi
// registered it as the package's main. A failed cell in between made no
// difference.
func TestIssueRerunFuncLiteral(t *testing.T) {
	tests := []struct {
		name  string
		cells []string // run after the function literal cell
	}{
		{"next cell", []string{"1+1"}},
		{"after a failed cell", []string{"k := undefinedThing[0]", "1+1"}},
		{"after a compile error yaegi finds", []string{"var q int = \"s\"", "1+1"}},
		{"after several cells", []string{"x := 1", "x + 1", "1+1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			mustRun(t, s, "import \"fmt\"")
			_, rec := run(t, s, "func() { fmt.Println(\"inside a func\") }()")
			if got := rec.Stdout(); got != "inside a func\n" {
				t.Fatalf("function literal cell printed %q, want it once", got)
			}
			for _, c := range tt.cells {
				res, rec := run(t, s, c)
				if strings.Contains(rec.Stdout(), "inside a func") {
					t.Errorf("cell %q printed %q: an earlier cell ran again", c, rec.Stdout())
				}
				if c == "1+1" && (res.Err != nil || text(res) != "2") {
					t.Errorf("cell %q: got %q, %+v, want 2", c, text(res), res.Err)
				}
			}
		})
	}
}

// TestIssueUserMain: a cell that declares func main runs it once, as a
// program would, and not again before later cells.
func TestIssueUserMain(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"fmt\"")
	_, rec := run(t, s, "func main() { fmt.Println(\"main ran\") }")
	if got := rec.Stdout(); got != "main ran\n" {
		t.Fatalf("declaring main printed %q, want %q", got, "main ran\n")
	}
	for _, c := range []string{"1+1", "x := 2", "x"} {
		if _, rec := run(t, s, c); rec.Stdout() != "" {
			t.Errorf("cell %q printed %q, want nothing", c, rec.Stdout())
		}
	}
}

// TestIssueFailedImport: an import cell that failed on one package left
// the others it named bound in the interpreter but unknown to the session,
// and a later `import "fmt"` failed with "fmt/_.go redeclared in this
// block".
func TestIssueFailedImport(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "import again", cells: []string{"import (\n\t\"fmt\"\n\t\"no/such/pkg\"\n)", "import \"fmt\"", "fmt.Sprint(1)"}, failOK: true, want: "1"},
		{name: "use without importing again", cells: []string{"import (\n\t\"fmt\"\n\t\"no/such/pkg\"\n)", "fmt.Sprint(2)"}, failOK: true, want: "2"},
		{name: "failing import first", cells: []string{"import (\n\t\"no/such/pkg\"\n\t\"strings\"\n)", "import \"strings\"\nstrings.ToUpper(\"a\")"}, failOK: true, want: "A"},
		{name: "aliased", cells: []string{"import (\n\tf \"fmt\"\n\t\"no/such/pkg\"\n)", "import f \"fmt\"\nf.Sprint(3)"}, failOK: true, want: "3"},
		{name: "the failure still names the package", cells: []string{"import (\n\t\"fmt\"\n\t\"no/such/pkg\"\n)", "import (\n\t\"fmt\"\n\t\"no/such/pkg\"\n)"}, errName: "CompileError", errHas: "3:2: import \"no/such/pkg\" error", failOK: true},
	})
}

// TestIssueFailedCellClobbers: a chunk that failed to compile still
// replaced the globals it declared, so a variable of an earlier cell read
// as zero and a function returned zero values, silently.
func TestIssueFailedCellClobbers(t *testing.T) {
	const failed = "has no value: a cell that declares it"
	runCellTests(t, []cellTest{
		{name: "variable", cells: []string{"x := 7", "x := 5\ny := undefinedThing", "x + 1"}, errName: "CompileError", errHas: "1:1: x " + failed, failOK: true},
		{name: "function", cells: []string{"func f() int { return 1 }", "func f() int { return 3 }\nfunc g() int { return undefinedQ }", "f()"}, errName: "CompileError", errHas: "1:1: f " + failed, failOK: true},
		{name: "used in a closure", cells: []string{"x := 7", "x := 5\ny := undefinedThing", "func() int { return x }()"}, errName: "CompileError", errHas: "1:21: x " + failed, failOK: true},
		{name: "declared again", cells: []string{"x := 7", "x := 5\ny := undefinedThing", "x := 8", "x + 1"}, failOK: true, want: "9"},
		{name: "rerun fixed cell", cells: []string{"func f() int { return 1 }\nfunc g() int { return undefinedQ }", "func f() int { return 1 }\nfunc g() int { return 2 }", "f() + g()"}, failOK: true, want: "3"},
		{name: "other globals untouched", cells: []string{"z := 3", "x := 5\ny := undefinedThing", "z"}, failOK: true, want: "3"},
		{name: "earlier chunk of the failed cell kept", cells: []string{"a := 1\nfunc h() int { return undefinedQ }", "a"}, failOK: true, want: "1"},
	})
}

// TestDefinitionLoopMessage: yaegi's "constant definition loop" with no
// undefined name behind it says what the session could not do.
func TestDefinitionLoopMessage(t *testing.T) {
	runCellTests(t, []cellTest{
		// An unnamed struct type cannot be written by the rewrite, so yaegi's error stands.
		{name: "untyped global", cells: []string{"import \"runtime\"", "ms := runtime.MemStats{}", "b := ms.BySize[0]"}, errName: "CompileError", errHas: "could not work out the type of the global"},
		{name: "undefined name first", cells: []string{"var a = b + 1"}, errName: "CompileError", errHas: "undefined: b"},
	})
}
