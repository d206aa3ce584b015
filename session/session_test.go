package session

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/display"
	"github.com/gotrain/gotrain/kernel"
)

// cellTest is one row: cells run in order in a fresh session; the last
// cell's value, stdout or error are checked.
type cellTest struct {
	name    string
	cells   []string
	want    string // text/plain of the last cell's value
	stdout  string // when non-empty, the last cell's stdout
	errName string // when non-empty, the last cell's error name
	errHas  string // a substring of the error's value
	failOK  bool   // the cells before the last may fail
}

func runCellTests(t *testing.T, tests []cellTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			for _, c := range tt.cells[:len(tt.cells)-1] {
				if tt.failOK {
					run(t, s, c)
					continue
				}
				mustRun(t, s, c)
			}
			last := tt.cells[len(tt.cells)-1]
			res, rec := run(t, s, last)
			if tt.errName != "" {
				if res.Err == nil {
					t.Fatalf("cell %q: got value %q, want error %s containing %q", last, text(res), tt.errName, tt.errHas)
				}
				if res.Err.Name != tt.errName || !strings.Contains(res.Err.Value, tt.errHas) {
					t.Fatalf("cell %q: got error %s: %q, want %s containing %q", last, res.Err.Name, res.Err.Value, tt.errName, tt.errHas)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("cell %q: %s: %s\n%s", last, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
			}
			if got := text(res); got != tt.want {
				t.Errorf("cell %q: got value %q, want %q", last, got, tt.want)
			}
			if tt.stdout != "" && rec.Stdout() != tt.stdout {
				t.Errorf("cell %q: got stdout %q, want %q", last, rec.Stdout(), tt.stdout)
			}
		})
	}
}

func TestPersistence(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "variable", cells: []string{"x := 20", "x + 1"}, want: "21"},
		{name: "function", cells: []string{"func sq(v int) int { return v * v }", "sq(7)"}, want: "49"},
		{name: "type and method", cells: []string{"type P struct{ X int }\nfunc (p P) Twice() int { return 2 * p.X }", "P{X: 4}.Twice()"}, want: "8"},
		{name: "closure state", cells: []string{"n := 0\ninc := func() int { n++; return n }", "inc()", "inc()"}, want: "2"},
		{name: "imports", cells: []string{"import \"strings\"", "strings.ToUpper(\"go\")"}, want: "GO"},
		// The goroutine keeps to its function's variables; see the BUG note on
		// goroutines that use globals.
		{name: "goroutine keeps running", cells: []string{"func count() chan int {\n\tch := make(chan int)\n\tgo func() {\n\t\tfor i := 1; ; i++ {\n\t\t\tch <- i\n\t\t}\n\t}()\n\treturn ch\n}\nch := count()", "<-ch", "<-ch"}, want: "2"},
		{name: "mixed cell", cells: []string{"import \"fmt\"\nconst k = 3\nvar total int\nfunc add(v int) { total += v }\nadd(k)\nadd(k)\nfmt.Println(total)\ntotal"}, want: "6", stdout: "6\n"},
	})
}

func TestImports(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "rerun import cell", cells: []string{"import \"fmt\"\nfmt.Sprint(1)", "import \"fmt\"\nfmt.Sprint(2)"}, want: "2"},
		{name: "grouped rerun", cells: []string{"import (\n\t\"fmt\"\n\t\"strings\"\n)", "import (\n\t\"fmt\"\n\t\"strings\"\n\t\"math\"\n)\nmath.Sqrt(16)"}, want: "4"},
		{name: "new alias of seen path", cells: []string{"import \"math\"", "import m \"math\"\nm.Sqrt(9)"}, want: "3"},
		{name: "versioned path", cells: []string{"import \"math/rand/v2\"\nr := rand.New(rand.NewPCG(1, 2))\nr.IntN(1) + 5"}, want: "5"},
		{name: "unknown package", cells: []string{"import \"no/such/pkg\""}, errName: "CompileError", errHas: "no/such/pkg"},
	})
}

