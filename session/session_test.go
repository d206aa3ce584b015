package session

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/cells/rt"
	"github.com/gotrain/gotrain/kernel"
)

func TestPersistence(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `import "fmt"`)
	mustRun(t, s, "type acc struct{ total, n int }\nfunc (a *acc) add(v int) { a.total += v; a.n++ }\nvar a acc")
	mustRun(t, s, "for i := 1; i <= 4; i++ { a.add(i) }")
	if got := mustRun(t, s, "a.total*10 + a.n"); got != "104" {
		t.Fatalf("a = %q, want 104", got)
	}
	_, rec := run(t, s, `fmt.Printf("%+v %T\n", a, a)`)
	if got := rec.Stdout(); got != "{total:10 n:4} main.acc\n" {
		t.Fatalf("printed %q", got)
	}
}

// TestRedefinitionNotice redefines a function: with its signature, every
// caller runs the new one and nothing is said; with another, earlier
// callers keep the old one and a note on stderr names them (issue 24).
func TestRedefinitionNotice(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"fmt\"\nfunc f() int { return 1 }\ng := func() int { return f() }\nfunc h() int { return f() }")
	res, rec := run(t, s, "func f() int { return 2 }")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if rec.Stderr() != "" {
		t.Errorf("a redefinition with the same signature printed %q, want nothing", rec.Stderr())
	}
	if got := mustRun(t, s, "f()*100 + g()*10 + h()"); got != "222" {
		t.Errorf("f()*100 + g()*10 + h() = %s, want 222: every caller runs the new f", got)
	}
	res, rec = run(t, s, "func f() string { return \"three\" }")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if want := "note: f redefined with another signature: these keep calling the old one: g, h\n"; rec.Stderr() != want {
		t.Errorf("stderr %q, want %q", rec.Stderr(), want)
	}
	if got := mustRun(t, s, "f() + fmt.Sprint(g(), h())"); got != "three2 2" {
		t.Errorf("f() + fmt.Sprint(g(), h()) = %q, want %q", got, "three2 2")
	}
}

