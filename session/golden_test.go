package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenCells runs each notebook in testdata/cells through a fresh
// session. The files hold Go cells but end in .cell, not .go: a cell mixes
// imports and statements, which is not a Go file, and gofmt -l would
// report every one of them. A line "// cell" starts a new cell; the file ends with an
// "// Output:" comment holding, in order, what the cells printed, each
// final value, and each error as "Name: value".
func TestGoldenCells(t *testing.T) {
	files, err := filepath.Glob("testdata/cells/*.cell")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cells: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".cell"), func(t *testing.T) {
			if raceEnabled && strings.HasSuffix(file, "goroutines.cell") {
				// Each plugin links its own copy of the race runtime, so
				// the detector does not see cells synchronizing their
				// goroutines (a WaitGroup, a channel close after it) and
				// reports races that are not there.
				t.Skip("cells that synchronize goroutines are not checked under -race")
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			body, wantText, ok := strings.Cut(string(src), "// Output:\n")
			if !ok {
				t.Fatalf("%s has no // Output: comment", file)
			}
			var want strings.Builder
			for _, l := range strings.Split(strings.TrimRight(wantText, "\n"), "\n") {
				want.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "//"), " ") + "\n")
			}
			s := newSession(t)
			var got strings.Builder
			for _, cell := range strings.Split(body, "// cell\n") {
				res, rec := run(t, s, cell)
				got.WriteString(rec.Stdout())
				got.WriteString(rec.Stderr())
				if res.Err != nil {
					got.WriteString(res.Err.Name + ": " + res.Err.Value + "\n")
				} else if v := text(res); v != "" {
					got.WriteString(v + "\n")
				}
			}
			if got.String() != want.String() {
				t.Errorf("%s:\ngot:\n%s\nwant:\n%s", file, got.String(), want.String())
			}
		})
	}
}