func TestRewrites(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "range over int literal", cells: []string{"s := 0\nfor i := range 10 {\n\ts += i\n}\ns"}, want: "45"},
		{name: "range over typed int", cells: []string{"var n int64 = 4\nvar last int64\nfor i := range n { last = i }\nlast"}, want: "3"},
		{name: "range evaluates n once", cells: []string{"calls := 0\nfunc n() int { calls++; return 3 }", "import \"fmt\"\nsum := 0\nfor i := range n() { sum += i }\nfmt.Sprint(sum, calls)"}, want: "3 1"},
		{name: "range over len", cells: []string{"xs := []string{\"a\", \"b\", \"c\"}\nc := 0\nfor range len(xs) { c++ }\nc"}, want: "3"},
		{name: "range over global int", cells: []string{"steps := 3", "k := 0\nfor i := range steps { k += i }\nk"}, want: "3"},
		{name: "range over int with break label", cells: []string{"found := -1\nouter:\nfor i := range 5 {\n\tfor j := range 5 {\n\t\tif i*j == 6 {\n\t\t\tfound = i*10 + j\n\t\t\tbreak outer\n\t\t}\n\t}\n}\nfound"}, want: "23"},
		{name: "range over slice untouched", cells: []string{"t := 0\nfor _, v := range []int{4, 5} { t += v }\nt"}, want: "9"},
		{name: "min of ints", cells: []string{"min(3, 1, 2)"}, want: "1"},
		{name: "max float constant first", cells: []string{"max(1, 2.5)"}, want: "2.5"},
		{name: "min typed after constant", cells: []string{"f := 0.5\nmin(1, f)"}, want: "0.5"},
		{name: "nested min max", cells: []string{"x := 15\nmax(0, min(x, 10))"}, want: "10"},
		{name: "strings min", cells: []string{"min(\"b\", \"a\")"}, want: "a"},
		{name: "user min shadows builtin", cells: []string{"func min(a, b int) int { return 42 }", "min(1, 2)"}, want: "42"},
		{name: "min assigned at top level", cells: []string{"a, b := 3, 4\nm := min(a, b)\nm"}, want: "3"},
		{name: "max of len at top level", cells: []string{"xs := []int{1, 2}\nn := max(len(xs), 1)\nn"}, want: "2"},
		{name: "max float at top level", cells: []string{"lr := 0.5\nlr = max(0.001, lr*0.5)\nnext := max(lr, 0.1)\nnext"}, want: "0.25"},
		{name: "slices.Max assigned at top level", cells: []string{"import \"slices\"\nxs := []float64{1, 4, 2}\nbest := slices.Max(xs)\nbest"}, want: "4"},
		{name: "slices.Max of global", cells: []string{"import \"slices\"\nxs := []int{7, 9}", "best := slices.Max(xs)\nbest"}, want: "9"},
		{name: "sorted keys assigned", cells: []string{"import (\n\t\"maps\"\n\t\"slices\"\n)\nm := map[string]int{\"b\": 2, \"a\": 1}\nks := slices.Sorted(maps.Keys(m))\nks"}, want: "[a b]"},
		{name: "clear map", cells: []string{"m := map[int]int{1: 1}\nclear(m)\nlen(m)"}, want: "0"},
		{name: "slices.Sort", cells: []string{"import \"slices\"\nxs := []float64{3, 1, 2}\nslices.Sort(xs)\nxs"}, want: "[1 2 3]"},
		{name: "slices.Contains native", cells: []string{"import \"slices\"\nslices.Contains([]string{\"a\"}, \"a\")"}, want: "true"},
		{name: "slices.Index native", cells: []string{"import \"slices\"\nslices.Index([]int{5, 6}, 6)"}, want: "1"},
		{name: "slices.Reverse", cells: []string{"import \"slices\"\nxs := []int{1, 2, 3}\nslices.Reverse(xs)\nxs"}, want: "[3 2 1]"},
		{name: "slices.Max", cells: []string{"import \"slices\"\nslices.Max([]int{4, 9, 2}) + 1"}, want: "10"},
		{name: "slices.Max empty", cells: []string{"import \"slices\"\nslices.Max([]int{})"}, errName: "Panic", errHas: "session: slices.Max: empty list"},
		{name: "slices.Min", cells: []string{"import \"slices\"\nslices.Min([]float64{4, 0.5})"}, want: "0.5"},
		{name: "slices.SortFunc", cells: []string{"import \"slices\"\nxs := []string{\"ccc\", \"a\", \"bb\"}\nslices.SortFunc(xs, func(a, b string) int { return len(a) - len(b) })\nxs"}, want: "[a bb ccc]"},
		{name: "slices.Equal", cells: []string{"import \"slices\"\nslices.Equal([]int{1, 2}, []int{1, 2})"}, want: "true"},
		{name: "maps.Keys sorted", cells: []string{"import (\n\t\"maps\"\n\t\"slices\"\n)\nm := map[string]int{\"b\": 2, \"a\": 1}\nslices.Sorted(maps.Keys(m))"}, want: "[a b]"},
		{name: "maps.Values global", cells: []string{"import (\n\t\"maps\"\n\t\"slices\"\n)\nm := map[string]int{\"b\": 2, \"a\": 1}", "slices.Sorted(maps.Values(m))"}, want: "[1 2]"},
		{name: "range maps.Keys", cells: []string{"import \"maps\"\nm := map[string]int{\"k\": 7}\ngot := \"\"\nfor k := range maps.Keys(m) { got += k }\ngot"}, want: "k"},
		{name: "range maps.Values", cells: []string{"import \"maps\"\nm := map[string]int{\"k\": 7}\ngot := 0\nfor v := range maps.Values(m) { got += v }\ngot"}, want: "7"},
		{name: "go statement args evaluated at go time", cells: []string{"ch := make(chan int, 3)\nfor i := 0; i < 3; i++ {\n\tgo func(v int) { ch <- v * v }(i)\n}\n<-ch + <-ch + <-ch"}, want: "5"},
		{name: "go closure variable in loop", cells: []string{"ch := make(chan int, 3)\nwork := func(v int) { ch <- v * v }\nfor i := 0; i < 3; i++ {\n\tgo work(i)\n}\n<-ch + <-ch + <-ch"}, want: "5"},
		{name: "go declared function in loop", cells: []string{"var out = make(chan int, 3)\nfunc cube(v int) { out <- v * v * v }", "for i := range 3 {\n\tgo cube(i)\n}\n<-out + <-out + <-out"}, want: "9"},
		{name: "go compiled function", cells: []string{"import \"sync\"\nvar wg sync.WaitGroup\nwg.Add(1)\ngo wg.Done()\nwg.Wait()\n7"}, want: "7"},
		{name: "go statement variadic", cells: []string{"done := make(chan int)\nsum := func(xs ...int) { t := 0; for _, x := range xs { t += x }; done <- t }\nargs := []int{1, 2, 3}\ngo sum(args...)\n<-done"}, want: "6"},
		{name: "go statement method value", cells: []string{"type acc struct{ ch chan float64 }\nfunc (a acc) send(v float64) { a.ch <- v * 2 }", "a := acc{make(chan float64)}\ngo a.send(2)\n<-a.ch"}, want: "4"},
		{name: "range over function", cells: []string{"func seq(yield func(int) bool) { yield(1) }", "for v := range seq {\n\t_ = v\n}"}, errName: "CompileError", errHas: "range over function is not supported by the interpreter"},
		{name: "range over func literal", cells: []string{"for v := range func(yield func(int) bool) {} {\n\t_ = v\n}"}, errName: "CompileError", errHas: "2:0"[:0] + "range over function"},
		{name: "generic without shim", cells: []string{"import \"slices\"\nslices.Compact([]int{1})"}, errName: "CompileError", errHas: "2:1: slices.Compact is generic and the interpreter cannot run it; supported: slices.Clone"},
	})
}