func TestFinalValue(t *testing.T) {
	s := newSession(t)
	for _, tt := range []struct{ code, want string }{
		{"1 + 2", "3"},
		{`"text"`, "text"},
		{"x := 4\nx * x", "16"},
		{"func two() (int, int) { return 1, 2 }\ntwo()", ""},
		{"func none() {}\nnone()", ""},
		{"y := 3", ""},
	} {
		if got := mustRun(t, s, tt.code); got != tt.want {
			t.Errorf("%q: value %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "x := 1")
	res, _ := run(t, s, "y := 2\nz := x + \"a\"")
	if res.Err == nil || res.Err.Name != "CompileError" || !strings.Contains(res.Err.Value, "line 2") {
		t.Fatalf("type error: %+v", res.Err)
	}
	res, _ = run(t, s, "var xs []int\nfunc at(i int) int {\n\treturn xs[i]\n}\nat(5)")
	if res.Err == nil || res.Err.Name != "Panic" || !strings.Contains(res.Err.Value, "index out of range [5]") {
		t.Fatalf("panic: %+v", res.Err)
	}
	tb := strings.Join(res.Err.Traceback, "\n")
	if !strings.Contains(tb, "main.at(") || !strings.Contains(tb, "cell:3") || !strings.Contains(tb, "cell:5") {
		t.Errorf("traceback does not show the cell's frames and lines:\n%s", tb)
	}
	// The session survives both.
	if got := mustRun(t, s, "len(xs) + x"); got != "1" {
		t.Errorf("after the errors: %s", got)
	}
}

func TestGoroutinePanicReported(t *testing.T) {
	s := newSession(t)
	// The report comes after the goroutine's own deferred calls, when the
	// cell may have ended: wait for it with stderr still captured.
	reported := make(chan struct{})
	report := rt.GoroutinePanic
	rt.GoroutinePanic = func(v any, stack []byte) { report(v, stack); close(reported) }
	defer func() { rt.GoroutinePanic = report }()
	rec := &recorder{}
	restore := capture(t, &os.Stderr, "stderr", rec)
	res := s.Execute(t.Context(), kernel.ExecuteRequest{Code: "go func() { var m map[string]int; m[\"a\"] = 1 }()"}, rec)
	<-reported
	restore()
	if res.Err != nil {
		t.Fatalf("the cell failed: %+v", res.Err)
	}
	if !strings.Contains(rec.Stderr(), "panic in a goroutine") || !strings.Contains(rec.Stderr(), "assignment to entry in nil map") || !strings.Contains(rec.Stderr(), "cell:1") {
		t.Errorf("goroutine panic not reported with its cell line: %q", rec.Stderr())
	}
	if got := mustRun(t, s, "40 + 2"); got != "42" {
		t.Errorf("after a goroutine panic: %q", got)
	}
}

func TestStdin(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)")
	rec := &recorder{inputs: []string{"ada", "7"}}
	res, _ := runWith(t, s, "sc := bufio.NewScanner(os.Stdin)\nsc.Scan()\nname := sc.Text()\nvar n int\nfmt.Scanln(&n)\nfmt.Println(name, n*6)", rec)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := rec.Stdout(); got != "ada 42\n" {
		t.Errorf("printed %q", got)
	}
}

func TestHelpPager(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `import "strings"`)
	res, _ := run(t, s, "?strings.Fields")
	if res.Err != nil || len(res.Pages) != 1 {
		t.Fatalf("help: %+v", res)
	}
	if p := res.Pages[0]["text/plain"].(string); !strings.Contains(p, "func strings.Fields(s string) []string") || !strings.Contains(p, "white space") {
		t.Errorf("help page: %q", p)
	}
	if res, _ := run(t, s, "?nosuchname"); res.Err == nil || res.Err.Name != "NameError" {
		t.Errorf("help on an unknown name: %+v", res.Err)
	}
}

// statementsRun reports whether the running cell has compiled and runs
// its statements.
func statementsRun(s *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.running != nil && s.mu.running.compiled.Load()
}

// interruptAfter interrupts s once a cell's statements run and d has
// passed.
func interruptAfter(s *Session, d time.Duration, times int) {
	go func() {
		for !statementsRun(s) {
			time.Sleep(time.Millisecond)
		}
		for i := 0; i < times; i++ {
			time.Sleep(d)
			s.Interrupt()
		}
	}()
}

func TestInterrupt(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"time\"\nn := 0\nfunc bump() int { n++; return n }\ncounter := func() func() int { c := 0; return func() int { c++; return c } }()")
	for _, tt := range []struct{ name, code string }{
		{"loop", "for { bump() }"},
		{"recursion", "func spin(k int) int { if k < 0 { return 0 }; return spin(k+1) }\nspin(0)"},
		{"sleep", "time.Sleep(time.Hour)"},
		{"closure loop", "for { counter() }"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			interruptAfter(s, 100*time.Millisecond, 1)
			res, _ := run(t, s, tt.code)
			if res.Err == nil || res.Err.Name != "Interrupted" {
				t.Fatalf("not interrupted: %+v", res.Err)
			}
			before := mustRun(t, s, "n")
			mustRun(t, s, "bump()")
			after := mustRun(t, s, "n")
			if before == after {
				t.Errorf("bump after the interrupt did not change n (%s)", after)
			}
			if c1, c2 := mustRun(t, s, "counter()"), mustRun(t, s, "counter()"); c1 == c2 {
				t.Errorf("the closure of an earlier cell stopped counting: %s, %s", c1, c2)
			}
		})
	}
}

func TestSecondInterruptAbandonsABlockedCell(t *testing.T) {
	s := newSession(t)
	interruptAfter(s, 100*time.Millisecond, 2)
	res, _ := run(t, s, "ch := make(chan int)\n<-ch")
	if res.Err == nil || res.Err.Name != "Interrupted" || !strings.Contains(res.Err.Value, "abandoned") {
		t.Fatalf("blocked cell: %+v", res.Err)
	}
	if got := mustRun(t, s, "cap(ch) + 5"); got != "5" {
		t.Errorf("after abandoning: %q", got)
	}
}

