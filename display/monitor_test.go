package display

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/internal/safepoint"
)

// checkSends checks what a monitor sent: one display id, a first display
// then updates only, and every bundle complete.
func checkSends(t *testing.T, calls []displayCall) {
	t.Helper()
	if len(calls) == 0 {
		t.Fatal("monitor sent nothing")
	}
	for i, c := range calls {
		if c.id == "" || c.id != calls[0].id {
			t.Fatalf("send %d has display id %q, want %q for all", i, c.id, calls[0].id)
		}
		if c.update != (i > 0) {
			t.Fatalf("send %d has update %v, want %v", i, c.update, i > 0)
		}
		for _, mime := range []string{MIMEText, MIMEHTML, MIMESVG} {
			if s, _ := c.b[mime].(string); s == "" {
				t.Fatalf("send %d lacks %s: %v", i, mime, c.b)
			}
		}
	}
}

func TestMonitorThrottle(t *testing.T) {
	const adds = 10_000
	tests := []struct {
		name     string
		tick     time.Duration // clock advance per call
		opts     []MonitorOption
		min, max int // sends, Done's included
	}{
		// A real-time pace: 10 s of training at 250 ms per update.
		{"time throttle", time.Millisecond, []MonitorOption{Total(adds)}, 38, 42},
		// A clock that always allows an update: only the caps hold.
		{"cap with Total", time.Second, []MonitorOption{Total(adds)}, maxUpdates, maxUpdates + 2},
		{"cap without Total", time.Second, nil, 300, 600},
		{"cap with Every(0)", 0, []MonitorOption{Total(adds), Every(0)}, maxUpdates, maxUpdates + 2},
		{"frozen clock", 0, []MonitorOption{Total(adds)}, 2, 2},
		{"long Every", time.Millisecond, []MonitorOption{Every(time.Hour)}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := useFakeSink(t)
			clock := newFakeClock(tt.tick)
			m := NewMonitor(append(tt.opts, Clock(clock.now))...)
			for i := 1; i <= adds; i++ {
				m.Add(i, map[string]float64{"loss": 1 / float64(i)})
			}
			m.Done()
			calls := s.snapshot()
			checkSends(t, calls)
			if n := len(calls); n < tt.min || n > tt.max {
				t.Errorf("%d Adds sent %d updates, want %d to %d", adds, n, tt.min, tt.max)
			}
			if !strings.Contains(calls[0].b[MIMEText].(string), "step 1") {
				t.Errorf("first send %q, want the first step shown at once", calls[0].b[MIMEText])
			}
		})
	}
}

func TestMonitorDoneFlushesFinalState(t *testing.T) {
	s := useFakeSink(t)
	clock := newFakeClock(time.Millisecond)
	m := NewMonitor(Total(10_000), BatchSize(32), Series("loss", "acc"), Clock(clock.now))
	for i := 1; i <= 10_000; i++ {
		loss, acc := 1/float64(i), 0.5
		if i == 10_000 {
			loss, acc = 0.1234, 0.97
		}
		m.Add(i, map[string]float64{"acc": acc, "loss": loss})
	}
	var summary strings.Builder
	summaryOut = &summary
	defer func() { summaryOut = os.Stdout }()
	m.Done()
	m.Done() // a second Done sends nothing

	calls := s.snapshot()
	checkSends(t, calls)
	// NewMonitor reads the clock at 1 ms, the Adds at 2..10001 ms and Done
	// at 10002 ms: 9999 steps in 9.999 s after the first, 32 samples each.
	const want = "step 10000/10000  loss 0.1234  acc 0.9700  32.0k samples/s  elapsed 10.0s"
	last := calls[len(calls)-1].b
	if got := last[MIMEText]; got != want {
		t.Errorf("final text/plain = %q, want %q", got, want)
	}
	// Consoles ignore display updates: Done prints the final line once.
	if got := summary.String(); !strings.HasSuffix(got, want+"\n") || strings.Count(got, want) != 1 {
		t.Errorf("the text lines end %q, want the final progress line %q once, last", got, want)
	}
	if html := last[MIMEHTML].(string); !strings.Contains(html, want) || !strings.Contains(html, `<progress value="10000" max="10000"`) {
		t.Errorf("final text/html lacks the progress line or bar: %.300s", html)
	}
	if calls[len(calls)-2].b[MIMEText] == want {
		t.Error("the update before Done already had the final state; the test cannot tell that Done flushed")
	}
	if got := panics(func() { m.Add(1, nil) }); got != ErrMonitorDone {
		t.Errorf("Add after Done panicked with %v, want ErrMonitorDone", got)
	}
	if n := len(s.snapshot()); n != len(calls) {
		t.Errorf("%d sends after Done, want 0", n-len(calls))
	}
}

