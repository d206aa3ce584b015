package session

import (
	"strings"
	"testing"
)

// TestTypedDefines covers the top-level defines yaegi cannot type on its
// own (see typed.go): each row failed with "constant definition loop",
// "nil type" or a compiler crash before the session converted them.
func TestTypedDefines(t *testing.T) {
	const imports = "import (\n\t\"fmt\"\n\t\"net/url\"\n\t\"strings\"\n)"
	split := `parts := strings.Split("a,b", ",")`
	values := `m := url.Values{"k": {"v", "w"}}`
	celsius := "type Celsius float64\nfunc (c Celsius) F() float64 { return float64(c)*9/5 + 32 }"
	runCellTests(t, []cellTest{
		{name: "index of compiled slice global", cells: []string{imports, split, "second := parts[1]", "second"}, want: "b"},
		{name: "index of call result", cells: []string{imports, `first := strings.Split("a,b", ",")[0]` + "\nfirst"}, want: "a"},
		{name: "index of compiled map", cells: []string{imports, values, `a := m["k"]`, "a"}, want: "[v w]"},
		{name: "index of index", cells: []string{imports, values, `w := m["k"][1]` + "\nw"}, want: "w"},
		{name: "index of method result", cells: []string{imports, `u, _ := url.Parse("http://h/p?a=1&a=2")`, "q := u.Query()\nsecond := q[\"a\"][1]\nsecond"}, want: "2"},
		{name: "index of a two-result define", cells: []string{imports, `us, err := url.ParseQuery("a=1&a=2")`, `second := us["a"][1]` + "\nfmt.Sprint(second, err)"}, want: "2<nil>"},
		{name: "two-result define in the same chunk", cells: []string{imports, `us, err := url.ParseQuery("a=1&a=2")` + "\n" + `first := us["a"][0]` + "\nfmt.Sprint(first, err)"}, want: "1<nil>"},
		{name: "max of an index", cells: []string{imports, "fs := strings.Fields(\"ab cde\")", "m := max(len(fs[1]), 2, len(fs[0]))\nn := min(fs[0], fs[1])\nfmt.Sprint(m, \" \", n)"}, want: "3 ab"},
		{name: "same chunk", cells: []string{imports, split + "\nlast := parts[len(parts)-1]\nlast"}, want: "b"},
		{name: "index in a sum", cells: []string{imports, split, `w := parts[0] + "!"` + "\nw"}, want: "a!"},
		{name: "index of constant string", cells: []string{`b := "abc"[1]` + "\nb"}, want: "98"},
		{name: "index of appended slice", cells: []string{imports, split, `z := append(parts, "c")` + "\nlast := z[2]\nlast"}, want: "c"},
		{name: "index of sliced call", cells: []string{imports, `rest := strings.Fields("a b c")[1:]` + "\nfirst := rest[0]\nfirst"}, want: "b"},
		{name: "two defines on one line", cells: []string{imports, split, "a, b := parts[0], parts[1]\na + b"}, want: "ab"},
		{name: "comma-ok map", cells: []string{imports, values, `v, ok := m["k"]` + "\nfmt.Sprint(v, ok)"}, want: "[v w] true"},
		{name: "comma-ok missing key", cells: []string{imports, values, `_, ok := m["x"]`, "ok"}, want: "false"},
		{name: "comma-ok interpreted map", cells: []string{`mi := map[string]int{"k": 4}`, `n, found := mi["k"]`, "n * 10"}, want: "40"},
		{name: "comma-ok type assertion", cells: []string{"var x any = 3", "n, ok := x.(int)\nn + 1"}, want: "4"},
		{name: "comma-ok assertion to a compiled interface", cells: []string{"import (\n\t\"fmt\"\n\t\"io\"\n\t\"strings\"\n)", "var x any = strings.NewReader(\"abc\")", "r, ok := x.(io.Reader)\nb, _ := io.ReadAll(r)\nfmt.Sprintln(string(b), ok)"}, want: "abc true\n"},
		{name: "comma-ok assertion to a declared struct", cells: []string{"type Sq struct{ S float64 }", "var x any = Sq{3}", "q, ok := x.(Sq)\nq.S"}, want: "3"},
		{name: "var without type", cells: []string{imports, `var first = strings.Split("a,b", ",")[1]`, "first"}, want: "b"},
		{name: "compiled map type of a second package", cells: []string{"import \"net/url\"", `u, _ := url.Parse("http://h/p")`, "ui := []*url.Userinfo{u.User}", "import \"net/http\"", `h := http.Header{"K": {"x"}}`, `k := h["K"]` + "\nk"}, want: "[x]"},
		{name: "element type from unimported package", cells: []string{"import (\n\t\"go/parser\"\n\t\"go/token\"\n)", `f, _ := parser.ParseFile(token.NewFileSet(), "", "package p; var x int; func g() {}", 0)`, "d := f.Decls[1]", "e := f.Decls[0]\nd.Pos() > e.Pos()"}, want: "true"},
		{name: "hidden import then visible import", cells: []string{"import (\n\t\"go/parser\"\n\t\"go/token\"\n)", `f, _ := parser.ParseFile(token.NewFileSet(), "", "package p; var x int", 0)`, "d := f.Decls[0]", "import \"go/ast\"\n_, ok := d.(*ast.GenDecl)\nok"}, want: "true"},
		{name: "interpreted named element keeps its methods", cells: []string{celsius, "cs := []Celsius{100}", "c := cs[0]\nc.F()"}, want: "212"},
		{name: "interpreted named map value keeps its methods", cells: []string{celsius, "g := map[string]Celsius{\"a\": 5}", "x := g[\"a\"]\nx.F()"}, want: "41"},
		{name: "compiled root despite a declared type", cells: []string{imports, "type Name string", `first := strings.Split("a,b", ",")[0]` + "\nfirst"}, want: "a"},
		{name: "compiled named root despite a declared type", cells: []string{imports, "type Name string", values, "w := m[\"k\"][1]\nw"}, want: "w"},
		{name: "interpreted slice untouched", cells: []string{"xs := []int{1, 2}", "y := xs[0]\ny"}, want: "1"},
		{name: "interpreted struct slice untouched", cells: []string{"type P struct{ X []int }", "ps := []P{{X: []int{7}}}", "p := ps[0]\np.X[0]"}, want: "7"},
	})
}