func TestRedefinition(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "same type again", cells: []string{"type P struct{ X int }", "type P struct{ X int }\nP{X: 1}.X"}, want: "1"},
		{name: "changed type", cells: []string{"type P struct{ X int }", "\ntype P struct{ X, Y int }"}, errName: "CompileError", errHas: "2:6: type P is already declared at line 1 of an earlier cell"},
		{name: "changed type in group", cells: []string{"type (\n\tA int\n\tB string\n)", "type (\n\tA int\n\tB float64\n)"}, errName: "CompileError", errHas: "type B is already declared"},
		{name: "same method again", cells: []string{"type T struct{}\nfunc (t T) M() int { return 1 }", "func (t T) M() int { return 1 }\nT{}.M()"}, want: "1"},
		{name: "changed method", cells: []string{"type T struct{}\nfunc (t T) M() int { return 1 }", "func (t T) M() int { return 2 }"}, errName: "CompileError", errHas: "method T.M is already declared"},
		{name: "changed pointer method", cells: []string{"type T struct{}\nfunc (t *T) M() int { return 1 }", "func (t *T) M() int { return 2 }"}, errName: "CompileError", errHas: "method T.M"},
		{name: "function may change", cells: []string{"func f() int { return 1 }", "func f() int { return 2 }", "f()"}, want: "2"},
	})
}

