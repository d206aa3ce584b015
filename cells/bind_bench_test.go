package cells_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/cells/rt"
)

// fibs are the fib(25) row of docs/benchmarks.md's table
// (scripts/cells_bench.py): fib declared in one cell, called from another;
// as a function, and as a method, which hands over to a later definition
// as a function does (issue 30).
var fibs = []struct{ name, decl, loop string }{
	{"func", "func fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n\treturn fib(n-1) + fib(n-2)\n}\n",
		"start := time.Now()\nr := 0\nfor k := 0; k < 20; k++ {\n\tr += fib(25)\n}\n"},
	{"method", "type F struct{}\n\nfunc (f F) fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n\treturn f.fib(n-1) + f.fib(n-2)\n}\n",
		"start := time.Now()\nr := 0\nfor k := 0; k < 20; k++ {\n\tr += F{}.fib(25)\n}\n"},
}

// BenchmarkIssue24FibAcrossCells times fib(25) declared in one cell and
// called from another, and the same code built by `go build`, alternating
// them; it reports the cells' time per fib(25), go build's, and their
// ratio. A call from another cell goes through fib's slot; fib's recursive
// calls, in its own cell, are direct, after the check at its entry that
// hands over to a later definition.
func BenchmarkIssue24FibAcrossCells(b *testing.B) {
	for _, f := range fibs {
		b.Run(f.name, func(b *testing.B) { benchFib(b, f.decl, f.loop) })
	}
}

func benchFib(b *testing.B, fibDecl, fibLoop string) {
	s := newSession(b)
	for _, code := range []string{"import (\n\t\"fmt\"\n\t\"time\"\n)\nvar _ = fmt.Sprint", fibDecl} {
		c, err := s.c.Compile(context.Background(), code)
		if err != nil {
			b.Fatal(err)
		}
		c.Run()
	}
	cell, err := s.c.Compile(context.Background(), fibLoop+"time.Since(start)")
	if err != nil {
		b.Fatal(err)
	}
	prog := buildFib(b, fibDecl, fibLoop)
	var inCells, native []float64
	for b.Loop() {
		cell.Run()
		v, _ := rt.TakeResult()
		inCells = append(inCells, float64(v.(time.Duration))/20)
		out, err := exec.Command(prog).Output()
		if err != nil {
			b.Fatal(err)
		}
		ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatal(err)
		}
		native = append(native, ns/20)
	}
	c, n := median(inCells), median(native)
	b.ReportMetric(c, "ns/fib-cell")
	b.ReportMetric(n, "ns/fib-gobuild")
	b.ReportMetric(c/n, "ratio")
}

// buildFib builds the program the cells make, with this test binary's race
// setting, and returns its path; it prints the time of 20 fib(25) in ns.
func buildFib(b *testing.B, fibDecl, fibLoop string) string {
	dir := b.TempDir()
	body := strings.ReplaceAll(strings.TrimSpace(fibLoop), "\n", "\n\t")
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\n" + fibDecl + "\nfunc main() {\n\t" + body + "\n\t_ = r\n\tfmt.Println(time.Since(start).Nanoseconds())\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	args := []string{"build", "-o", "fib"}
	if raceBuild() {
		args = append(args, "-race")
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append(args, "main.go")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "fib")
}

// raceBuild reports whether this test binary was built with -race.
func raceBuild() bool {
	bi, _ := debug.ReadBuildInfo()
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
