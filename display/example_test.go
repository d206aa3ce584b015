package display_test

import (
	"fmt"
	"image"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gotrain/gotrain/display"
)

// Outside a kernel, the default sink prints the text/plain form, which is
// what these examples show. In a notebook the same calls show rich output.

func ExampleHTML() {
	v := display.HTML(`<b>loss</b> fell to <span style="color:green">0.0123</span>`)
	fmt.Println(slices.Sorted(maps.Keys(v.Render())))
	display.Show(v) // or end a cell with v to make it the cell's result
	// Output:
	// [text/html text/plain]
	// loss fell to 0.0123
}

func ExampleMarkdown() {
	display.Markdown("**Epoch 3**: accuracy 97%").Show()
	// Output:
	// **Epoch 3**: accuracy 97%
}

func ExampleLaTeX() {
	v := display.LaTeX(`\sigma(x) = 1/(1+e^{-x})`)
	fmt.Println(v.Render()["text/latex"])
	// Output:
	// $$\sigma(x) = 1/(1+e^{-x})$$
}

func ExampleJSON() {
	display.JSON(map[string]any{"epoch": 3, "loss": 0.25}).Show()
	// Output:
	// {
	//   "epoch": 3,
	//   "loss": 0.25
	// }
}

func ExampleImage() {
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for i := range 28 {
		img.SetGray(i, i, color.Gray{Y: 255})
	}
	v := display.Image(img)
	fmt.Println(v.Err())
	v.Show()
	// Output:
	// <nil>
	// [PNG image 28x28]
}

func ExamplePNG() {
	v := display.PNG([]byte("not a png"))
	fmt.Println(v.Err())
	// Output:
	// display: could not read PNG header (got 9 bytes): png: invalid format: not a PNG file
}

func ExampleShow() {
	display.Show(display.Text("plain text"))
	display.Show(math.Pi) // not a Renderer: shown with %v
	// Output:
	// plain text
	// 3.141592653589793
}

func ExampleHandle() {
	h := display.NewHandle()
	h.Show(display.Text("epoch 1/3"))
	for epoch := 2; epoch <= 3; epoch++ {
		// In a notebook this replaces the output above; the default sink
		// can only print a new line.
		h.Update(display.Text(fmt.Sprintf("epoch %d/3", epoch)))
	}
	// Output:
	// epoch 1/3
	// epoch 2/3
	// epoch 3/3
}

// recordingSink is a Sink that prints what it is asked to do.
type recordingSink struct{}

func (recordingSink) Display(b display.Bundle, id string, update bool) {
	fmt.Printf("display %v update=%v text=%q\n", slices.Sorted(maps.Keys(b)), update, b["text/plain"])
}

func (recordingSink) Clear(wait bool) { fmt.Printf("clear wait=%v\n", wait) }

func ExampleSetSink() {
	prev := display.SetSink(recordingSink{})
	defer display.SetSink(prev)
	display.HTML("<i>hi</i>").Show()
	display.Clear(true)
	// Output:
	// display [text/html text/plain] update=false text="hi"
	// clear wait=true
}

func ExampleMonitor() {
	// A fixed clock that advances 10ms per reading makes the output
	// reproducible; real code leaves the Clock option out.
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { t = t.Add(10 * time.Millisecond); return t }

	const steps = 400
	mon := display.NewMonitor(
		display.Title("mlp"),
		display.Total(steps),
		display.BatchSize(64),
		display.Series("loss", "acc"),
		display.Every(time.Second),
		display.Clock(clock),
	)
	defer mon.Done()
	values := make(map[string]float64) // reused: Add does not keep it
	for step := 1; step <= steps; step++ {
		values["loss"] = 2 * math.Exp(-float64(step)/100)
		values["acc"] = 1 - 0.5*math.Exp(-float64(step)/80)
		mon.Add(step, values)
	}
	// Output:
	// mlp: step 1/400  loss 1.9801  acc 0.5062  elapsed 0.0s
	// mlp: step 101/400  loss 0.7284  acc 0.8585  6.40k samples/s  elapsed 1.0s  ETA 3.0s
	// mlp: step 201/400  loss 0.2680  acc 0.9595  6.40k samples/s  elapsed 2.0s  ETA 2.0s
	// mlp: step 301/400  loss 0.0986  acc 0.9884  6.40k samples/s  elapsed 3.0s  ETA 1.0s
	// mlp: step 400/400  loss 0.0366  acc 0.9966  6.40k samples/s  elapsed 4.0s
}

func ExampleSVG() {
	v := display.SVG(`<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><circle cx="10" cy="10" r="8"/></svg>`)
	fmt.Println(v) // a Value prints its text/plain form
	// Output:
	// [SVG image]
}

func ExampleText() {
	display.Text(fmt.Sprintf("accuracy %.2f%%", 97.25)).Show()
	// Output:
	// accuracy 97.25%
}

func ExampleLogScale() {
	t := time.Unix(0, 0)
	mon := display.NewMonitor(display.LogScale(), display.Every(0),
		display.Clock(func() time.Time { t = t.Add(time.Second); return t }))
	mon.Add(1, map[string]float64{"loss": 0}) // ≤ 0: listed, but not drawn on a log axis
	mon.Done()
	svg := mon.Render()["image/svg+xml"].(string)
	fmt.Println(strings.Contains(svg, `data-name="loss"`))
	// Output:
	// step 1  loss 0.0000  elapsed 1.0s
	// step 1  loss 0.0000  elapsed 2.0s
	// true
}