func TestFinalValue(t *testing.T) {
	runCellTests(t, []cellTest{
		{name: "int expression", cells: []string{"1 + 1"}, want: "2"},
		{name: "string shown as text", cells: []string{"\"hello\""}, want: "hello"},
		{name: "slice", cells: []string{"[]int{1, 2}"}, want: "[1 2]"},
		{name: "struct", cells: []string{"type pt struct{ X, Y int }\npt{1, 2}"}, want: "{1 2}"},
		{name: "float", cells: []string{"a, b := 0.1, 0.2\na + b"}, want: "0.30000000000000004"},
		{name: "fmt.Println not shown", cells: []string{"import \"fmt\"\nfmt.Println(\"hi\")"}, want: "", stdout: "hi\n"},
		{name: "fmt.Printf not shown", cells: []string{"import \"fmt\"\nfmt.Printf(\"%d\\n\", 3)"}, want: "", stdout: "3\n"},
		{name: "aliased fmt not shown", cells: []string{"import f \"fmt\"\nf.Print(\"x\")"}, want: "", stdout: "x"},
		{name: "no-result call not shown", cells: []string{"func nothing() {}\nnothing()"}, want: ""},
		// A no-result call after other statements used to show a value left
		// over from them (mon.Done() after a training loop showed a path).
		{name: "no-result method after statements", cells: []string{"type box struct{ n int }\nfunc (b *box) bump() { b.n++ }", "b := &box{}\nname := \"left over\"\n_ = name\nb.bump()"}, want: ""},
		{name: "no-result closure after statements", cells: []string{"path := \"/tmp/x\"\ndone := func() {}\n_ = path\ndone()"}, want: ""},
		{name: "no-result call after a declaration chunk", cells: []string{"type acc struct{ n int }\nfunc (a *acc) add(k int) { a.n += k }", "a := &acc{}\nvar label = \"left over\"\na.add(2)"}, want: ""},
		{name: "no-result method of a compiled type", cells: []string{"import \"strings\"\nsb := &strings.Builder{}\nsb.Reset()"}, want: ""},
		{name: "no-result compiled function with a closure argument", cells: []string{"import \"sort\"\nxs := []int{3, 1, 2}\nsort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })"}, want: ""},
		{name: "no-result call with a closure argument", cells: []string{"run := func(f func()) { f() }\nname := \"left over\"\nvar n int\nrun(func() { n = len(name) })"}, want: ""},
		{name: "no-result builtin", cells: []string{"m := map[string]int{\"a\": 1}\ndelete(m, \"a\")"}, want: ""},
		{name: "method with a result still shown", cells: []string{"import \"strings\"\nr := strings.NewReplacer(\"a\", \"b\")\nr.Replace(\"aa\")"}, want: "bb"},
		{name: "assignment not shown", cells: []string{"x := 5"}, want: ""},
		{name: "declaration not shown", cells: []string{"var y = 5"}, want: ""},
		{name: "value after declaration", cells: []string{"func two() int { return 2 }\ntwo()"}, want: "2"},
		{name: "first of two results", cells: []string{"import \"strconv\"\nstrconv.Atoi(\"12\")"}, want: "12"},
		{name: "error value", cells: []string{"import \"errors\"\nerrors.New(\"bad thing\")"}, want: "bad thing"},
	})
}

