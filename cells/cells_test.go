package cells_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"runtime/debug"

	"github.com/gotrain/gotrain/cells"
)

var (
	tcOnce sync.Once
	tc     *cells.Toolchain
	tcErr  error
)

func toolchain(t testing.TB) *cells.Toolchain {
	t.Helper()
	tcOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cells-test-mod-")
		if err != nil {
			tcErr = err
			return
		}
		tc, tcErr = cells.NewToolchain(cells.ToolchainConfig{ModuleDir: dir})
	})
	if tcErr != nil {
		t.Fatal(tcErr)
	}
	return tc
}

// session runs cells in order and returns what each printed to stdout.
type session struct {
	t testing.TB
	c *cells.Compiler
}

func newSession(t testing.TB) *session {
	c, err := cells.New(cells.Config{Dir: filepath.Join(t.TempDir(), "s"), Toolchain: toolchain(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &session{t, c}
}

// run compiles and runs one cell, returning its stdout and its error.
func (s *session) run(code string) (string, error) {
	s.t.Helper()
	cell, err := s.c.Compile(context.Background(), code)
	if err != nil {
		return "", err
	}
	r, w, _ := os.Pipe()
	old := os.Stdout
	os.Stdout = w
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		close(done)
	}()
	var perr any
	func() {
		defer func() { perr = recover() }()
		cell.Run()
	}()
	os.Stdout = old
	w.Close()
	<-done
	if perr != nil {
		return out.String(), fmt.Errorf("panic: %v", perr)
	}
	return out.String(), nil
}

// sessionCell is one cell of a table-driven session: what it prints, the
// notes it compiles with, or, when err is set, a substring of the error
// it is refused with.
type sessionCell struct {
	code, out string
	notes     []string
	err       string
}

// runCells compiles and runs cells in a fresh session, checking each one's
// notes and output or its error; check, when not nil, looks at each cell
// compiled.
func runCells(t *testing.T, cs []sessionCell, check func(i int, cell *cells.Cell)) {
	t.Helper()
	s := newSession(t)
	for i, c := range cs {
		cell, err := s.c.Compile(context.Background(), c.code)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("cell %d %q: error %v, want one with %q", i+1, c.code, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cell %d %q: %v", i+1, c.code, err)
		}
		if strings.Join(cell.Notices, "\n") != strings.Join(c.notes, "\n") {
			t.Errorf("cell %d %q: notes\n%q, want\n%q", i+1, c.code, cell.Notices, c.notes)
		}
		if check != nil {
			check(i, cell)
		}
		s.want(c.code, c.out)
	}
}

func (s *session) want(code, want string) {
	s.t.Helper()
	got, err := s.run(code)
	if err != nil {
		s.t.Fatalf("cell %q: %v", code, err)
	}
	if got != want {
		s.t.Fatalf("cell %q printed %q, want %q", code, got, want)
	}
}

func TestSpike(t *testing.T) {
	s := newSession(t)
	s.want(`import "fmt"`, "")
	s.want(`type point struct{ x, y int }
func (p point) String() string { return fmt.Sprintf("(%d,%d)", p.x, p.y) }
func (p *point) move(dx int) { p.x += dx }
p := point{1, 2}
fmt.Println(p)`, "(1,2)\n")
	s.want(`p.move(3)
q := point{x: 5}
fmt.Printf("%v %+v %T %d\n", p, []point{p, q}, q, p.x+q.y)`, "(4,2) [(4,2) (5,0)] main.point 4\n")
	s.want(`type shape interface{ area() float64 }
type sq struct{ s float64 }
func (q sq) area() float64 { return q.s * q.s }
var sh shape = sq{3}
fmt.Println(sh.area())`, "9\n")
	s.want(`type circle struct{ r float64 }
func (c circle) area() float64 { return 3 * c.r * c.r }
shapes := []shape{sq{2}, circle{1}, &circle{2}}
for _, x := range shapes { fmt.Println(x.area()) }`, "4\n3\n12\n")
	s.want(`func fib(n int) int { if n < 2 { return n }; return fib(n-1) + fib(n-2) }
fmt.Println(fib(20))`, "6765\n")
	s.want(`for i := 0; i < 3; i++ { defer fmt.Print(i, " ") }`, "2 1 0 ")
	s.want(`fmt.Println(fib(10), p.x, len(shapes))`, "55 4 3\n")
}

func TestPanicLine(t *testing.T) {
	s := newSession(t)
	cell, err := s.c.Compile(context.Background(), "var xs []int\n\nfunc at(i int) int {\n\treturn xs[i]\n}\nat(3)\n")
	if err != nil {
		t.Fatal(err)
	}
	var stack string
	func() {
		defer func() {
			recover()
			stack = string(debugStack())
		}()
		cell.Run()
	}()
	if !strings.Contains(stack, "cell:4") || !strings.Contains(stack, "cell:6") {
		t.Fatalf("stack does not name cell lines 4 and 6:\n%s\n%s", stack, cell.Source())
	}
}
func debugStack() []byte { return debug.Stack() }

func TestRefusedWithAReason(t *testing.T) {
	s := newSession(t)
	for _, tt := range []struct{ code, want string }{
		{"import \"C\"", "cells are compiled without cgo"},
		{"import \"no.such/module/pkg\"", "no.such/module/pkg"},
		{"import \"fmt\"\ntype T int\n", ""},
	} {
		_, err := s.run(tt.code)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.code, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: error %v, want one containing %q", tt.code, err, tt.want)
		}
	}
}

// TestPromotedLoopVariables checks that a top-level loop's accumulators,
// kept in locals, are up to date after every statement: when the loop
// panics, when a function of the cell reads them meanwhile, and in later
// cells.
func TestPromotedLoopVariables(t *testing.T) {
	s := newSession(t)
	s.want(`import "fmt"`, "")
	loop := "sum := 0\nfor i := 0; i < 1000; i++ {\n\tsum += i\n}\nfmt.Println(sum)"
	if cell, err := s.c.Compile(context.Background(), loop); err != nil || !strings.Contains(cell.Source(), "_gtp_sum") {
		t.Fatalf("sum is not kept in a local: %v", err)
	}
	s.want(loop, "499500\n")
	s.want("fmt.Println(sum)", "499500\n")
	// A panic in the middle of an iteration: the update before it counts.
	if _, err := s.run("n := 0\nvar xs []int\nfunc peek() int { return n }\nseen := 0\nfor i := 0; i < 10; i++ {\n\tn++\n\tseen = peek()\n\tif i == 4 {\n\t\t_ = xs[i]\n\t}\n}"); err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("the loop did not panic: %v", err)
	}
	s.want("fmt.Println(n, seen)", "5 5\n")
	// A function of the cell that writes the variable keeps it in memory.
	s.want("m := 0\nfunc bump() { m += 10 }\nfor i := 0; i < 3; i++ {\n\tm++\n\tbump()\n}\nfmt.Println(m)", "33\n")
	// Written in a loop's post statement: not promoted, still right.
	s.want("k := 0\nfor k = 0; k < 5; k++ {\n}\nfmt.Println(k)", "5\n")
}