func TestMonitorProgressLine(t *testing.T) {
	tests := []struct {
		name  string
		opts  []MonitorOption
		steps []int
		done  bool
		want  string
	}{
		{"no steps", nil, nil, true, "step 0  elapsed 0.1s"},
		{"one step", []MonitorOption{Total(10)}, []int{1}, false, "step 1/10  loss 1.0000  elapsed 0.1s"},
		{"running", []MonitorOption{Total(10)}, []int{1, 2, 3}, false,
			"step 3/10  loss 3.0000  10.0 steps/s  elapsed 0.3s  ETA 0.7s"},
		{"samples", []MonitorOption{Total(10), BatchSize(64)}, []int{1, 2, 3}, false,
			"step 3/10  loss 3.0000  640 samples/s  elapsed 0.3s  ETA 0.7s"},
		{"title, no total", []MonitorOption{Title("mnist")}, []int{1, 2, 3}, false,
			"mnist: step 3  loss 3.0000  10.0 steps/s  elapsed 0.3s"},
		{"done", []MonitorOption{Total(10)}, []int{1, 2, 3}, true,
			"step 3/10  loss 3.0000  10.0 steps/s  elapsed 0.4s"},
		{"steps out of order", []MonitorOption{Total(10)}, []int{1, 3, 2}, false,
			"step 3/10  loss 2.0000  10.0 steps/s  elapsed 0.3s  ETA 0.7s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFakeSink(t)
			clock := newFakeClock(100 * time.Millisecond)
			m := NewMonitor(append(tt.opts, Every(0), Clock(clock.now))...)
			for _, step := range tt.steps {
				m.Add(step, map[string]float64{"loss": float64(step)})
			}
			if tt.done {
				m.Done()
			}
			if got := m.Render()[MIMEText]; got != tt.want {
				t.Errorf("text/plain = %q, want %q", got, tt.want)
			}
		})
	}
}

// svgPaths parses svg as XML and returns the data-name and point count of
// each series path, in document order.
func svgPaths(t *testing.T, svg string) (names []string, points []int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	root := true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
			t.Fatalf("root element %v, want svg in the SVG namespace", el.Name)
		}
		root = false
		attr := func(name string) string {
			for _, a := range el.Attr {
				if a.Name.Local == name {
					return a.Value
				}
			}
			return ""
		}
		if el.Name.Local != "path" || attr("class") != "series" {
			continue
		}
		data := attr("d")
		for _, bad := range []string{"NaN", "Inf"} {
			if strings.Contains(data, bad) {
				t.Fatalf("path %q has %s coordinates: %s", attr("data-name"), bad, data)
			}
		}
		n := strings.Count(data, "M") + strings.Count(data, "L")
		// "h0" ends a one-point subpath; its 0 parses as an in-range value.
		for _, f := range strings.FieldsFunc(data, func(r rune) bool { return r == 'M' || r == 'L' || r == 'h' || r == ' ' }) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 0 || v > chartWidth {
				t.Fatalf("path %q has coordinate %q outside the chart", attr("data-name"), f)
			}
		}
		names = append(names, attr("data-name"))
		points = append(points, n)
	}
	return names, points
}

