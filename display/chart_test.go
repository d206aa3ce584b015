package display

import (
	"math"
	"regexp"
	"testing"
)

func TestChartPathShapes(t *testing.T) {
	pathData := regexp.MustCompile(`class="series"[^>]* d="([^"]*)"`)
	tests := []struct {
		name   string
		logY   bool
		values []float64
		want   *regexp.Regexp // the path's d attribute
	}{
		{"line", false, []float64{1, 2, 3}, regexp.MustCompile(`^M[\d.]+ [\d.]+(L[\d.]+ [\d.]+){2}$`)},
		{"lone point becomes a dot", false, []float64{1}, regexp.MustCompile(`^M[\d.]+ [\d.]+h0$`)},
		{"break at NaN", false, []float64{1, 2, math.NaN(), 3, math.NaN(), 4, 5},
			regexp.MustCompile(`^M[\d.]+ [\d.]+L[\d.]+ [\d.]+M[\d.]+ [\d.]+h0M[\d.]+ [\d.]+L[\d.]+ [\d.]+$`)},
		{"log breaks at ≤ 0", true, []float64{1, 0, 2, 3, -1},
			regexp.MustCompile(`^M[\d.]+ [\d.]+h0M[\d.]+ [\d.]+L[\d.]+ [\d.]+$`)},
		{"nothing drawable", true, []float64{0, -1}, regexp.MustCompile(`^$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSeries("y", palette[0])
			for i, v := range tt.values {
				s.add(float64(i+1), v)
			}
			m := pathData.FindStringSubmatch(renderChart("", tt.logY, []*series{s}))
			if m == nil {
				t.Fatal("no series path in the chart")
			}
			if !tt.want.MatchString(m[1]) {
				t.Errorf("d = %q, want it to match %v", m[1], tt.want)
			}
		})
	}
}