// TestTypedDefinesLaterUse checks that a variable the session typed works
// like any other in later cells, and that the cell runs again.
func TestTypedDefinesLaterUse(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"fmt\"\n\t\"strings\"\n)")
	define := "parts := strings.Split(\"a,b\", \",\")\nsecond := parts[1]"
	mustRun(t, s, define)
	tests := []struct{ code, want string }{
		{"parts = append(parts, \"c\")\nlen(parts)", "3"},
		{"third := parts[2]\nthird", "c"},
		{"joined := \"\"\nfor _, p := range parts {\n\tjoined += p\n}\njoined", "abc"},
		{"func count(xs []string) int { return len(xs) }", ""},
		{"count(parts)", "3"},
		{"strings.Join(parts, \"+\")", "a+b+c"},
		{"strings.ToUpper(second)", "B"},
		{"f := func() string { return parts[0] + second }\nf()", "ab"},
		{define, ""},
		{"fmt.Sprint(parts, second)", "[a b]b"},
	}
	for _, tt := range tests {
		if got := mustRun(t, s, tt.code); got != tt.want {
			t.Errorf("cell %q: got %q, want %q", tt.code, got, tt.want)
		}
	}
}

// TestTypedDefinesKeepPositions checks that errors inside a converted
// right-hand side, and after it, keep the cell's lines and columns.
func TestTypedDefinesKeepPositions(t *testing.T) {
	tests := []struct {
		name, cell, want string
	}{
		{"inside", "x := strings.Split(\"a\", \",\")[0] + 1", "1:6: invalid operation: mismatched types string and untyped int"},
		{"after on the same line", "x := strings.Split(\"a\", \",\")[0]; y := x + 1", "1:39: invalid operation"},
		{"undefined inside", "x := strings.Split(\"a\", \",\")[0] + undefinedY", "1:35: undefined: undefinedY"},
		{"next line", "x := strings.Split(\"a\", \",\")[0]\nvar q int = \"s\"", "2:13:"},
		{"hidden import first", "import \"net/http\"\nr, _ := http.NewRequest(\"GET\", \"http://h/\", nil)\nq := r.URL.Query()\nv := q[\"a\"] + 1", "4:6: invalid operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			mustRun(t, s, "import \"strings\"")
			res, _ := run(t, s, tt.cell)
			if res.Err == nil || !strings.Contains(res.Err.Value, tt.want) {
				t.Fatalf("cell %q: got %+v, want an error containing %q", tt.cell, res.Err, tt.want)
			}
		})
	}
}