func TestMonitorSVG(t *testing.T) {
	ramp := func(i int) float64 { return float64(i) / 100 }
	tests := []struct {
		name       string
		opts       []MonitorOption
		n          int
		values     map[string]func(i int) float64
		wantNames  []string
		wantPoints []int
	}{
		{"linear, three series", []MonitorOption{Series("loss")}, 10_000, map[string]func(int) float64{
			"loss": func(i int) float64 { return 1 / float64(i) },
			"acc":  ramp,
			"lr":   func(int) float64 { return 0.001 },
		}, []string{"loss", "acc", "lr"}, nil}, // nil: between maxPoints/2 and maxPoints each
		{"log, values ≤ 0 left out", []MonitorOption{LogScale()}, 300, map[string]func(int) float64{
			"diff":  func(i int) float64 { return float64(i - 100) }, // ≤ 0 for the first 100 steps
			"zero":  func(int) float64 { return 0 },
			"minus": func(int) float64 { return -1 },
		}, []string{"diff", "minus", "zero"}, []int{200, 0, 0}},
		{"log, all ≤ 0", []MonitorOption{LogScale()}, 50, map[string]func(int) float64{
			"neg": func(i int) float64 { return -float64(i) },
		}, []string{"neg"}, []int{0}},
		{"non-finite values", nil, 100, map[string]func(int) float64{
			"nan": func(i int) float64 {
				if i%10 == 0 {
					return math.NaN()
				}
				return float64(i)
			},
			"inf": func(int) float64 { return math.Inf(1) },
		}, []string{"inf", "nan"}, []int{0, 90}},
		{"one point", nil, 1, map[string]func(int) float64{"loss": ramp}, []string{"loss"}, []int{1}},
		{"no points, declared series", []MonitorOption{Series("loss", "acc")}, 0, nil, []string{"loss", "acc"}, []int{0, 0}},
		{"markup in names", []MonitorOption{Title(`<b>"t"&</b>`)}, 5, map[string]func(int) float64{
			`a<b>&"c'`: ramp,
		}, []string{`a<b>&"c'`}, []int{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFakeSink(t)
			clock := newFakeClock(time.Millisecond)
			m := NewMonitor(append(tt.opts, Clock(clock.now))...)
			values := make(map[string]float64)
			for i := 1; i <= tt.n; i++ {
				for name, f := range tt.values {
					values[name] = f(i)
				}
				m.Add(i, values)
			}
			m.Done()
			b := m.Render()
			names, points := svgPaths(t, b[MIMESVG].(string))
			if tt.wantPoints == nil {
				for _, n := range points {
					if n < maxPoints/2 || n > maxPoints {
						t.Errorf("a series path has %d points, want %d to %d", n, maxPoints/2, maxPoints)
					}
				}
				tt.wantPoints = points
			}
			if !slices.Equal(names, tt.wantNames) || !slices.Equal(points, tt.wantPoints) {
				t.Errorf("series paths %q with %v points, want %q with %v", names, points, tt.wantNames, tt.wantPoints)
			}
			// The HTML embeds the same SVG, so it must parse as well.
			html := b[MIMEHTML].(string)
			start := strings.Index(html, "<svg")
			if start < 0 || !strings.Contains(html, b[MIMESVG].(string)) {
				t.Fatalf("text/html does not embed the chart")
			}
			if err := xml.Unmarshal([]byte(html), new(struct{})); err != nil {
				t.Errorf("text/html is not well-formed: %v", err)
			}
		})
	}
}

func TestMonitorSVGSize(t *testing.T) {
	useFakeSink(t)
	m := NewMonitor(Clock(newFakeClock(time.Millisecond).now))
	values := map[string]float64{}
	for i := 1; i <= 100_000; i++ {
		values["loss"], values["acc"], values["val_loss"] = 1/float64(i), 1-1/float64(i), math.Sin(float64(i))
		m.Add(i, values)
	}
	m.Done()
	if n := len(m.Render()[MIMESVG].(string)); n > 60_000 {
		t.Errorf("SVG of 3 series over 100k steps is %d bytes, want ≤ 60000", n)
	}
}

