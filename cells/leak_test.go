package cells_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/cells"
)

// TestIssue24FailingCellsKeepNothing compiles cells that fail, and asks
// completions, after a warm-up, and checks that the live heap grows by
// less than 1 KB for each. Every check once added what it parsed and
// imported to a session-long file set, whose file names held on to the
// imported packages' whole export data: 67 KB a cell with fmt imported,
// 414 KB with gotrain's packages.
func TestIssue24FailingCellsKeepNothing(t *testing.T) {
	const warm, n, perCell = 20, 300, 1 << 10
	s := newSession(t)
	s.want("import (\n\t\"fmt\"\n\t\"strings\"\n)\ntype point struct{ x, y int }\nfunc norm(p point) int { return p.x*p.x + p.y*p.y }\nx := 1\n_ = strings.Fields", "")
	fail := func(code, want string) func(t *testing.T, i int) {
		return func(t *testing.T, i int) {
			_, err := s.c.Compile(context.Background(), fmt.Sprintf(code, i))
			var list cells.ErrorList
			if !errors.As(err, &list) || !strings.Contains(err.Error(), want) {
				t.Fatalf("cell %q: error %v, want a cells.ErrorList containing %q", fmt.Sprintf(code, i), err, want)
			}
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, i int)
	}{
		{"type error", fail("y%d := x + \"a\"\nfmt.Println(y%[1]d)", "mismatched types")},
		{"undefined name", fail("z%d := norm(point{}) + missing", "undefined: missing")},
		{"error in a function body", fail("func f%d() int { return strings.ToUpper(\"a\") }", "cannot use")},
		{"syntax error", fail("w%d := ((", "expected")},
		{"completion", func(t *testing.T, i int) {
			code := fmt.Sprintf("v%d := strings.Fi", i)
			if m, _, _ := s.c.Complete(code, len(code)); len(m) == 0 {
				t.Fatalf("no completion of %q", code)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range warm {
				tt.run(t, i)
			}
			before := liveHeap()
			for i := range n {
				tt.run(t, warm+i)
			}
			grew := int64(liveHeap()) - int64(before)
			t.Logf("live heap: %+d bytes a cell", grew/n)
			if grew > n*perCell {
				t.Errorf("%d cells grew the live heap by %d bytes, %d a cell; want less than %d", n, grew, grew/n, perCell)
			}
		})
	}
}

// liveHeap returns the bytes of live heap objects, after a collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