// TestTypedDefinesFallBack checks that what the session cannot type keeps
// yaegi's error, now explained.
func TestTypedDefinesFallBack(t *testing.T) {
	runCellTests(t, []cellTest{
		// An unexported compiled type cannot be written in a cell.
		{name: "unexported element type", cells: []string{"import \"strings\"", "rs := []*strings.Reader{strings.NewReader(\"x\")}", "import \"reflect\"", "v := reflect.ValueOf(rs)", "f := v.Type()", "k := []reflect.Type{f}[0].Kind()\nk"}, want: "slice"},
		{name: "untyped constant operand", cells: []string{"import \"strings\"", "const k = 2", "parts := strings.Split(\"a,b\", \",\")", "n := len(parts[0]) * k\nn"}, want: "2"},
		{name: "mismatch in a deferred value", cells: []string{"lr := 0.5", "var x = lr * 2 + \"s\""}, errName: "CompileError", errHas: "1:9: invalid operation: mismatched types float64 and untyped string"},
		{name: "explained loop of unwritable type", cells: []string{"import \"runtime\"", "ms := runtime.MemStats{}", "var b = ms.BySize[0]"}, errName: "CompileError", errHas: "1:5: the interpreter could not work out the type of the global b (constant definition loop); write its type out: `var b Type = ...`"},
		{name: "explained initialization", cells: []string{"import \"runtime\"", "ms := runtime.MemStats{}", "var d = ms.BySize"}, errName: "CompileError", errHas: "1:5: the interpreter cannot initialize the global d from a variable of an earlier cell"},
	})
}