func TestMonitorSeriesOrder(t *testing.T) {
	useFakeSink(t)
	m := NewMonitor(Series("loss", "acc"), Clock(newFakeClock(0).now))
	m.Add(1, map[string]float64{"zeta": 1, "beta": 2, "loss": 3})
	m.Add(2, map[string]float64{"alpha": 4})
	want := "step 2  loss 3.0000  beta 2.0000  zeta 1.0000  alpha 4.0000  elapsed 0.0s"
	if got := m.Render()[MIMEText]; got != want {
		t.Errorf("text/plain = %q, want %q (acc has no value yet, so it is not listed)", got, want)
	}
	names, _ := svgPaths(t, m.Render()[MIMESVG].(string))
	if wantNames := []string{"loss", "acc", "beta", "zeta", "alpha"}; !slices.Equal(names, wantNames) {
		t.Errorf("legend order %q, want %q", names, wantNames)
	}
}

func TestMonitorConcurrentAdds(t *testing.T) {
	s := useFakeSink(t)
	const workers, perWorker = 8, 500
	m := NewMonitor(Total(workers*perWorker), Every(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			values := map[string]float64{"loss": float64(w)}
			for i := range perWorker {
				m.Add(w*perWorker+i+1, values)
				if i%100 == 0 {
					m.Render()
				}
			}
		})
	}
	wg.Wait()
	m.Done()
	calls := s.snapshot()
	checkSends(t, calls)
	last := calls[len(calls)-1].b[MIMEText].(string)
	if !strings.HasPrefix(last, "step 4000/4000  loss ") || strings.Contains(last, "ETA") {
		t.Errorf("final send %q, want step 4000/4000 and no ETA", last)
	}
	if len(calls) > maxUpdates+2 {
		t.Errorf("%d sends, want ≤ %d", len(calls), maxUpdates+2)
	}
}

func TestMonitorAddAllocs(t *testing.T) {
	useFakeSink(t)
	m := NewMonitor(Total(1000), Clock(newFakeClock(0).now))
	values := map[string]float64{"loss": 0.5, "acc": 0.9, "lr": 0.001}
	m.Add(1, values) // creates the series and shows the monitor
	step := 1
	allocs := testing.AllocsPerRun(1000, func() {
		step++
		m.Add(step, values)
	})
	if allocs != 0 {
		t.Errorf("Add without an update allocates %v times, want 0", allocs)
	}
}

func TestMonitorInterrupt(t *testing.T) {
	s := useFakeSink(t)
	safepoint.Clear()
	defer safepoint.Clear()
	m := NewMonitor(Total(100), Clock(newFakeClock(time.Millisecond).now))
	m.Add(1, map[string]float64{"loss": 1})
	safepoint.Raise()
	if got := panics(func() { m.Add(2, map[string]float64{"loss": 2}) }); got != safepoint.ErrInterrupted {
		t.Fatalf("Add with an interrupt pending panicked with %v, want ErrInterrupted", got)
	}
	m.Done() // must not panic: a deferred Done runs while the cell unwinds
	calls := s.snapshot()
	if len(calls) != 2 || !strings.HasPrefix(calls[1].b[MIMEText].(string), "step 1/100  loss 1.0000") {
		t.Errorf("sends = %v, want the first step and Done's flush of it", calls)
	}
}

func TestMonitorOptionPanics(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"Total", func() { Total(-1) }, "display: invalid monitor option: Total: want steps >= 0, got -1"},
		{"Every", func() { Every(-time.Second) }, "display: invalid monitor option: Every: want a duration >= 0, got -1s"},
		{"BatchSize", func() { BatchSize(-2) }, "display: invalid monitor option: BatchSize: want n >= 0, got -2"},
		{"Clock", func() { Clock(nil) }, "display: invalid monitor option: Clock: want a function, got nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err, _ := panics(tt.fn).(error)
			if !errors.Is(err, ErrBadOption) || err.Error() != tt.want {
				t.Errorf("panic %v, want %q wrapping ErrBadOption", err, tt.want)
			}
		})
	}
}

