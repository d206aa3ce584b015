package display

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// formatMetric formats a metric for the progress line: four decimals for
// the usual range of losses and accuracies, so columns stay aligned from
// update to update, and an exponent outside it.
func formatMetric(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case a == 0 || a >= 1e-3 && a < 1e5:
		return strconv.FormatFloat(v, 'f', 4, 64)
	default:
		return strconv.FormatFloat(v, 'e', 3, 64)
	}
}

// formatRate formats a rate with three significant digits and an SI
// suffix: 950, 12.3k, 4.56M.
func formatRate(r float64) string {
	suffix := ""
	for _, s := range []string{"k", "M", "G"} {
		// Round first, so 999.96 becomes "1.00k" rather than "1000".
		if r < 999.5 {
			break
		}
		r /= 1000
		suffix = s
	}
	switch {
	case r < 9.995:
		return strconv.FormatFloat(r, 'f', 2, 64) + suffix
	case r < 99.95:
		return strconv.FormatFloat(r, 'f', 1, 64) + suffix
	default:
		return strconv.FormatFloat(r, 'f', 0, 64) + suffix
	}
}

// formatDuration formats elapsed time and ETAs: 0.4s, 3.2s, 1m05s, 2h03m.
func formatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute-50*time.Millisecond:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour-500*time.Millisecond:
		s := int64(d.Round(time.Second) / time.Second)
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		m := int64(d.Round(time.Minute) / time.Minute)
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
}

// formatTick formats an axis tick value given the tick spacing, with just
// enough decimals to tell neighbouring ticks apart.
func formatTick(v, spacing float64) string {
	if v == 0 {
		v = 0 // a tick computed as -0 must not print "-0"
	}
	a := math.Abs(v)
	if a >= 1e6 && a < 1e12 && math.Mod(v, 1e5) == 0 {
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	}
	if a >= 1e6 || a > 0 && a < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	if a >= 1e4 && math.Mod(v, 1000) == 0 {
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	}
	decimals := 0
	if spacing > 0 && spacing < 1 {
		decimals = int(math.Ceil(-math.Log10(spacing) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