func TestHelpPager(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"strings\"\nfunc twice(n int) int { return 2 * n }")
	tests := []struct {
		code, want string // want: a substring of the page; "" means an error
	}{
		{"?strings.ToUpper", "ToUpper"},
		{"strings.ToUpper?", "func strings.ToUpper(string) string"},
		{"  ? twice  ", "twice"},
		{"?nosuchname", ""},
	}
	for _, tt := range tests {
		res, _ := run(t, s, tt.code)
		if tt.want == "" {
			if res.Err == nil || !strings.Contains(res.Err.Value, "nosuchname") {
				t.Errorf("%q: got %+v, want an error naming the name", tt.code, res)
			}
			continue
		}
		if res.Err != nil || len(res.Pages) != 1 {
			t.Fatalf("%q: got error %v and %d pages, want one page", tt.code, res.Err, len(res.Pages))
		}
		if page, _ := res.Pages[0]["text/plain"].(string); !strings.Contains(page, tt.want) {
			t.Errorf("%q: page %q lacks %q", tt.code, page, tt.want)
		}
	}
	if _, ok := helpRequest("x := a ? b"); ok {
		t.Error(`"x := a ? b" taken for a help request`)
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("GOTRAIN_SESSION_TEST", "from the kernel")
	s := newSession(t)
	if got := mustRun(t, s, "import \"os\"\nos.Getenv(\"GOTRAIN_SESSION_TEST\")"); got != "from the kernel" {
		t.Errorf("os.Getenv in a cell = %q, want the kernel's value %q", got, "from the kernel")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		cell      string
		errName   string
		value     string   // substring of the error value
		traceback []string // substrings the traceback must contain, in order
		absent    string   // when non-empty, the traceback must not contain it
	}{
		{"undefined on line 3", "x := 1\n_ = x\nfmt.Println(nope)", "CompileError", "3:1: undefined: fmt", []string{"3:1", "   3 | fmt.Println(nope)", "| ^"}, ""},
		{"syntax error in second chunk", "import \"fmt\"\n\nfunc f() {\n\tfmt.Println(\n}", "CompileError", "5:1", []string{"5:1"}, ""},
		{"type mismatch column", "var s string\n\ns = 1 + 2", "CompileError", "3:", nil, ""},
		{"panic with line", "func boom() {\n\tpanic(\"bad\")\n}\nboom()", "Panic", "bad (at 2:2)", []string{"panic: bad", "at 2:2 in main.boom", "at 4:1 in cell"}, ""},
		{"runtime panic", "var xs []int\ni := 3\n_ = xs[i]", "Panic", "index out of range", []string{"at 3:"}, ""},
		{"nil map write", "var m map[string]int\nm[\"a\"] = 1", "Panic", "nil map (at 2:", nil, ""},
		// The loop runs inside a function literal the session adds (see
		// scope.go); the traceback shows the panic's own line as the cell's.
		{"panic in a loop", "n := 0\nfor i := range 3 {\n\tif i == 2 {\n\t\tvar m map[string]int\n\t\tm[\"a\"] = 1\n\t}\n\tn++\n}", "Panic", "nil map (at 5:3)", []string{"at 5:3 in cell"}, "main.func"},
		{"panic in a func called from a loop", "func boom(i int) {\n\tif i == 1 {\n\t\tpanic(\"bad\")\n\t}\n}\nfor i := range 2 {\n\tj := i\n\tboom(j)\n}", "Panic", "bad (at 3:3)", []string{"at 3:3 in main.boom", "at 8:2 in cell"}, "main.func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t)
			res, _ := run(t, s, tt.cell)
			if res.Err == nil {
				t.Fatalf("cell %q: no error, want %s", tt.cell, tt.errName)
			}
			if res.Err.Name != tt.errName || !strings.Contains(res.Err.Value, tt.value) {
				t.Fatalf("cell %q: got %s: %q, want %s containing %q", tt.cell, res.Err.Name, res.Err.Value, tt.errName, tt.value)
			}
			tb := strings.Join(res.Err.Traceback, "\n")
			rest := tb
			for _, want := range tt.traceback {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("cell %q: traceback\n%s\nlacks %q", tt.cell, tb, want)
				}
				rest = rest[i+len(want):]
			}
			if tt.absent != "" && strings.Contains(tb, tt.absent) {
				t.Errorf("cell %q: traceback\n%s\nhas %q", tt.cell, tb, tt.absent)
			}
			if got := mustRun(t, s, "1+1"); got != "2" {
				t.Errorf("after error: 1+1 = %q", got)
			}
		})
	}
}