// benchSink keeps the last bundle, so building it is not optimized away.
var benchSink Bundle

func BenchmarkMonitorAdd(b *testing.B) {
	prev := SetSink(&fakeSink{})
	defer SetSink(prev)
	m := NewMonitor(Total(b.N + 1))
	values := map[string]float64{"loss": 0.5, "acc": 0.9, "lr": 0.001}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		values["loss"] = 1 / float64(i+1)
		m.Add(i+1, values)
	}
}

func BenchmarkMonitorRender(b *testing.B) {
	m := NewMonitor(Total(100_000), Clock(newFakeClock(0).now))
	prev := SetSink(&fakeSink{})
	defer SetSink(prev)
	values := map[string]float64{}
	for i := 1; i <= 100_000; i++ {
		values["loss"], values["acc"], values["val_loss"] = 1/float64(i), 1-1/float64(i), math.Sin(float64(i))
		m.Add(i, values)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = m.Render()
	}
	b.ReportMetric(float64(len(benchSink[MIMESVG].(string))), "svg-bytes")
}

func TestMonitorClockPanicDoesNotLock(t *testing.T) {
	useFakeSink(t)
	calls := 0
	clock := func() time.Time {
		calls++
		if calls == 2 {
			panic("clock broke")
		}
		return time.Unix(int64(calls), 0)
	}
	m := NewMonitor(Clock(clock))
	if got := panics(func() { m.Add(1, nil) }); got != "clock broke" {
		t.Fatalf("Add panicked with %v, want the clock's panic", got)
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		m.Add(2, map[string]float64{"loss": 1})
		m.Done()
	}()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("monitor still locked after its clock panicked")
	}
}

// TestMonitorTextLines: besides Done's summary, a long run prints its
// progress line as text (for consoles, which ignore display updates) at
// most once per 10 s and once per tenth of the run; a short one prints
// only the summary.
func TestMonitorTextLines(t *testing.T) {
	useFakeSink(t)
	lines := func(tick time.Duration, total, steps int) []string {
		var b strings.Builder
		summaryOut = &b
		defer func() { summaryOut = os.Stdout }()
		var opts []MonitorOption
		if total > 0 {
			opts = append(opts, Total(total))
		}
		m := NewMonitor(append(opts, Clock(newFakeClock(tick).now))...)
		for i := 1; i <= steps; i++ {
			m.Add(i, map[string]float64{"loss": 1})
		}
		m.Done()
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}
	// 100 steps in 0.1 s: the summary alone.
	if got := lines(time.Millisecond, 100, 100); len(got) != 1 || !strings.HasPrefix(got[0], "step 100/100") {
		t.Errorf("a short run printed %q, want Done's line alone", got)
	}
	// 2000 steps of 1 s: a line per tenth (200 steps, well over 10 s), then the summary.
	got := lines(time.Second, 2000, 2000)
	if len(got) < 10 || len(got) > 11 {
		t.Errorf("a run of 2000 s printed %d lines, want 10 or 11: %q", len(got), got)
	}
	for i, l := range got[:len(got)-1] {
		// The first display update at or after each tenth (updates come
		// every 4 steps here).
		var step int
		fmt.Sscanf(l, "step %d/2000", &step)
		if lo := 200 * (i + 1); step < lo || step >= lo+4 {
			t.Errorf("line %d is %q, want the step in [%d, %d)", i, l, lo, lo+4)
		}
	}
	// 5000 steps of 10 ms (50 s): at most one line per 10 s.
	if got := lines(10*time.Millisecond, 5000, 5000); len(got) > 6 {
		t.Errorf("a run of 50 s printed %d lines, want at most 5 and the summary: %q", len(got), got)
	}
	// Without a Total: a line per tenfold growth of the step, 10 s apart.
	if got := lines(time.Second, 0, 5000); len(got) != 4 {
		t.Errorf("an open-ended run of 5000 steps printed %q, want steps 10, 100 and 1000 (or so) and the summary", got)
	}
}
