package symbols_test

import (
	"context"
	"strings"
	"testing"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
	"github.com/gotrain/gotrain/session/symbols"
)

// TestTypedDefinesGotrain runs the notebook patterns that failed with
// "constant definition loop" before the session typed top-level defines:
// indexing what a gotrain method returns, at a cell's top level.
func TestTypedDefinesGotrain(t *testing.T) {
	const imports = "import (\n\t\"fmt\"\n\t\"github.com/gotrain/gotrain/nn\"\n\t\"github.com/gotrain/gotrain/strategy\"\n)"
	const model = "s := strategy.NewMirrored()\nvar model *nn.Sequential\ns.Scope(func() {\n\tmodel = nn.NewSequential(nn.Dense(3, nn.ReLU), nn.Dense(2))\n\tmodel.Build([]int{1, 4})\n})"
	tests := []struct {
		name  string
		cells []string
		want  string
	}{
		{"first layer", []string{imports, model, "first := model.Layers()[0]", "first.Name() != \"\""}, "true"},
		{"layers then index", []string{imports, model, "layers := model.Layers()", "last := layers[len(layers)-1]\nfmt.Sprint(last.OutputShape([]int{1, 3}))"}, "[1 2]"},
		{"variable of a layer", []string{imports, model, "layer := model.Layers()[0]", "k := layer.Variables()[0]", "fmt.Sprint(k.Shape())"}, "[4 3]"},
		{"variables appended and ranged", []string{imports, model, "vars := model.Layers()[1].TrainableVariables()", "vars = append(vars, model.Layers()[0].TrainableVariables()...)\nn := 0\nfor _, v := range vars {\n\tn += v.Len()\n}\nn"}, "23"},
		{"graph type without importing graph", []string{"import \"github.com/gotrain/gotrain/strategy\"\nimport nnpkg \"github.com/gotrain/gotrain/nn\"", "s := strategy.NewMirrored()\nvar d *nnpkg.DenseLayer\ns.Scope(func() { d = nnpkg.Dense(2); d.Build([]int{1, 5}) })", "w := d.Variables()[0]\nw.Len()"}, "10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := session.New(session.Options{Symbols: []interp.Exports{symbols.Symbols}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got string
			for i, c := range tt.cells {
				res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: c}, &output{})
				if res.Err != nil {
					t.Fatalf("cell %d %q: %s: %s\n%s", i+1, c, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
				}
				got, _ = res.Value["text/plain"].(string)
			}
			if got != tt.want {
				t.Errorf("last cell %q: got %q, want %q", tt.cells[len(tt.cells)-1], got, tt.want)
			}
		})
	}
}