func TestInterruptWhileCompiling(t *testing.T) {
	s := newSession(t)
	go func() {
		for !s.Running() {
			time.Sleep(time.Millisecond)
		}
		s.Interrupt()
	}()
	// A new import makes the compile long enough to interrupt: go list
	// runs first.
	res, _ := run(t, s, "import \"encoding/xml\"\nvar v xml.Name\nv.Local = \"x\"")
	if res.Err == nil || res.Err.Name != "Interrupted" {
		t.Fatalf("not interrupted: %+v", res.Err)
	}
	if got := mustRun(t, s, "1 + 1"); got != "2" {
		t.Errorf("after the interrupted compile: %q", got)
	}
}

func TestClosed(t *testing.T) {
	s := newSession(t)
	s.Close()
	res := s.Execute(t.Context(), kernel.ExecuteRequest{Code: "1"}, &recorder{})
	if res.Err == nil || res.Err.Name != "SessionClosed" {
		t.Fatalf("after Close: %+v", res.Err)
	}
}

func TestUnchangedCellBuildsOnce(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "n := 0")
	before := s.comp.Builds()
	for i := 0; i < 1000; i++ {
		mustRun(t, s, "n++")
	}
	if got := mustRun(t, s, "n"); got != "1000" {
		t.Fatalf("n = %s after 1000 runs, want 1000", got)
	}
	if built := s.comp.Builds() - before; built != 2 {
		t.Errorf("1000 runs of one cell and one of another built %d packages, want 2", built)
	}
}

func TestThirdPartyModule(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches a module through the Go module proxy")
	}
	s := newSession(t)
	if err := s.GoGet("github.com/google/uuid@v1.5.0"); err != nil {
		t.Fatalf("GoGet: %v", err)
	}
	mustRun(t, s, "import \"github.com/google/uuid\"")
	if got := mustRun(t, s, "len(uuid.NewString())"); got != "36" {
		t.Fatalf("len(uuid.NewString()) = %s", got)
	}
	mod, err := os.ReadFile(s.ModuleFile())
	if err != nil || !strings.Contains(string(mod), "github.com/google/uuid v1.5.0") {
		t.Errorf("the session's go.mod: %v %q", err, mod)
	}
}

func TestVersionConflict(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the Go module proxy")
	}
	s := newSession(t)
	err := s.GoGet("gonum.org/v1/gonum@v0.16.0")
	if err == nil || !strings.Contains(err.Error(), "gonum.org/v1/gonum") || !strings.Contains(err.Error(), "v0.17.0") || !strings.Contains(err.Error(), "v0.16.0") {
		t.Fatalf("a downgrade of a module the kernel links: %v, want an error naming it and both versions", err)
	}
	// The session's module is as it was: gonum still imports.
	mustRun(t, s, "import \"gonum.org/v1/gonum/floats\"")
	if got := mustRun(t, s, "floats.Sum([]float64{1, 2, 3.5})"); got != "6.5" {
		t.Errorf("after the refused get: %s", got)
	}
}

// TestSoak runs a handful of cells 10,000 times and prints the heap and
// resident memory after warm-up and at the end.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	s := newSession(t)
	cells := []string{"import \"strings\"\nacc := 0", "acc++", "words := strings.Fields(\"a b c\")\nacc += len(words)", "type pt struct{ x, y int }\np := pt{acc, 2}", "p.x + p.y"}
	for _, c := range cells {
		mustRun(t, s, c)
	}
	measure := func() (heap, rss uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, residentBytes()
	}
	for i := 0; i < 500; i++ {
		mustRun(t, s, cells[1+i%(len(cells)-1)])
	}
	h0, r0 := measure()
	for i := 0; i < 10000; i++ {
		mustRun(t, s, cells[1+i%(len(cells)-1)])
	}
	h1, r1 := measure()
	t.Logf("10,000 executes of %d distinct cells: heap %.1f -> %.1f MiB, resident %.1f -> %.1f MiB", len(cells)-1,
		float64(h0)/(1<<20), float64(h1)/(1<<20), float64(r0)/(1<<20), float64(r1)/(1<<20))
	if h1 > h0+8<<20 {
		t.Errorf("the heap grew by %.1f MiB over 10,000 executes of unchanged cells", float64(h1-h0)/(1<<20))
	}
}

