package cells_test

import "testing"

// TestIssue24LateBinding runs sessions whose later cells declare names
// again and checks what earlier cells' functions see, as a notebook user
// expects from Python: a function or variable declared again with the same
// signature or type is the one everything uses; another signature or type
// leaves earlier functions on the old one, and one note names them; no
// note where nothing differs.
func TestIssue24LateBinding(t *testing.T) {
	type cell = sessionCell
	for _, tt := range []struct {
		name  string
		cells []cell
	}{
		{"a function redefined reaches earlier callers", []cell{
			{code: "import \"fmt\"\nfunc greet(n string) string { return \"Hello, \" + n + \"!\" }\nfunc welcome() { fmt.Println(greet(\"Ada\")) }\nwelcome()", out: "Hello, Ada!\n"},
			{code: "func greet(n string) string { return \"Hi, \" + n }\nwelcome()", out: "Hi, Ada\n"},
			{code: "func greet(who string) string { return \"Hey \" + who }\nwelcome()\nfmt.Println(greet(\"Bo\"))", out: "Hey Ada\nHey Bo\n"},
		}},
		// f holds the first count, which hands its call over to the newest
		// (as Julia does; Python would give 21: the old body, whose
		// recursive call reaches the new one).
		{"the declaring cell's own calls and recursion", []cell{
			{code: "import \"fmt\"\nfunc count(n int) int { if n == 0 { return 0 }; return 1 + count(n-1) }\nf := count\nfmt.Println(count(3))", out: "3\n"},
			{code: "func count(n int) int { if n == 0 { return 0 }; return 10 + count(n-1) }\nfmt.Println(count(3), f(3))", out: "30 30\n"},
		}},
		{"running the first declaration again makes it the one called", []cell{
			{code: "import \"fmt\"\nfunc v() int { return 1 }\nfunc show() { fmt.Println(v()) }", out: ""},
			{code: "func v() int { return 2 }\nshow()", out: "2\n"},
			{code: "func v() int { return 1 }\nfunc show() { fmt.Println(v()) }", out: ""},
			{code: "show()", out: "1\n"},
			{code: "func v() int { return 2 }\nshow()", out: "2\n"},
		}},
		{"an exported function", []cell{
			{code: "import \"fmt\"\nfunc Scale(x float64) float64 { return 2 * x }\nfunc Apply() { fmt.Println(Scale(3)) }", out: ""},
			{code: "func Scale(x float64) float64 { return 3 * x }\nApply()", out: "9\n"},
		}},
		{"another signature keeps earlier callers, with a note", []cell{
			{code: "import \"fmt\"\nfunc greet(n string) string { return \"Hello, \" + n }\nfunc welcome() { fmt.Println(greet(\"Ada\")) }\nfunc other() {}"},
			{code: "func greet(n int) string { return fmt.Sprint(\"#\", n) }\nwelcome()\nfmt.Println(greet(7))", out: "Hello, Ada\n#7\n",
				notes: []string{"greet redefined with another signature: these keep calling the old one: welcome"}},
		}},
		{"a variable declared again with its type", []cell{
			{code: "import \"fmt\"\nlimit := 10\nfunc below(x int) bool { return x < limit }\nread := func() int { return limit }\nfmt.Println(below(12), read())", out: "false 10\n"},
			{code: "limit := 13\nfmt.Println(below(12), read())", out: "true 13\n"},
			{code: "var limit int\nfmt.Println(below(-1), read())", out: "true 0\n"},
			{code: "limit := 10\nfmt.Println(below(12), read())", out: "false 10\n"},
		}},
		{"a variable the cell's own loop updates", []cell{
			{code: "import \"fmt\"\ntotal := 0\nfunc report() { fmt.Println(total) }"},
			{code: "total := 5\nfor i := 0; i < 3; i++ {\n\ttotal += i\n}\nreport()", out: "8\n"},
		}},
		{"another type makes a new variable, with a note", []cell{
			{code: "import \"fmt\"\nitems := []int{1, 2}\nfunc n() int { return len(items) }\nfunc m() int { return cap(items) }"},
			{code: "items := \"abc\"\nfmt.Println(n(), m(), items)", out: "2 2 abc\n",
				notes: []string{"items redefined with another type: these keep the old variable: m, n"}},
		}},
		{"x, err := in many cells prints no note", []cell{
			{code: "import (\n\t\"fmt\"\n\t\"strconv\"\n)\nx, err := strconv.Atoi(\"1\")\nfunc check() { fmt.Println(x, err) }"},
			{code: "x, err := strconv.Atoi(\"2\")\ncheck()", out: "2 <nil>\n"},
			{code: "y, err := strconv.Atoi(\"z\")\n_ = y\ncheck()", out: "2 strconv.Atoi: parsing \"z\": invalid syntax\n"},
		}},
		{"a type redefined", []cell{
			{code: "import \"fmt\"\ntype point struct{ x int }\np := point{1}\nfunc show(q point) { fmt.Println(q.x) }"},
			{code: "type point struct{ x, y int }\nfmt.Printf(\"%+v\\n\", point{1, 2})", out: "{x:1 y:2}\n",
				notes: []string{"point redefined as a new type; these keep the old point until their cells run again: show; these variables hold values of the old point until the cells that make them run again: p; a later cell that uses them is refused until then"}},
			{code: "type point struct{ x, y, z int }", out: ""},
		}},
		{"a type no one used", []cell{
			{code: "type config struct{ name string }"},
			{code: "type config struct{ name string; port int }"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { runCells(t, tt.cells, nil) })
	}
}
