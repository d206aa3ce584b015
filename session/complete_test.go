package session

import (
	"slices"
	"strings"
	"testing"
)

func TestComplete(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"fmt\"\n\t\"strings\"\n\t\"time\"\n)\ntotalLoss := 1.5\ntype config struct{ Epochs int }\nfunc trainStep() {}\nvar sb strings.Builder\nvar ticker = time.NewTimer(time.Hour)")
	tests := []struct {
		name       string
		code       string
		cursor     int // -1: end of code
		want       []string
		notWant    []string
		start, end int
	}{
		{"user globals", "tot", -1, []string{"totalLoss"}, nil, 0, 3},
		{"user func", "x := train", -1, []string{"trainStep"}, nil, 5, 10},
		{"keyword", "fo", -1, []string{"for"}, nil, 0, 2},
		{"builtin", "ap", -1, []string{"append"}, nil, 0, 2},
		{"imported package name", "str", -1, []string{"strings"}, nil, 0, 3},
		{"package member", "fmt.Print", -1, []string{"Printf", "Println"}, []string{"Errorf"}, 4, 9},
		{"package member empty prefix", "strings.", -1, []string{"ToUpper", "Builder"}, nil, 8, 8},
		{"method of a global", "sb.Wr", -1, []string{"WriteString"}, nil, 3, 5},
		{"method of a pointer global", "ticker.St", -1, []string{"Stop"}, nil, 7, 9},
		{"cursor inside", "fmt.Pri(x)", 7, []string{"Println"}, nil, 4, 7},
		{"runes before cursor", "s := \"héllo\"; tot", -1, []string{"totalLoss"}, nil, 14, 17},
		{"hidden helpers", "_gotrain", -1, nil, []string{"_gotrain_min"}, 0, 8},
		{"declared above in the same code", "zebraCount := 3\nzebraC", -1, []string{"zebraCount"}, nil, 16, 22},
		{"declared by var, func and a, b :=", "var alphaRate float64\nfunc alphaStep() {}\nalphaX, alphaY := 1, 2\nalpha", -1, []string{"alphaRate", "alphaStep", "alphaX", "alphaY"}, nil, 65, 70},
		{"assignment is not a declaration", "alphaZ = 3\nalpha", -1, nil, []string{"alphaZ"}, 11, 16},
		{"selector is not a declaration", "cfg.alphaW := 3\nalpha", -1, nil, []string{"alphaW"}, 16, 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cursor := tt.cursor
			if cursor < 0 {
				cursor = len([]rune(tt.code))
			}
			got := s.Complete(tt.code, cursor)
			for _, w := range tt.want {
				if !slices.Contains(got.Matches, w) {
					t.Errorf("Complete(%q, %d) = %v, missing %q", tt.code, cursor, got.Matches, w)
				}
			}
			for _, w := range tt.notWant {
				if slices.Contains(got.Matches, w) {
					t.Errorf("Complete(%q, %d) = %v, must not offer %q", tt.code, cursor, got.Matches, w)
				}
			}
			if got.CursorStart != tt.start || got.CursorEnd != tt.end {
				t.Errorf("Complete(%q, %d): cursor %d..%d, want %d..%d", tt.code, cursor, got.CursorStart, got.CursorEnd, tt.start, tt.end)
			}
		})
	}
}

func TestInspect(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import (\n\t\"strings\"\n\t\"time\"\n)\nepochs := 12\nfunc loss(x float64) float64 { return x * x }\nvar sb strings.Builder\nvar ticker = time.NewTimer(time.Hour)")
	tests := []struct {
		name   string
		code   string
		cursor int
		found  bool
		has    []string
	}{
		{"stdlib function", "strings.ToUpper(\"x\")", 10, true, []string{"func strings.ToUpper(s string) string"}},
		{"stdlib type", "var d time.Duration", 12, true, []string{"type time.Duration int64", "A Duration represents"}},
		{"stdlib constant", "time.Second", 6, true, []string{"const time.Second time.Duration", "Common durations"}},
		{"user variable", "epochs + 1", 2, true, []string{"var epochs int"}},
		{"user function", "loss(2)", 1, true, []string{"func loss(x float64) float64"}},
		{"method of a global", "sb.WriteString", 5, true, []string{"func (*strings.Builder).WriteString(s string) (int, error)"}},
		{"method of a pointer global", "ticker.Stop", 8, true, []string{"func (*time.Timer).Stop() bool"}},
		{"package name", "strings.Fields", 3, true, []string{"package strings", "Package strings implements"}},
		{"builtin", "len(x)", 1, true, []string{"builtin len"}},
		{"nothing", "   ", 1, false, nil},
		{"unknown", "nosuchname", 3, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Inspect(tt.code, tt.cursor, 0)
			if got.Found != tt.found {
				t.Fatalf("Inspect(%q, %d).Found = %v, want %v (%v)", tt.code, tt.cursor, got.Found, tt.found, got.Data)
			}
			plain, _ := got.Data["text/plain"].(string)
			for _, h := range tt.has {
				if !strings.Contains(plain, h) {
					t.Errorf("Inspect(%q, %d) = %q, lacks %q", tt.code, tt.cursor, plain, h)
				}
			}
		})
	}
}

func TestIsComplete(t *testing.T) {
	s := newSession(t)
	tests := []struct {
		code   string
		status string
		indent string
	}{
		{"", "complete", ""},
		{"x := 1", "complete", ""},
		{"import \"fmt\"\nfmt.Println(1)", "complete", ""},
		{"func f() {", "incomplete", "\t"},
		{"for i := 0; i < 3; i++ {\n\tif i > 1 {", "incomplete", "\t\t"},
		{"fmt.Println(1,", "incomplete", "\t"},
		{"x := 1 +", "incomplete", ""},
		{"s := `raw", "incomplete", ""},
		{"/* comment", "incomplete", ""},
		{"x := 1)", "invalid", ""},
		{"x := \"unterminated", "invalid", ""},
		{"x := := 2", "invalid", ""},
		{"func f() {}\n}", "invalid", ""},
	}
	for _, tt := range tests {
		got := s.IsComplete(tt.code)
		if got.Status != tt.status || got.Indent != tt.indent {
			t.Errorf("IsComplete(%q) = %q %q, want %q %q", tt.code, got.Status, got.Indent, tt.status, tt.indent)
		}
	}
}