// residentBytes reads this process's resident set size.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// TestInterruptTraining interrupts a training loop built from closures of
// several cells and checks that every closure and the model still work.
func TestInterruptTraining(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"github.com/gotrain/gotrain/data\"\n\t\"github.com/gotrain/gotrain/nn\"\n\t\"github.com/gotrain/gotrain/strategy\"\n)")
	mustRun(t, s, `s := strategy.NewMirrored(strategy.WithReplicas(2))
dist := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(7, 256, 10), data.RandomInts(8, 2, 256)).Batch(64))
var model *nn.Sequential
var opt nn.Optimizer
s.Scope(func() {
	model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
	opt = nn.NewAdam(0.001)
})
lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}`)
	mustRun(t, s, `trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
	loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 64)
	opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
	return loss
}
steps := 0`)
	mustRun(t, s, `epoch := func() float64 {
	var last float64
	for it := dist.Iter(); it.Next(); {
		last = s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch())).Scalar()
		steps++
	}
	return last
}`)
	interruptAfter(s, 300*time.Millisecond, 1)
	res, _ := run(t, s, "for {\n\tepoch()\n}")
	if res.Err == nil || res.Err.Name != "Interrupted" {
		t.Fatalf("training not interrupted: %+v", res.Err)
	}
	before := mustRun(t, s, "steps")
	if loss := mustRun(t, s, "epoch() > 0"); loss != "true" {
		t.Errorf("an epoch after the interrupt: %s", loss)
	}
	if after := mustRun(t, s, "steps"); after == before {
		t.Errorf("steps did not advance after the interrupt (%s)", after)
	}
}

func TestPlotPNG(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches gonum.org/v1/plot through the Go module proxy")
	}
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"bytes\"\n\n\t\"github.com/gotrain/gotrain/display\"\n\t\"gonum.org/v1/plot\"\n\t\"gonum.org/v1/plot/plotter\"\n\t\"gonum.org/v1/plot/vg\"\n)")
	rec := &recorder{}
	res, _ := runWith(t, s, `p := plot.New()
p.Title.Text = "loss"
line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 0.5}, {X: 2, Y: 0.3}})
if err != nil {
	panic(err)
}
p.Add(line)
w, err := p.WriterTo(4*vg.Inch, 3*vg.Inch, "png")
if err != nil {
	panic(err)
}
var buf bytes.Buffer
w.WriteTo(&buf)
display.Show(display.PNG(buf.Bytes()))`, rec)
	if res.Err != nil {
		t.Fatalf("%s: %s\n%s", res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
	}
	if len(rec.displays) != 1 || rec.displays[0]["image/png"] == nil {
		t.Fatalf("displays: %d, want one with image/png", len(rec.displays))
	}
}

// TestDistinctCellCost prints the memory and disk each distinct cell
// costs: a plugin cannot be unloaded, and its archive stays for the cells
// that import it; its .so is deleted once loaded.
func TestDistinctCellCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 40 cells")
	}
	s := newSession(t)
	mustRun(t, s, "import \"fmt\"\nvar sink string")
	for i := 0; i < 5; i++ {
		mustRun(t, s, fmt.Sprintf("sink = fmt.Sprint(%d)", i))
	}
	runtime.GC()
	r0 := residentBytes()
	const n = 40
	for i := 0; i < n; i++ {
		mustRun(t, s, fmt.Sprintf("type t%d struct{ a, b int }\nv%d := t%d{%d, 2}\nsink = fmt.Sprint(v%d)", i, i, i, i, i))
	}
	runtime.GC()
	r1 := residentBytes()
	var disk int64
	var sos int
	filepath.Walk(s.dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			disk += info.Size()
			if strings.HasSuffix(path, ".so") {
				sos++
			}
		}
		return nil
	})
	perCell := float64(r1-r0) / n / (1 << 20)
	t.Logf("%d distinct cells: resident +%.2f MiB per cell; session directory %.1f MiB in all (%.0f KiB per cell), %d .so files left", n, perCell, float64(disk)/(1<<20), float64(disk)/n/1024, sos)
	if sos != 0 {
		t.Errorf("%d plugin files left after loading", sos)
	}
	if perCell > 16 {
		t.Errorf("each distinct cell costs %.1f MiB of resident memory", perCell)
	}
}