func TestGoroutinePanicSurvives(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"time\"\ngo func() {\n\tpanic(\"in goroutine\")\n}()\ntime.Sleep(50 * time.Millisecond)")
	mustRun(t, s, "func crash(n int) { var m map[int]int; m[n] = n }\ngo crash(3)\ntime.Sleep(50 * time.Millisecond)")
	res, rec := run(t, s, "1 + 1")
	if res.Err != nil || text(res) != "2" {
		t.Fatalf("after goroutine panics: got %+v %q, want 2", res.Err, text(res))
	}
	if strings.Contains(rec.Stderr(), ": panic:") {
		t.Errorf("yaegi's raw panic lines leaked to stderr: %q", rec.Stderr())
	}
}

func TestGoroutinePanicReported(t *testing.T) {
	s := newSession(t)
	res, rec := run(t, s, "import \"time\"\n\ngo func() {\n\tpanic(\"oops\")\n}()\ntime.Sleep(100 * time.Millisecond)")
	if res.Err != nil {
		t.Fatalf("cell failed: %+v", res.Err)
	}
	if want := "panic in goroutine started at line 3: oops"; !strings.Contains(rec.Stderr(), want) {
		t.Errorf("stderr %q lacks %q", rec.Stderr(), want)
	}
}

func TestStreamingFromGoroutine(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"fmt\"\n\t\"log\"\n\t\"time\"\n)\nlog.SetFlags(0)")
	first := make(chan struct{})
	rec := &recorder{}
	var once bool
	rec.onStream = func(name, text string) {
		if !once {
			once = true
			close(first)
		}
	}
	done := make(chan kernel.ExecuteResult, 1)
	go func() {
		done <- s.Execute(context.Background(), kernel.ExecuteRequest{Code: "finished := make(chan bool)\ngo func() {\n\tfmt.Println(\"from goroutine\")\n\tlog.Print(\"to stderr\")\n\tfinished <- true\n}()\n<-finished\ntime.Sleep(300 * time.Millisecond)"}, rec)
	}()
	select {
	case <-first:
	case <-done:
		t.Fatal("cell finished before any output streamed")
	case <-time.After(5 * time.Second):
		t.Fatal("no output streamed")
	}
	select {
	case <-done:
		t.Fatal("output was not streamed live: the cell had already finished")
	default:
	}
	res := <-done
	if res.Err != nil {
		t.Fatalf("cell failed: %+v", res.Err)
	}
	if rec.Stdout() != "from goroutine\n" || rec.Stderr() != "to stderr\n" {
		t.Errorf("got stdout %q stderr %q", rec.Stdout(), rec.Stderr())
	}
}

