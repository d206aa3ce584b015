package display

import (
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gotrain/gotrain/internal/safepoint"
)

// Throttling bounds, on top of the Every interval. A frontend redraws the
// whole SVG on every update and a notebook that trains for an hour must
// not receive tens of thousands of them, whatever the clock says.
const (
	// maxUpdates caps the updates of a monitor that knows its Total: one
	// per Total/maxUpdates steps at most.
	maxUpdates = 500
	// progressDivisor paces a monitor without a Total: an update needs
	// 1/progressDivisor more Adds than the previous one had, which bounds
	// the updates of n Adds by about progressDivisor·(1+ln(n/progressDivisor)).
	progressDivisor = 100
)

// ErrBadOption is wrapped by the panic of a monitor option given a value
// it cannot use, such as Total(-1).
var ErrBadOption = errors.New("display: invalid monitor option")

// ErrMonitorDone is the panic value of Add on a monitor after its Done.
var ErrMonitorDone = errors.New("display: monitor: Add after Done")

// MonitorOption configures a Monitor; see NewMonitor.
type MonitorOption func(*monitorConfig)

type monitorConfig struct {
	total int           // steps in the run; 0 when unknown
	title string        // shown above the chart; may be empty
	logY  bool          // log10 y axis
	every time.Duration // least time between two updates
	batch int           // samples per step; 0 shows steps/s
	names []string      // series declared up front, in legend order
	now   func() time.Time
}

func badOption(format string, args ...any) {
	panic(fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...))
}

// Total sets the number of steps of the run, which enables the
// "step i/N" form, the ETA and the progress bar. It panics if steps < 0.
func Total(steps int) MonitorOption {
	if steps < 0 {
		badOption("Total: want steps >= 0, got %d", steps)
	}
	return func(c *monitorConfig) { c.total = steps }
}

// Title sets the text shown before the progress line and above the chart.
func Title(s string) MonitorOption {
	return func(c *monitorConfig) { c.title = s }
}

// LogScale draws the y axis in powers of ten, which suits a loss that
// falls by orders of magnitude. Values ≤ 0 cannot be placed on it and are
// left out of the lines (the progress line still shows them).
func LogScale() MonitorOption {
	return func(c *monitorConfig) { c.logY = true }
}

// Every sets the least time between two updates of the display (default
// 250ms); 0 leaves only the step-based cap. It panics if d < 0.
func Every(d time.Duration) MonitorOption {
	if d < 0 {
		badOption("Every: want a duration >= 0, got %v", d)
	}
	return func(c *monitorConfig) { c.every = d }
}

// BatchSize sets the samples per step, so throughput shows as samples/s
// rather than steps/s. It panics if n < 0.
func BatchSize(n int) MonitorOption {
	if n < 0 {
		badOption("BatchSize: want n >= 0, got %d", n)
	}
	return func(c *monitorConfig) { c.batch = n }
}

// Series declares metric names in the order the legend and the progress
// line list them. Undeclared names are added when first seen, those of one
// Add in alphabetical order, since a map has no order of its own.
func Series(names ...string) MonitorOption {
	names = slices.Clone(names)
	return func(c *monitorConfig) { c.names = append(c.names, names...) }
}

// Clock replaces time.Now as the monitor's time source; it is called once
// by NewMonitor, once per Add and once by Done. Tests and examples use it
// for reproducible output. It panics if now is nil.
func Clock(now func() time.Time) MonitorOption {
	if now == nil {
		badOption("Clock: want a function, got nil")
	}
	return func(c *monitorConfig) { c.now = now }
}

// Monitor is the live training monitor: one output, updated in place, with
// a progress line (step, metrics, throughput, elapsed time, ETA) and a line
// chart of every metric over the steps. Updates are throttled: at most one
// per Every interval, and at most about 500 per run (one per Total/500
// steps when Total is known, else one per 1% growth of the step count), so
// a fast loop costs the notebook little. Done sends the final state.
//
// The display carries image/svg+xml (the chart), text/html (progress line
// and chart) and text/plain (the progress line), so consoles and nbconvert's
// text export show the latest values.
//
// A Monitor is safe for concurrent use; it must not be used after Done.
type Monitor struct {
	cfg    monitorConfig // immutable after NewMonitor
	handle *Handle       // immutable; the one display the monitor updates

	mu struct {
		sync.Mutex
		series []*series          // in legend order
		byName map[string]*series // the same series, by name
		start  time.Time          // NewMonitor's time
		now    time.Time          // newest Add's time, or Done's
		lastT  time.Time          // newest Add's time
		adds   int                // Adds so far
		first  int                // step of the first Add
		firstT time.Time          // time of the first Add
		step   int                // largest step seen
		done   bool               // Done was called; no more Adds
		seq    uint64             // bundles built so far

		// The state at the last update, which the throttle compares with.
		shownAt   time.Time
		shownStep int
		shownAdds int

		// The last progress line printed as text (see lineDueLocked).
		lineAt   time.Time
		lineStep int
	}

	// out orders the sends: a bundle built earlier but sent later than a
	// newer one (two goroutines racing past mu) is dropped.
	out struct {
		sync.Mutex
		sent uint64 // seq of the newest bundle sent
	}
}