// TestGorgoniaInACell imports gorgonia through the proxy: a graph built in
// one cell runs in the next. NewTapeMachine returns an unexported type,
// which a session variable holds without naming it.
func TestGorgoniaInACell(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches and builds gorgonia.org/gorgonia")
	}
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"fmt\"\n\n\tG \"gorgonia.org/gorgonia\"\n)")
	mustRun(t, s, "g := G.NewGraph()\nx := G.NewScalar(g, G.Float64, G.WithName(\"x\"))\ny := G.Must(G.Mul(x, x))\nvm := G.NewTapeMachine(g)")
	_, rec := run(t, s, "G.Let(x, 3.0)\nif err := vm.RunAll(); err != nil {\n\tpanic(err)\n}\nfmt.Println(y.Value())\nvm.Reset()")
	if got := rec.Stdout(); got != "9\n" {
		t.Fatalf("x*x at 3 printed %q, want 9", got)
	}
}

// TestIssue35GoroutinePanicNamesCellAndLine checks that a goroutine's
// panic names the cell and line of its innermost frame in cell code (a
// function an earlier cell declared) and where the goroutine started.
func TestIssue35GoroutinePanicNamesCellAndLine(t *testing.T) {
	s := newSession(t)
	reported := make(chan struct{})
	report := rt.GoroutinePanic
	rt.GoroutinePanic = func(v any, stack []byte) { report(v, stack); close(reported) }
	defer func() { rt.GoroutinePanic = report }()
	exec := func(n int, code string, rec *recorder) {
		t.Helper()
		if res := s.Execute(t.Context(), kernel.ExecuteRequest{Code: code, ExecutionCount: n}, rec); res.Err != nil {
			t.Fatalf("cell [%d]: %+v", n, res.Err)
		}
	}
	exec(6, "import \"time\"\nfunc boom(n int) {\n\tif n > 0 {\n\t\tpanic(\"late boom\")\n\t}\n}", &recorder{})
	rec := &recorder{}
	restore := capture(t, &os.Stderr, "stderr", rec)
	exec(7, "x := 1\ngo func() {\n\ttime.Sleep(10 * time.Millisecond)\n\tboom(x)\n}()", rec)
	<-reported
	restore()
	want := "panic in a goroutine (it ended; the session goes on): late boom\n  at cell [6], line 4 (in main.boom); the goroutine was started at cell [7], line 2\n"
	if got := rec.Stderr(); !strings.HasPrefix(got, want) {
		t.Errorf("the note says\n%s\nwant it to start\n%s", got, want)
	}
}

// TestParseStack checks the frames read from a goroutine's stack: cell
// code's package and line, a library frame, and the goroutine's creator.
func TestParseStack(t *testing.T) {
	stack := "goroutine 61 [running]:\n" +
		"runtime/debug.Stack()\n\t$GOROOT/src/runtime/debug/stack.go:26 +0x5e\n" +
		"panic({0xab8c00?, 0x7fc59f28cda8?})\n\t$GOROOT/src/runtime/panic.go:860 +0x14a\n" +
		"gotrain.cells/c6.boom(0x989680?)\n\tcell:4 +0x77\n" +
		"gotrain.cells/c7._gtcell.func1(...)\n\tcell:3\n" +
		"created by gotrain.cells/c7._gtcell in goroutine 79\n\tcell:2 +0x45\n"
	want := []stackFrame{
		{fn: "runtime/debug.Stack()", file: "$GOROOT/src/runtime/debug/stack.go:26", line: 26},
		{fn: "panic({0xab8c00?, 0x7fc59f28cda8?})", file: "$GOROOT/src/runtime/panic.go:860", line: 860},
		{fn: "gotrain.cells/c6.boom(0x989680?)", file: "cell:4", cell: "gotrain.cells/c6", line: 4},
		{fn: "gotrain.cells/c7._gtcell.func1(...)", file: "cell:3", cell: "gotrain.cells/c7", line: 3},
		{fn: "created by gotrain.cells/c7._gtcell in goroutine 79", file: "cell:2", cell: "gotrain.cells/c7", line: 2},
	}
	got := parseStack([]byte(stack))
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := got[2].name(); n != "main.boom(0x989680?)" {
		t.Errorf("frame 2 is named %q, want main.boom(0x989680?)", n)
	}
}
