package display

import (
	"html"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units (pixels at 100% zoom).
const (
	chartWidth   = 640
	chartHeight  = 300
	marginLeft   = 62
	marginRight  = 16
	marginBottom = 36
	legendRow    = 16  // height of one legend row
	charWidth    = 6.5 // rough width of one 11px character, for layout
)

// palette colours series in order of appearance; it repeats after ten.
var palette = [...]string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

// axis maps data values to pixels along one direction.
type axis struct {
	lo, hi float64 // data range covered, in data units
	log    bool    // log10 scale; lo and hi are then > 0
	p0, p1 float64 // pixels of lo and hi
}

func (a axis) scale(v float64) float64 {
	if a.log {
		return math.Log10(v)
	}
	return v
}

func (a axis) pixel(v float64) float64 {
	t0, t1 := a.scale(a.lo), a.scale(a.hi)
	return a.p0 + (a.scale(v)-t0)/(t1-t0)*(a.p1-a.p0)
}

// drawable reports whether v can be placed on the axis: finite, and
// positive on a log scale.
func (a axis) drawable(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!a.log || v > 0)
}

// tick is one labelled position on an axis.
type tick struct {
	v     float64
	label string
}

// renderChart draws the series as one SVG line chart: the x axis is the
// step, the y axis the metric (log10 when logY), with ticks, grid lines and
// a legend. On a log axis, values ≤ 0 cannot be placed; they are left out
// and the line breaks there, as it does at NaN and ±Inf.
func renderChart(title string, logY bool, ss []*series) string {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	probe := axis{log: logY}
	for _, s := range ss {
		s.points(func(x, y float64) {
			if !probe.drawable(y) {
				return
			}
			xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
		})
	}

	top := 10.0 + legendRow*float64(len(legendRows(title, ss)))
	xa := axis{p0: marginLeft, p1: chartWidth - marginRight}
	ya := axis{log: logY, p0: chartHeight - marginBottom, p1: top}
	var xticks, yticks []tick
	xa.lo, xa.hi, xticks = linearTicks(xlo, xhi, 1, false)
	if logY {
		ya.lo, ya.hi, yticks = logTicks(ylo, yhi)
	} else {
		ya.lo, ya.hi, yticks = linearTicks(ylo, yhi, 0, true)
	}

	var b strings.Builder
	b.Grow(4096 + 12*maxPoints*len(ss))
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="300" viewBox="0 0 640 300" font-family="sans-serif" font-size="11">`)
	if title != "" {
		b.WriteString("<title>" + html.EscapeString(title) + "</title>")
	}
	b.WriteString(`<rect width="640" height="300" fill="white"/>`)

	// Grid and tick labels.
	b.WriteString(`<g stroke="#e5e5e5" stroke-width="1">`)
	for _, t := range yticks {
		y := fmtPx(ya.pixel(t.v))
		b.WriteString(`<line x1="` + fmtPx(xa.p0) + `" x2="` + fmtPx(xa.p1) + `" y1="` + y + `" y2="` + y + `"/>`)
	}
	for _, t := range xticks {
		x := fmtPx(xa.pixel(t.v))
		b.WriteString(`<line x1="` + x + `" x2="` + x + `" y1="` + fmtPx(ya.p1) + `" y2="` + fmtPx(ya.p0) + `"/>`)
	}
	b.WriteString(`</g><g fill="#444">`)
	for _, t := range yticks {
		b.WriteString(`<text x="` + fmtPx(xa.p0-6) + `" y="` + fmtPx(ya.pixel(t.v)+4) + `" text-anchor="end">` + t.label + `</text>`)
	}
	for _, t := range xticks {
		b.WriteString(`<text x="` + fmtPx(xa.pixel(t.v)) + `" y="` + fmtPx(ya.p0+16) + `" text-anchor="middle">` + t.label + `</text>`)
	}
	b.WriteString(`<text x="` + fmtPx(xa.p1) + `" y="` + fmtPx(ya.p0+31) + `" text-anchor="end">step</text></g>`)
	b.WriteString(`<path d="M` + fmtPx(xa.p0) + " " + fmtPx(ya.p1) + "V" + fmtPx(ya.p0) + "H" + fmtPx(xa.p1) + `" fill="none" stroke="#888"/>`)

	// One path per series, even an empty one, so a reader of the SVG
	// finds every series the legend names.
	for _, s := range ss {
		b.WriteString(`<path class="series" data-name="` + html.EscapeString(s.name) + `" fill="none" stroke="` + s.color + `" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round" d="`)
		pen := byte('M')
		alone := false // the current subpath has a single point so far
		endSubpath := func() {
			if alone {
				// A lone moveto is not stroked; a zero-length segment
				// with round caps shows as a dot.
				b.WriteString("h0")
			}
			alone = false
		}
		s.points(func(x, y float64) {
			if !ya.drawable(y) {
				endSubpath()
				pen = 'M'
				return
			}
			alone = pen == 'M'
			// Appending into a stack buffer rather than calling fmtPx
			// keeps the thousands of coordinates from allocating.
			var buf [32]byte
			p := append(buf[:0], pen)
			p = strconv.AppendFloat(p, xa.pixel(x), 'f', 1, 64)
			p = append(p, ' ')
			p = strconv.AppendFloat(p, ya.pixel(y), 'f', 1, 64)
			b.Write(p)
			pen = 'L'
		})
		endSubpath()
		b.WriteString(`"/>`)
	}

	// Title and legend, laid out in rows above the plot.
	for i, row := range legendRows(title, ss) {
		y := fmtPx(float64(i)*legendRow + 18)
		for _, e := range row {
			if e.series == nil {
				b.WriteString(`<text x="` + fmtPx(e.x) + `" y="` + y + `" font-weight="bold">` + html.EscapeString(title) + `</text>`)
				continue
			}
			b.WriteString(`<rect x="` + fmtPx(e.x) + `" y="` + fmtPx(float64(i)*legendRow+10) + `" width="14" height="3" fill="` + e.series.color + `"/>`)
			b.WriteString(`<text x="` + fmtPx(e.x+18) + `" y="` + y + `">` + html.EscapeString(e.series.name) + `</text>`)
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// legendEntry is the title (series nil) or one series' swatch and name.
type legendEntry struct {
	x      float64
	series *series
}

// legendRows places the title and the legend entries left to right,
// starting a new row when an entry would run past the right margin.
func legendRows(title string, ss []*series) [][]legendEntry {
	var rows [][]legendEntry
	var row []legendEntry
	x := float64(marginLeft)
	place := func(e legendEntry, width float64) {
		if len(row) > 0 && x+width > chartWidth-marginRight {
			rows = append(rows, row)
			row, x = nil, marginLeft
		}
		e.x = x
		row = append(row, e)
		x += width + 14
	}
	if title != "" {
		place(legendEntry{}, charWidth*float64(len(title)))
	}
	for _, s := range ss {
		place(legendEntry{series: s}, 18+charWidth*float64(len(s.name)))
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// linearTicks chooses about five ticks of spacing 1, 2 or 5 times a power
// of ten (and at least minSpacing, when positive) covering [lo, hi]. It
// returns the range to draw: [lo, hi] itself, or widened out to the outer
// ticks when widen is set. An empty range (lo > hi, no data) becomes
// [0, 1]; a single value is padded on both sides.
func linearTicks(lo, hi, minSpacing float64, widen bool) (float64, float64, []tick) {
	switch {
	case lo > hi:
		lo, hi = 0, 1
	case lo == hi:
		pad := math.Max(math.Abs(lo)*0.1, 1)
		if minSpacing > 0 {
			pad = minSpacing
		}
		lo, hi = lo-pad, hi+pad
	}
	spacing := niceSpacing((hi - lo) / 5)
	if minSpacing > 0 && spacing < minSpacing {
		spacing = minSpacing
	}
	first, last := math.Ceil(lo/spacing), math.Floor(hi/spacing)
	if widen {
		first, last = math.Floor(lo/spacing), math.Ceil(hi/spacing)
		lo, hi = first*spacing, last*spacing
	}
	if !(last-first <= 50) {
		// Values so large that the spacing is lost in rounding, or a
		// range that overflowed: label the ends only.
		return lo, hi, []tick{{lo, formatTick(lo, 0)}, {hi, formatTick(hi, 0)}}
	}
	var ticks []tick
	for k := first; k <= last; k++ {
		v := k * spacing
		ticks = append(ticks, tick{v: v, label: formatTick(v, spacing)})
	}
	return lo, hi, ticks
}

// niceSpacing rounds raw up to 1, 2 or 5 times a power of ten.
func niceSpacing(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch norm := raw / mag; {
	case norm <= 1:
		return mag
	case norm <= 2:
		return 2 * mag
	case norm <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// logTicks widens [lo, hi] (both > 0) out to whole decades and puts a tick
// on each decade, on every few decades when there are many, and also on 2
// and 5 times each decade when the range spans two decades or fewer. With
// no positive data (lo > hi) it draws [1, 10].
func logTicks(lo, hi float64) (float64, float64, []tick) {
	if lo > hi {
		lo, hi = 1, 10
	}
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d0 == d1 {
		d1++
	}
	every := math.Max(1, math.Ceil((d1-d0)/6))
	var ticks []tick
	for d := d0; d <= d1; d += every {
		v := math.Pow(10, d)
		ticks = append(ticks, tick{v: v, label: formatTick(v, v)})
		if d1-d0 <= 2 && d < d1 {
			for _, m := range []float64{2, 5} {
				ticks = append(ticks, tick{v: m * v, label: formatTick(m*v, m*v)})
			}
		}
	}
	return math.Pow(10, d0), math.Pow(10, d1), ticks
}

// fmtPx formats a pixel coordinate with one decimal, enough for a sharp
// line and short enough to keep the SVG small.
func fmtPx(v float64) string {
	return strconv.FormatFloat(v, 'f', 1, 64)
}