// NewMonitor returns a monitor configured by opts. It shows nothing until
// the first Add; create it just before the training loop, since elapsed
// time counts from here.
func NewMonitor(opts ...MonitorOption) *Monitor {
	m := &Monitor{
		cfg:    monitorConfig{every: 250 * time.Millisecond, now: time.Now},
		handle: NewHandle(),
	}
	for _, o := range opts {
		if o != nil {
			o(&m.cfg)
		}
	}
	m.mu.byName = make(map[string]*series)
	for _, name := range m.cfg.names {
		m.seriesLocked(name)
	}
	m.mu.start = m.cfg.now()
	m.mu.now = m.mu.start
	return m
}

// Add records the metrics of one step and updates the display when the
// throttle allows. step is the number of steps done so far (pass 1 after
// the first step), so the last Add of a run with Total(n) passes n; values
// maps metric names to their values at that step and may be reused by the
// caller after Add returns. When no update is due, Add allocates nothing.
//
// Add is a safe point: it panics with safepoint.ErrInterrupted when an
// interrupt is pending, which stops a training loop. It panics with
// ErrMonitorDone after Done.
func (m *Monitor) Add(step int, values map[string]float64) {
	safepoint.Check()
	if b, seq := m.record(step, values); b != nil {
		m.send(b, seq)
		if m.lineDue(seq) {
			m.printLine(b)
		}
	}
}

// Text progress lines: consoles (jupyter-console, qtconsole) show a
// display's first state and ignore its updates, and no message tells a
// kernel which front end it talks to. So every front end also gets the
// progress line as text, rarely enough not to clutter a notebook: at most
// one per lineEvery and one per tenth of the run (per tenfold growth of
// the step without a Total), so a run of under lineEvery prints only
// Done's summary.
const lineEvery = 10 * time.Second

// lineDue reports whether the update seq, just sent, also prints its
// progress line, and records it if so.
func (m *Monitor) lineDue(seq uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq != m.mu.seq || m.mu.now.Sub(m.mu.start) < lineEvery || m.mu.now.Sub(m.mu.lineAt) < lineEvery {
		return false
	}
	if m.cfg.total > 0 {
		if (m.mu.step-m.mu.lineStep)*10 < m.cfg.total {
			return false
		}
	} else if m.mu.step < 10*max(1, m.mu.lineStep) {
		return false
	}
	m.mu.lineAt, m.mu.lineStep = m.mu.now, m.mu.step
	return true
}

// printLine prints b's progress line, unless outside a kernel, where the
// display itself was this line.
func (m *Monitor) printLine(b Bundle) {
	if _, plain := sink().(stdoutSink); !plain {
		fmt.Fprintln(summaryOut, b[MIMEText])
	}
}

// record stores one step and returns the bundle to send when an update is
// due, or nil. It unlocks by defer so that a panicking Clock cannot leave
// the monitor locked.
func (m *Monitor) record(step int, values map[string]float64) (Bundle, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.done {
		panic(ErrMonitorDone)
	}
	now := m.cfg.now()
	m.mu.now, m.mu.lastT = now, now
	m.mu.adds++
	if m.mu.adds == 1 {
		m.mu.first, m.mu.firstT, m.mu.step = step, now, step
	}
	m.mu.step = max(m.mu.step, step)
	for name, v := range values {
		s := m.mu.byName[name]
		if s == nil {
			m.addNewSeriesLocked(values)
			s = m.mu.byName[name]
		}
		s.add(float64(step), v)
	}
	if !m.dueLocked(now) {
		return nil, 0
	}
	return m.buildLocked()
}

// Done sends the final state of the display, frozen: no ETA, and elapsed
// time up to this call, and prints its progress line to standard output,
// as Add does now and then (see lineEvery): a console (jupyter-console,
// qtconsole) ignores the updates of a display and would show the first
// step's state only. Done does not check for an
// interrupt, so a deferred Done shows where an interrupted run stopped.
// Calling Done again does nothing.
func (m *Monitor) Done() {
	if b, seq := m.finish(); b != nil {
		m.send(b, seq)
		m.printLine(b)
	}
}

// summaryOut is where the progress lines go; tests replace it.
var summaryOut io.Writer = os.Stdout

// finish marks the monitor done and returns its final bundle, or nil if it
// was done already.
func (m *Monitor) finish() (Bundle, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.done {
		return nil, 0
	}
	m.mu.done = true
	m.mu.now = m.cfg.now()
	return m.buildLocked()
}

