package symbols_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
	"github.com/gotrain/gotrain/session/symbols"
)

type output struct {
	mu       sync.Mutex
	stdout   strings.Builder
	displays []kernel.MIMEBundle
}

func (o *output) Stream(name, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stdout.WriteString(text)
}
func (o *output) Display(b kernel.MIMEBundle, _ map[string]any, _ string, _ bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.displays = append(o.displays, b)
}
func (o *output) ClearOutput(bool)                   {}
func (o *output) Input(string, bool) (string, error) { return "", errors.New("no stdin") }

// TestDesignWorkload runs the notebook of DESIGN.md §1 through a session
// that uses the generated tables: interpreted step functions called by the
// compiled strategy.
func TestDesignWorkload(t *testing.T) {
	s, err := session.New(session.Options{Symbols: []interp.Exports{symbols.Symbols}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cells := []string{
		`import (
    "fmt"
    "github.com/gotrain/gotrain/data"
    "github.com/gotrain/gotrain/nn"
    "github.com/gotrain/gotrain/strategy"
)`,
		`s := strategy.NewMirrored()
const GlobalBatchSize = 64
features := data.RandomNormal(7, 256, 10)
labels := data.RandomInts(8, 2, 256)
dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(GlobalBatchSize))

var model *nn.Sequential
var opt nn.Optimizer
s.Scope(func() {
    model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
    opt = nn.NewAdam(0.001)
})
lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}`,
		`trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
    logits := model.Call(ctx, x, true)
    loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
    opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
    return loss
}
steps := 0
for it := dist.Iter(); it.Next(); {
    loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
    fmt.Println(loss)
    steps++
}
steps`,
	}
	for i, c := range cells {
		out := &output{}
		res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: c}, out)
		if res.Err != nil {
			t.Fatalf("cell %d: %s: %s\n%s", i+1, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
		}
		if i == len(cells)-1 {
			if got := res.Value["text/plain"]; got != "4" {
				t.Errorf("steps = %v, want 4 (256 examples in batches of 64); output:\n%s", got, out.stdout.String())
			}
		}
	}
}

func TestDisplayTable(t *testing.T) {
	s, err := session.New(session.Options{Symbols: []interp.Exports{symbols.Symbols}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := &output{}
	res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: "import \"github.com/gotrain/gotrain/display\"\ndisplay.Markdown(\"**hi**\").Show()\ndisplay.HTML(\"<b>x</b>\")"}, out)
	if res.Err != nil {
		t.Fatalf("%s: %s", res.Err.Name, res.Err.Value)
	}
	if len(out.displays) != 1 || out.displays[0]["text/markdown"] != "**hi**" {
		t.Errorf("displays %v, want the markdown bundle", out.displays)
	}
	if res.Value["text/html"] != "<b>x</b>" {
		t.Errorf("value %v, want the HTML bundle", res.Value)
	}
}
