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

// TestIssueClosureInGoStatement: yaegi v0.16.1 stored a function literal's
// value in a frame slot and, when a call of that closure returned, wrote
// the slot's earlier value back. A goroutine finishing while the cell's
// loop evaluated the same literal again made the loop start the wrong
// closure, or a nil one, which panicked outside any recover and killed the
// kernel. third_party/yaegi drops the write-back (see its PATCHES.md).
// Each case starts n closures, one per loop iteration, and checks that
// every iteration's closure ran exactly once.
func TestIssueClosureInGoStatement(t *testing.T) {
	const setup = `
import "sync"

var (
	mu   sync.Mutex
	seen = map[int]int{}
	wg   sync.WaitGroup
)

func record(i int) {
	mu.Lock()
	seen[i]++
	mu.Unlock()
}

func spawn(f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
}`
	tests := []struct {
		name string
		loop string
	}{
		{"go func literal", `
for i := range n {
	wg.Add(1)
	go func() {
		defer wg.Done()
		record(i)
	}()
}`},
		{"literal passed to a spawning func", `
for i := range n {
	spawn(func() { record(i) })
}`},
		{"literal with an argument", `
for i := range n {
	wg.Add(1)
	go func(k int) {
		defer wg.Done()
		record(k)
	}(i)
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			mustRun(t, s, setup)
			for round := range 5 {
				mustRun(t, s, "seen = map[int]int{}\nn := 500")
				mustRun(t, s, tt.loop+"\nwg.Wait()")
				res, _ := run(t, s, `
bad := 0
for i := range n {
	if seen[i] != 1 {
		bad++
	}
}
bad + len(seen) - n`)
				if res.Err != nil || text(res) != "0" {
					t.Fatalf("round %d: %q, %+v: want every iteration's closure to run once", round, text(res), res.Err)
				}
			}
		})
	}
}

// TestIssueShadowedGlobal: yaegi runs a cell's statements at package scope
// and gave all variables of one name there one slot, so a variable
// declared in a block replaced the cell's variable of the same name, and
// some such cells crashed its compiler. scope.go runs those blocks as
// functions.
func TestIssueShadowedGlobal(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "if body", cells: []string{"x := 1\nif x > 0 {\n\tx := 2\n\t_ = x\n}\nx"}, want: "1"},
		{name: "loop body", cells: []string{"y := 1\nfor k := 0; k < 2; k++ {\n\ty := 10 + k\n\t_ = y\n}\ny"}, want: "1"},
		{name: "if with init", cells: []string{"m := map[string]int{\"a\": 7}\nv := -1\nif v, ok := m[\"a\"]; ok {\n\t_ = v\n}\nv"}, want: "-1"},
		{name: "err in a block", cells: []string{"import \"strconv\"", "n, err := strconv.Atoi(\"5\")\nif n > 0 {\n\t_, err := strconv.Atoi(\"x\")\n\t_ = err\n}\nerr == nil && n == 5"}, want: "true"},
		{name: "earlier cell's variable", cells: []string{"z := \"outer\"", "{\n\tz := \"inner\"\n\t_ = z\n}\nz"}, want: "outer"},
		{name: "type switch binding", cells: []string{"var a any = 3\ns := \"kept\"\nswitch s := a.(type) {\ncase int:\n\t_ = s\n}\ns"}, want: "kept"},
		{name: "assignment reaches the cell's variable", cells: []string{"total := 0\nfor _, v := range []int{1, 2, 3} {\n\ttotal += v\n}\ntotal"}, want: "6"},
		{name: "label and break", cells: []string{"found := -1\nouter:\nfor i := range 3 {\n\tfor j := range 3 {\n\t\tif i*j == 2 {\n\t\t\tfound = i*10 + j\n\t\t\tbreak outer\n\t\t}\n\t}\n}\nfound"}, want: "12"},
		{name: "output from the block", cells: []string{"import \"fmt\"", "for i := range 2 {\n\tfmt.Println(\"line\", i)\n}"}, stdout: "line 0\nline 1\n"},
	})
}

// TestIssueLoopVariablePerIteration: yaegi gave a loop one variable for
// all iterations, as Go did before 1.22, so closures and pointers made in
// the body saw the last value. Each iteration now has its own, as in the
// Go the notebook's users write.
func TestIssueLoopVariablePerIteration(t *testing.T) {
	const three = "\n[]int{fs[0](), fs[1](), fs[2]()}"
	runCellTests(t, []cellTest{
		{name: "range over int", cells: []string{"var fs []func() int\nfor i := range 3 {\n\tfs = append(fs, func() int { return i })\n}" + three}, want: "[0 1 2]"},
		{name: "three-clause", cells: []string{"var fs []func() int\nfor i := 0; i < 3; i++ {\n\tfs = append(fs, func() int { return i })\n}" + three}, want: "[0 1 2]"},
		{name: "range over slice", cells: []string{"var fs []func() int\nfor _, v := range []int{5, 6, 7} {\n\tfs = append(fs, func() int { return v })\n}" + three}, want: "[5 6 7]"},
		{name: "key and value", cells: []string{"var fs []func() int\nfor k, v := range []int{5, 6, 7} {\n\tfs = append(fs, func() int { return 10*k + v })\n}" + three}, want: "[5 16 27]"},
		{name: "address of the variable", cells: []string{"var ps []*int\nfor _, v := range []int{5, 6, 7} {\n\tps = append(ps, &v)\n}\n[]int{*ps[0], *ps[1], *ps[2]}"}, want: "[5 6 7]"},
		{name: "range body assigns its variable", cells: []string{"var got []int\nfor i := range 3 {\n\ti += 10\n\tgot = append(got, i)\n}\ngot"}, want: "[10 11 12]"},
		{name: "three-clause body assigns a captured variable", cells: []string{"var fs []func() int\nfor i := 0; i < 6; i++ {\n\tif i == 1 {\n\t\ti = 3\n\t}\n\tfs = append(fs, func() int { return i })\n}\n[]int{fs[0](), fs[1](), fs[2](), fs[3]()}"}, want: "[0 3 4 5]"},
		{name: "three-clause continue after assigning a captured variable", cells: []string{"var fs []func() int\nfor i := 0; i < 6; i++ {\n\tif i == 1 {\n\t\ti = 3\n\t\tfs = append(fs, func() int { return i })\n\t\tcontinue\n\t}\n\tfs = append(fs, func() int { return i })\n}\nvar got []int\nfor _, f := range fs {\n\tgot = append(got, f())\n}\ngot"}, want: "[0 3 4 5]"},
		{name: "three-clause continue of an inner loop", cells: []string{"var fs []func() int\nfor i := 0; i < 4; i++ {\n\tfor j := 0; j < 2; j++ {\n\t\tif j == 0 {\n\t\t\tcontinue\n\t\t}\n\t}\n\tif i == 0 {\n\t\ti = 2\n\t}\n\tfs = append(fs, func() int { return i })\n}\n[]int{fs[0](), fs[1]()}"}, want: "[2 3]"},
		{name: "three-clause body assigns its variable", cells: []string{"var got []int\nfor i := 0; i < 6; i++ {\n\tif i == 1 {\n\t\ti = 3\n\t}\n\tgot = append(got, i)\n}\ngot"}, want: "[0 3 4 5]"},
		{name: "nested loops", cells: []string{"var fs []func() int\nfor i := range 2 {\n\tfor j := range 2 {\n\t\tfs = append(fs, func() int { return 10*i + j })\n\t}\n}\n[]int{fs[0](), fs[1](), fs[2](), fs[3]()}"}, want: "[0 1 10 11]"},
		{name: "in a declared function", cells: []string{"func makers() []func() int {\n\tvar fs []func() int\n\tfor i := 0; i < 3; i++ {\n\t\tfs = append(fs, func() int { return i })\n\t}\n\treturn fs\n}", "fs := makers()" + three}, want: "[0 1 2]"},
		{name: "in a function literal", cells: []string{"var fs []func() int\nfunc() {\n\tfor i := range 3 {\n\t\tfs = append(fs, func() int { return i })\n\t}\n}()" + three}, want: "[0 1 2]"},
	})
}

// TestIssueCommaOkMissingKey: yaegi's `v, ok := m[k]` left v as it was
// when k was missing, instead of the zero value, so a second lookup in a
// loop or an assignment kept the previous value. Patched in
// third_party/yaegi (PATCHES.md, 3).
func TestIssueCommaOkMissingKey(t *testing.T) {
	loop := func(decl, zero string) string {
		return decl + "\nvar got []string\nfor _, k := range []string{\"a\", \"b\"} {\n\tv, ok := m[k]\n\tgot = append(got, fmt.Sprint(v == " + zero + ", ok))\n}\ngot"
	}
	runCellTests(t, []cellTest{
		{name: "int values", cells: []string{`import "fmt"`, loop(`m := map[string]int{"a": 1}`, "0")}, want: "[false true true false]"},
		{name: "struct values", cells: []string{`import "fmt"`, "type pt struct{ x int }", loop(`m := map[string]pt{"a": {1}}`, "pt{}")}, want: "[false true true false]"},
		{name: "interface values", cells: []string{`import "fmt"`, loop(`m := map[string]any{"a": 1}`, "nil")}, want: "[false true true false]"},
		{name: "pointer values", cells: []string{`import "fmt"`, "one := 1", loop(`m := map[string]*int{"a": &one}`, "nil")}, want: "[false true true false]"},
		// Constant keys take yaegi's other path.
		{name: "assignment, constant keys", cells: []string{"func lookup() (int, bool) {\n\tm := map[string]int{\"a\": 1}\n\tv, ok := m[\"a\"]\n\tv, ok = m[\"b\"]\n\treturn v, ok\n}", "v, ok := lookup()\n[]any{v, ok}"}, want: "[0 false]"},
	})
}