// Render returns the monitor's current state, so a cell that ends with a
// monitor shows it. Unlike Add and Done, it does not read the clock:
// elapsed time runs to the newest Add.
func (m *Monitor) Render() Bundle {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bundleLocked()
}

// dueLocked reports whether an Add at now should update the display.
func (m *Monitor) dueLocked(now time.Time) bool {
	if m.mu.adds == 1 {
		return true // show the monitor as soon as training starts
	}
	if now.Sub(m.mu.shownAt) < m.cfg.every {
		return false
	}
	if m.cfg.total > 0 {
		return (m.mu.step-m.mu.shownStep)*maxUpdates >= m.cfg.total
	}
	return (m.mu.adds-m.mu.shownAdds)*progressDivisor >= m.mu.adds
}

// buildLocked builds the bundle to send and records it as shown.
func (m *Monitor) buildLocked() (Bundle, uint64) {
	m.mu.shownAt, m.mu.shownStep, m.mu.shownAdds = m.mu.now, m.mu.step, m.mu.adds
	m.mu.seq++
	return m.bundleLocked(), m.mu.seq
}

func (m *Monitor) send(b Bundle, seq uint64) {
	m.out.Lock()
	defer m.out.Unlock()
	if seq < m.out.sent {
		return
	}
	m.out.sent = seq
	m.handle.send(b, true)
}

// addNewSeriesLocked creates the series of the names in values that have
// none yet, in alphabetical order so the legend does not depend on map
// iteration order.
func (m *Monitor) addNewSeriesLocked(values map[string]float64) {
	var names []string
	for name := range values {
		if m.mu.byName[name] == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		m.seriesLocked(name)
	}
}

// seriesLocked returns the series called name, creating it if needed.
func (m *Monitor) seriesLocked(name string) *series {
	if s := m.mu.byName[name]; s != nil {
		return s
	}
	s := newSeries(name, palette[len(m.mu.series)%len(palette)])
	m.mu.series = append(m.mu.series, s)
	m.mu.byName[name] = s
	return s
}

func (m *Monitor) bundleLocked() Bundle {
	parts := m.progressLocked()
	svg := renderChart(m.cfg.title, m.cfg.logY, m.mu.series)

	var h strings.Builder
	h.WriteString(`<div class="gotrain-monitor"><div style="font-family:monospace;white-space:pre-wrap;margin-bottom:4px">`)
	if m.cfg.total > 0 {
		fmt.Fprintf(&h, `<progress value="%d" max="%d" style="width:160px;vertical-align:middle"></progress> `,
			min(max(m.mu.step, 0), m.cfg.total), m.cfg.total)
	}
	h.WriteString(html.EscapeString(strings.Join(parts, "  ")))
	h.WriteString("</div>")
	h.WriteString(svg)
	h.WriteString("</div>")

	return Bundle{
		MIMESVG:  svg,
		MIMEHTML: h.String(),
		MIMEText: strings.Join(parts, "  "),
	}
}

// progressLocked returns the fields of the progress line, e.g.
// "step 400/400", "loss 0.1234", "12.3k samples/s", "elapsed 3.2s".
func (m *Monitor) progressLocked() []string {
	step := "step " + strconv.Itoa(m.mu.step)
	if m.cfg.title != "" {
		step = m.cfg.title + ": " + step
	}
	if m.cfg.total > 0 {
		step += "/" + strconv.Itoa(m.cfg.total)
	}
	parts := []string{step}
	for _, s := range m.mu.series {
		if s.count > 0 {
			parts = append(parts, s.name+" "+formatMetric(s.last))
		}
	}

	// Throughput counts from the first Add, not from NewMonitor: the first
	// step often includes one-off work (tracing, compiling) that would
	// make the steady rate and the ETA look worse than they are.
	var stepsPerSec float64
	if dt := m.mu.lastT.Sub(m.mu.firstT).Seconds(); m.mu.adds > 1 && dt > 0 && m.mu.step > m.mu.first {
		stepsPerSec = float64(m.mu.step-m.mu.first) / dt
	}
	if stepsPerSec > 0 {
		if m.cfg.batch > 0 {
			parts = append(parts, formatRate(stepsPerSec*float64(m.cfg.batch))+" samples/s")
		} else {
			parts = append(parts, formatRate(stepsPerSec)+" steps/s")
		}
	}
	parts = append(parts, "elapsed "+formatDuration(m.mu.now.Sub(m.mu.start)))
	if !m.mu.done && m.cfg.total > m.mu.step && stepsPerSec > 0 {
		eta := time.Duration(float64(m.cfg.total-m.mu.step) / stepsPerSec * float64(time.Second))
		parts = append(parts, "ETA "+formatDuration(eta))
	}
	return parts
}