// TestMethodInALaterCell adds methods to an earlier cell's type: the type
// is declared again with all its methods; a value made before keeps the
// old type, and a cell that uses it is refused, in the cell that adds the
// method already (issue 30).
func TestMethodInALaterCell(t *testing.T) {
	s := newSession(t)
	s.want("import \"fmt\"\ntype point struct{ x, y int }\nfunc (p point) sum() int { return p.x + p.y }\nold := point{1, 2}", "")
	s.want("func (p point) String() string { return fmt.Sprintf(\"(%d,%d)\", p.x, p.y) }\nfmt.Println(point{3, 4}, point{3, 4}.sum())", "(3,4) 7\n")
	s.want("func (p *point) scale(k int) { p.x *= k; p.y *= k }\nq := point{1, 1}\nq.scale(5)\nfmt.Println(q, q.sum())", "(5,5) 10\n")
	for _, code := range []string{"fmt.Printf(\"%v %T\\n\", old, old)", "func (p point) half() point { return point{p.x / 2, p.y / 2} }\nfmt.Println(old.sum())"} {
		if _, err := s.run(code); err == nil || !strings.Contains(err.Error(), "old keeps the old point") {
			t.Errorf("cell %q: error %v, want old refused", code, err)
		}
	}
	s.want("old := point{1, 2}\nfmt.Println(old, old.sum())", "(1,2) 3\n")
}

// TestDefineFromAMethodOfACall is a top-level define whose value is a
// method called on a call's result (the compiler once panicked on it).
func TestDefineFromAMethodOfACall(t *testing.T) {
	s := newSession(t)
	s.want("import (\n\t\"fmt\"\n\t\"strings\"\n)\nr := strings.NewReplacer(\"a\", \"b\").Replace(\"abc\")\nfmt.Println(r)", "bbc\n")
}

// TestLinkFallsBackFromGold links a cell through a C compiler that
// refuses gold: the cell still links, with GNU ld, and the session keeps
// to GNU ld after it.
func TestLinkFallsBackFromGold(t *testing.T) {
	cc := filepath.Join(t.TempDir(), "cc")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = -fuse-ld=gold ] && { echo 'cc: no gold here' >&2; exit 1; }; done\nexec gcc \"$@\"\n"
	if err := os.WriteFile(cc, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", cc) // the C compiler the toolchain links with, as go env CC says
	tc, err := cells.NewToolchain(cells.ToolchainConfig{ModuleDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cells.SetGold(tc, true)
	c, err := cells.New(cells.Config{Dir: filepath.Join(t.TempDir(), "s"), Toolchain: tc})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t, c}
	if out, err := s.run(`println("linked")`); err != nil {
		t.Fatalf("cell: %v (output %q)", err, out)
	}
	if cells.Gold(tc) {
		t.Error("the toolchain still links with gold after gold was refused")
	}
}

// TestViewImportsClash declares, in consecutive cells, whose views share a
// file when they can, variables whose types come from two packages imported
// under one name; a later cell uses both.
func TestViewImportsClash(t *testing.T) {
	s := newSession(t)
	s.want("import (\n\t\"fmt\"\n\t\"math/rand\"\n)\nr1 := rand.New(rand.NewSource(1))", "")
	s.want("import rand \"math/rand/v2\"\nr2 := rand.New(rand.NewPCG(1, 2))", "")
	s.want("func both() (*rand.Rand, int) { return r2, r1.Intn(10) }", "")
	s.want("a, b := both()\nfmt.Println(a == r2, b >= 0, r2.IntN(10) < 10)", "true true true\n")
}