// TestTypedDefineSource checks the source the session hands yaegi: which
// defines get a conversion, to what, and which are left alone.
func TestTypedDefineSource(t *testing.T) {
	setup := []string{
		"import (\n\t\"go/parser\"\n\t\"go/token\"\n\t\"net/url\"\n\t\"strings\"\n)",
		"parts := strings.Split(\"a,b\", \",\")",
		"m := url.Values{}",
		"f, _ := parser.ParseFile(token.NewFileSet(), \"\", \"package p\", 0)",
		"xs := []int{1}",
		"type P struct{ X int }",
		"ps := []P{{X: 1}}",
	}
	tests := []struct {
		name, cell string
		want       string // a substring of the prepared source; "" when untouched
		predecl    string // a substring of the declarations moved out
	}{
		{"slice element", "s := parts[1]", "s := string(/*line _.go:1:6*/parts[1])/*line _.go:1:14*/", ""},
		{"map value", "v := m[\"k\"]", "v := []string(/*line _.go:1:6*/m[\"k\"])", ""},
		{"container from a call", "p := strings.Fields(\"a\")", "p := []string(/*line", ""},
		{"hidden import", "d := f.Decls", "d := []_gotrain_pkg1.Decl(", ""},
		{"pointer element", "u := []*url.URL{nil}\nv := u[0]", "v := (*url.URL)(/*line _.go:2:6*/u[0])", ""},
		{"comma-ok", "v, ok := m[\"k\"]", "v, ok =  m[\"k\"]", "var v []string; var ok bool"},
		{"interpreted slice element", "y := xs[0]", "y := int(/*line", ""},
		{"interpreted struct element untouched", "p := ps[0]", "", ""},
		{"named compiled container untouched", "w := url.Values(nil)\nw2 := m", "", ""},
		{"literal untouched", "ys := []string{\"a\"}", "", ""},
		{"unknown untouched", "z := undefinedThing[0]", "", ""},
		{"inside a function untouched", "func() { s := parts[0]; _ = s }()", "", ""},
	}
	s := newSession(t)
	for _, c := range setup {
		mustRun(t, s, c)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.prepare(tt.cell, chunk{kind: stmtChunk, start: 0, end: len(tt.cell)})
			if err != nil {
				t.Fatalf("prepare %q: %v", tt.cell, err)
			}
			untouched := !strings.Contains(p.src, "/*line")
			switch {
			case tt.want == "" && !untouched:
				t.Errorf("cell %q: got %q, want it untouched", tt.cell, p.src)
			case tt.want != "" && !strings.Contains(p.src, tt.want):
				t.Errorf("cell %q: got %q, want it to contain %q", tt.cell, p.src, tt.want)
			}
			if !strings.Contains(p.predecl, tt.predecl) || (tt.predecl == "") != (p.predecl == "") {
				t.Errorf("cell %q: got declarations %q, want %q", tt.cell, p.predecl, tt.predecl)
			}
		})
	}
}

// TestDeferredVarInits: a var declaration whose value uses a variable of
// an earlier cell failed with "variable definition loop"; its value now
// runs as an assignment right after the declarations.
func TestDeferredVarInits(t *testing.T) {
	split := "import \"strings\"\nparts := strings.Split(\"a,b\", \",\")"
	runCellTests(t, []cellTest{
		{name: "explicit type", cells: []string{split, "var a4 string = parts[1]", "a4"}, want: "b"},
		{name: "inferred type", cells: []string{"lr := 0.5", "var x = lr * 2", "x"}, want: "1"},
		{name: "later declaration of the chunk sees it", cells: []string{"lr := 0.5", "var x = lr * 2\nvar y = x + 1", "y"}, want: "2"},
		{name: "grouped", cells: []string{"n := 3", "var (\n\ta = n\n\tb int = 2 * n\n)\nfunc sum() int { return a + b }", "sum()"}, want: "9"},
		{name: "two names", cells: []string{"n := 3", "var a, b = n, 2 * n", "a * b"}, want: "18"},
		{name: "closure", cells: []string{"lr := 0.5", "var f = func() float64 { return lr * 4 }", "lr = 1\nf()"}, want: "4"},
		{name: "compiled call", cells: []string{"import \"strings\"\nn := 3", "var s = strings.Repeat(\"ab\", n)", "s"}, want: "ababab"},
		{name: "rerun", cells: []string{"n := 3", "var m = n + 1", "n = 10", "var m = n + 1", "m"}, want: "11"},
		{name: "independent declaration untouched", cells: []string{"var k = 3\nvar l = k * 2", "l"}, want: "6"},
		{name: "panic keeps its line", cells: []string{"xs := []int{1}", "// pick one\nvar p = xs[5]"}, errName: "Panic", errHas: "(at 2:"},
		{name: "type error keeps its position", cells: []string{"lr := 0.5", "var x = 1\nvar y = lr * 2 + \"s\""}, errName: "CompileError", errHas: "2:9: invalid operation"},
		{name: "multiple results left to yaegi", cells: []string{"import \"strconv\"\ns := \"4\"", "var v, err = strconv.Atoi(s)"}, errName: "CompileError", errHas: "cannot initialize the global v"},
	})
}
