package symbols_test

import (
	"os"
	"strings"
	"testing"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
	"github.com/gotrain/gotrain/session/symbols"
)

// TestInspectGotrainDocs checks that inspecting gotrain's own identifiers
// shows the docs embedded in docs.go, with no source to read: the session
// is given an empty GOROOT and runs in a directory without Go files.
func TestInspectGotrainDocs(t *testing.T) {
	t.Chdir(t.TempDir())
	s, err := session.New(session.Options{
		Symbols: []interp.Exports{symbols.Symbols},
		Docs:    symbols.Docs,
		GoRoot:  t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res := s.Execute(t.Context(), kernel.ExecuteRequest{Code: `import (
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)
var opt = nn.NewAdam(0.001)`}, &output{}); res.Err != nil {
		t.Fatalf("%s: %s", res.Err.Name, res.Err.Value)
	}
	tests := []struct {
		code, sig, doc string
	}{
		{"nn.NewAdam", "func nn.NewAdam(float64, ...nn.OptimizerOption) *nn.Adam", "NewAdam returns an Adam optimizer with learning rate lr."},
		{"strategy.NewMirrored", "func strategy.NewMirrored(", "NewMirrored returns a strategy with one replica per CPU core"},
		{"nn", "package nn", "Package nn is"},
		{"opt.Iterations", "func (*nn.Adam) Iterations(", strings.SplitN(symbols.Docs["github.com/gotrain/gotrain/nn.Adam.Iterations"], "\n", 2)[0]},
	}
	for _, tt := range tests {
		got := s.Inspect(tt.code, len(tt.code), 0)
		plain, _ := got.Data["text/plain"].(string)
		sig, doc, _ := strings.Cut(plain, "\n\n")
		if !got.Found || !strings.HasPrefix(sig, tt.sig) || !strings.HasPrefix(doc, tt.doc) {
			t.Errorf("Inspect(%q) = %v %q, want %q, a blank line and a doc starting %q", tt.code, got.Found, plain, tt.sig, tt.doc)
		}
	}
}

// TestDocsTable checks the generated table's keys: functions, types,
// methods and packages of all five packages, and nothing unexported.
func TestDocsTable(t *testing.T) {
	for _, key := range []string{
		"github.com/gotrain/gotrain/nn.NewAdam",
		"github.com/gotrain/gotrain/strategy.NewMirrored",
		"github.com/gotrain/gotrain/strategy.Mirrored.Run",
		"github.com/gotrain/gotrain/data",
		"github.com/gotrain/gotrain/display",
		"github.com/gotrain/gotrain/graph",
	} {
		if strings.TrimSpace(symbols.Docs[key]) == "" {
			t.Errorf("Docs[%q] is empty, want the doc comment", key)
		}
	}
	for key, text := range symbols.Docs {
		last := key[strings.LastIndex(key, "/")+1:]
		for _, part := range strings.Split(last, ".")[1:] {
			if part == "" || strings.ToUpper(part[:1]) != part[:1] {
				t.Errorf("Docs has %q, want exported identifiers only", key)
			}
		}
		if text != strings.TrimSpace(text) {
			t.Errorf("Docs[%q] = %q, want it trimmed", key, text)
		}
	}
	if _, err := os.Stat("gendocs.go"); err != nil {
		t.Errorf("gendocs.go, docs.go's generator, is missing: %v", err)
	}
}
