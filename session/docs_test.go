package session

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// haveGoSource reports whether the standard library's source is where the
// session looks for it; stdlib doc tests skip without it.
func haveGoSource(t *testing.T) {
	t.Helper()
	root := os.Getenv("GOROOT")
	if root == "" {
		root = runtime.GOROOT()
	}
	if _, err := os.Stat(filepath.Join(root, "src", "strings", "strings.go")); err != nil {
		t.Skipf("no standard library source: %v", err)
	}
}

func TestInspectDocs(t *testing.T) {
	haveGoSource(t)
	s := newSession(t)
	mustRun(t, s, `import (
	"net/url"
	"strings"
	"time"
)
// scale doubles x, because the loss is
// reported per pair.
func scale(x float64) float64 { return 2 * x }
func bare() int { return 1 }

// Rate is the learning rate.
var Rate = 0.1
var sb strings.Builder
var d time.Duration
var tm = time.NewTimer(time.Hour)
var u url.URL`)
	tests := []struct {
		name    string
		code    string
		sig     string // the plain text starts with it
		doc     string // the plain text has it after a blank line; "" means no doc at all
		notHave string
	}{
		{"stdlib function", "strings.ToUpper", "func strings.ToUpper(s string) string", "ToUpper returns s with all Unicode letters mapped to their upper case", ""},
		{"stdlib type", "time.Duration", "type time.Duration int64", "A Duration represents the elapsed time between two instants", ""},
		{"stdlib grouped constant", "time.Second", "const time.Second", "Common durations.", ""},
		{"stdlib method of a global", "sb.WriteString", "func (*strings.Builder).WriteString", "WriteString appends the contents of s to b's buffer", ""},
		{"stdlib method of a pointer global", "tm.Stop", "func (*time.Timer).Stop() bool", "Stop prevents the Timer from firing", ""},
		{"stdlib field of a global", "u.Opaque", "field Opaque string", "encoded opaque data", ""},
		{"method of a value", "d.Hours", "func (time.Duration).Hours() float64", "Hours returns the duration as a floating point number of hours.", ""},
		{"package", "strings", "package strings", "Package strings implements simple functions", "\n\n\n"},
		{"builtin", "len", "builtin len", "The len built-in function returns the length of v", ""},
		{"user func with a comment", "scale", "func scale(x float64) float64", "scale doubles x, because the loss is reported per pair.", ""},
		{"user var with a comment", "Rate", "var Rate float64", "Rate is the learning rate.", ""},
		{"user func without doc", "bare", "func bare() int", "", ""},
		{"user var without doc", "sb", "var sb strings.Builder", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Inspect(tt.code, len(tt.code), 0)
			if !got.Found {
				t.Fatalf("Inspect(%q): not found", tt.code)
			}
			plain, _ := got.Data["text/plain"].(string)
			md, _ := got.Data["text/markdown"].(string)
			if !strings.HasPrefix(plain, tt.sig) {
				t.Errorf("Inspect(%q) = %q, want it to start with %q", tt.code, plain, tt.sig)
			}
			sig, docText, hasDoc := strings.Cut(plain, "\n\n")
			switch {
			case tt.doc == "" && hasDoc:
				t.Errorf("Inspect(%q) = %q, want no doc", tt.code, plain)
			case tt.doc != "" && !strings.Contains(docText, tt.doc):
				t.Errorf("Inspect(%q) doc = %q, want it to contain %q", tt.code, docText, tt.doc)
			}
			if tt.notHave != "" && strings.Contains(plain, tt.notHave) {
				t.Errorf("Inspect(%q) = %q, must not contain %q", tt.code, plain, tt.notHave)
			}
			wantMD := "```go\n" + sig + "\n```"
			if hasDoc {
				wantMD += "\n\n" + docText
			}
			if md != wantMD {
				t.Errorf("Inspect(%q) markdown = %q, want %q", tt.code, md, wantMD)
			}
		})
	}
}

func TestHelpShowsDoc(t *testing.T) {
	haveGoSource(t)
	s := newSession(t)
	mustRun(t, s, "import \"strings\"")
	res, _ := run(t, s, "?strings.ToUpper")
	if res.Err != nil || len(res.Pages) != 1 {
		t.Fatalf("?strings.ToUpper = %+v, want one page", res)
	}
	plain, _ := res.Pages[0]["text/plain"].(string)
	if !strings.Contains(plain, "func strings.ToUpper(s string) string\n\nToUpper returns s") {
		t.Errorf("?strings.ToUpper page = %q, want the signature, a blank line and the doc", plain)
	}
}

func TestPackageDocs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go": `// Package demo shows keys.
package demo

// Op says how to combine.
type Op int

const (
	// Sum adds.
	Sum Op = iota
	Mean // Mean averages.
	hidden
)

// Apply combines xs.
func (o Op) Apply(xs []float64) float64 { return 0 }

// Config configures.
type Config struct {
	// Width is in columns.
	Width int
	Depth int // Depth is in layers.
	Plain int
	inner int // inner is unexported.
}

// New returns an Op.
func New() Op { return Sum }

func undocumented() {}
`,
		"a_test.go":  "package demo\n\n// Test is not part of the package.\nfunc Test() {}\n",
		"gen.go":     "//go:build ignore\n\npackage main\n\n// Main is a generator.\nfunc Main() {}\n",
		"README.txt": "not Go",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PackageDocs(dir, "example.com/demo")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"example.com/demo":              "Package demo shows keys.",
		"example.com/demo.Op":           "Op says how to combine.",
		"example.com/demo.Sum":          "Sum adds.",
		"example.com/demo.Mean":         "Mean averages.",
		"example.com/demo.Op.Apply":     "Apply combines xs.",
		"example.com/demo.New":          "New returns an Op.",
		"example.com/demo.Config":       "Config configures.",
		"example.com/demo.Config.Width": "Width is in columns.",
		"example.com/demo.Config.Depth": "Depth is in layers.",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("PackageDocs()[%q] = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("PackageDocs() has %d keys, want %d: %v", len(got), len(want), got)
	}
	if _, err := PackageDocs(filepath.Join(dir, "missing"), "example.com/missing"); err == nil || !strings.HasPrefix(err.Error(), "session: docs of example.com/missing") {
		t.Errorf("PackageDocs(missing dir) error = %v, want one naming the package", err)
	}
}
