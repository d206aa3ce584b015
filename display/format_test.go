package display

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestFormatMetric(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0.0000"},
		{0.12345, "0.1235"},
		{0.97, "0.9700"},
		{-2.5, "-2.5000"},
		{0.001, "0.0010"},
		{0.0001234, "1.234e-04"},
		{12345.678, "12345.6780"},
		{123456, "1.235e+05"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		if got := formatMetric(tt.v); got != tt.want {
			t.Errorf("formatMetric(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		r    float64
		want string
	}{
		{0, "0.00"},
		{3.14159, "3.14"},
		{45.67, "45.7"},
		{950.2, "950"},
		{999.6, "1.00k"},
		{12345, "12.3k"},
		{4_560_000, "4.56M"},
		{7.2e9, "7.20G"},
		{3e12, "3000G"},
	}
	for _, tt := range tests {
		if got := formatRate(tt.r); got != tt.want {
			t.Errorf("formatRate(%v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0.0s"},
		{0, "0.0s"},
		{420 * time.Millisecond, "0.4s"},
		{3200 * time.Millisecond, "3.2s"},
		{59*time.Second + 900*time.Millisecond, "59.9s"},
		{59*time.Second + 970*time.Millisecond, "1m00s"},
		{65 * time.Second, "1m05s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{59*time.Minute + 59*time.Second + 600*time.Millisecond, "1h00m"},
		{2*time.Hour + 3*time.Minute + 10*time.Second, "2h03m"},
		{30 * time.Hour, "30h00m"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestFormatTick(t *testing.T) {
	tests := []struct {
		v, spacing float64
		want       string
	}{
		{0, 1, "0"},
		{0, 0.5, "0.0"},
		{math.Copysign(0, -1), 0.2, "0.0"},
		{1.5, 0.5, "1.5"},
		{0.25, 0.05, "0.25"},
		{2000, 1000, "2000"},
		{10000, 2000, "10k"},
		{25000, 5000, "25k"},
		{12500, 2500, "12500"},
		{2e6, 1e6, "2M"},
		{2.5e6, 5e5, "2.5M"},
		{1234567, 1, "1.23e+06"},
		{2e12, 1e12, "2e+12"},
		{0.00002, 0.00001, "2e-05"},
		{0.002, 0.002, "0.002"},
	}
	for _, tt := range tests {
		if got := formatTick(tt.v, tt.spacing); got != tt.want {
			t.Errorf("formatTick(%v, %v) = %q, want %q", tt.v, tt.spacing, got, tt.want)
		}
	}
}

func TestNiceSpacing(t *testing.T) {
	tests := []struct{ raw, want float64 }{
		{0.7, 1}, {1, 1}, {1.3, 2}, {3, 5}, {7, 10}, {0.023, 0.05}, {180, 200},
		{0, 1}, {-3, 1}, {math.Inf(1), 1}, {math.NaN(), 1},
	}
	for _, tt := range tests {
		if got := niceSpacing(tt.raw); math.Abs(got-tt.want) > 1e-12*tt.want {
			t.Errorf("niceSpacing(%v) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

func tickLabels(ticks []tick) []string {
	var labels []string
	for _, t := range ticks {
		labels = append(labels, t.label)
	}
	return labels
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		name           string
		lo, hi, minSp  float64
		widen          bool
		wantLo, wantHi float64
		want           []string
	}{
		{"widened y", 0.13, 0.91, 0, true, 0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"steps", 1, 400, 1, false, 1, 400, []string{"100", "200", "300", "400"}},
		{"few steps", 1, 3, 1, false, 1, 3, []string{"1", "2", "3"}},
		{"one step", 5, 5, 1, false, 4, 6, []string{"4", "5", "6"}},
		{"one value", 2, 2, 0, true, 1, 3, []string{"1.0", "1.5", "2.0", "2.5", "3.0"}},
		{"no data", math.Inf(1), math.Inf(-1), 0, true, 0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"negative", -0.3, 0.2, 0, true, -0.3, 0.2, []string{"-0.3", "-0.2", "-0.1", "0.0", "0.1", "0.2"}},
		{"overflowing range", -1e308, 1e308, 0, true, -1e308, 1e308, []string{"-1e+308", "1e+308"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ticks := linearTicks(tt.lo, tt.hi, tt.minSp, tt.widen)
			if math.Abs(lo-tt.wantLo) > 1e-9 || math.Abs(hi-tt.wantHi) > 1e-9 && !math.IsInf(hi, 0) {
				t.Errorf("range = [%v, %v], want [%v, %v]", lo, hi, tt.wantLo, tt.wantHi)
			}
			if got := tickLabels(ticks); !slices.Equal(got, tt.want) {
				t.Errorf("ticks = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		name           string
		lo, hi         float64
		wantLo, wantHi float64
		want           []string
	}{
		{"within a decade", 0.2, 0.9, 0.1, 1, []string{"0.1", "0.2", "0.5", "1"}},
		{"two decades", 0.05, 0.9, 0.01, 1, []string{"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"}},
		{"three decades", 0.05, 3, 0.01, 10, []string{"0.01", "0.1", "1", "10"}},
		{"four decades", 0.001, 2, 0.001, 10, []string{"0.001", "0.01", "0.1", "1", "10"}},
		{"exact decade", 1, 1, 1, 10, []string{"1", "2", "5", "10"}},
		{"no positive data", math.Inf(1), math.Inf(-1), 1, 10, []string{"1", "2", "5", "10"}},
		{"many decades", 1e-9, 1e3, 1e-9, 1e3, []string{"1e-09", "1e-07", "1e-05", "0.001", "0.1", "10", "1000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ticks := logTicks(tt.lo, tt.hi)
			if math.Abs(lo/tt.wantLo-1) > 1e-9 || math.Abs(hi/tt.wantHi-1) > 1e-9 {
				t.Errorf("range = [%v, %v], want [%v, %v]", lo, hi, tt.wantLo, tt.wantHi)
			}
			if got := tickLabels(ticks); !slices.Equal(got, tt.want) {
				t.Errorf("ticks = %q, want %q", got, tt.want)
			}
		})
	}
}