func TestOutputBetweenCellsGoesToNextCell(t *testing.T) {
	s := newSession(t)
	// The goroutine uses only its function's variables: one that read
	// globals would race with the next cell growing yaegi's global frame.
	mustRun(t, s, "import (\n\t\"fmt\"\n\t\"time\"\n)\nfunc later() (chan bool, chan bool) {\n\trelease, printed := make(chan bool), make(chan bool, 1)\n\tgo func() {\n\t\t<-release\n\t\ttime.Sleep(50 * time.Millisecond)\n\t\tfmt.Println(\"late\")\n\t\tprinted <- true\n\t}()\n\treturn release, printed\n}\nrelease, printed := later()")
	mustRun(t, s, "release <- true")
	// The goroutine prints while no cell runs.
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.router.mu.Lock()
		n := s.router.mu.pending[0].Len()
		s.router.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, rec := run(t, s, "<-printed")
	if rec.Stdout() != "late\n" {
		t.Errorf("next cell's stdout %q, want %q", rec.Stdout(), "late\n")
	}
}

func TestStdin(t *testing.T) {
	s := newSession(t)
	rec := &recorder{inputs: []string{"7 8", "gopher"}}
	res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: "import (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\nvar a, b int\nfmt.Scan(&a, &b)\nr := bufio.NewReader(os.Stdin)\nname, _ := r.ReadString('\\n')\nfmt.Sprint(a+b, \" \", name)", AllowStdin: true}, rec)
	if res.Err != nil {
		t.Fatalf("cell failed: %+v", res.Err)
	}
	if got := text(res); got != "15 gopher\n" {
		t.Errorf("got %q, want %q", got, "15 gopher\n")
	}
}

// displaySymbols exposes the part of package display the tests use, built
// by hand so that the tests do not depend on the generated tables.
var displaySymbols = interp.Exports{
	"github.com/gotrain/gotrain/display/display": {
		"HTML":     reflect.ValueOf(display.HTML),
		"Show":     reflect.ValueOf(display.Show),
		"Bundle":   reflect.ValueOf((*display.Bundle)(nil)),
		"Renderer": reflect.ValueOf((*display.Renderer)(nil)),
	},
}

type htmlValue struct{}

func (htmlValue) Render() display.Bundle {
	return display.Bundle{"text/html": "<b>x</b>", "text/plain": "x"}
}

func TestDisplay(t *testing.T) {
	s, err := New(Options{Symbols: []interp.Exports{displaySymbols, {
		"gotraintest/show/show": {"Value": reflect.ValueOf(func() any { return htmlValue{} })},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, rec := run(t, s, "import (\n\t\"github.com/gotrain/gotrain/display\"\n\t\"gotraintest/show\"\n)\ndisplay.Show(display.HTML(\"<i>hi</i>\"))\nshow.Value()")
	if res.Err != nil {
		t.Fatalf("cell failed: %+v", res.Err)
	}
	if len(rec.displays) != 1 || rec.displays[0]["text/html"] != "<i>hi</i>" {
		t.Errorf("displays %v, want one text/html bundle", rec.displays)
	}
	if res.Value["text/html"] != "<b>x</b>" {
		t.Errorf("final value %v, want the Renderer's bundle", res.Value)
	}
	if got := mustRunValue(t, s, "display.HTML(\"<p>\")"); got["text/html"] != "<p>" {
		t.Errorf("final display.HTML value %v, want its bundle", got)
	}
}

func TestClosed(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, s, "1")
	if res.Err == nil || res.Err.Name != "SessionClosed" {
		t.Errorf("Execute after Close: got %+v, want SessionClosed", res.Err)
	}
	if err := s.Close(); err != ErrClosed {
		t.Errorf("second Close: got %v, want ErrClosed", err)
	}
}

func BenchmarkExecuteOnePlusOne(b *testing.B) {
	s := newSession(b)
	out := &recorder{}
	ctx := context.Background()
	req := kernel.ExecuteRequest{Code: "1+1"}
	b.ReportAllocs()
	for b.Loop() {
		if res := s.Execute(ctx, req, out); res.Err != nil {
			b.Fatal(res.Err.Value)
		}
	}
}
