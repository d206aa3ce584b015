package display

import (
	"math"
	"testing"
)

func TestSeriesDownsampling(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		wantStride int
	}{
		{"few", 10, 1},
		{"just below the bound", maxPoints - 1, 1},
		{"at the bound", maxPoints, 2},
		{"many", 10_000, 32},
		{"odd", 12_345, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSeries("y", "#000")
			for i := 1; i <= tt.n; i++ {
				s.add(float64(i), float64(i))
			}
			// The drawn points are the means of consecutive runs of
			// values, so their count-weighted sum is the sum of all
			// values, and the last point sits on the last step.
			var points, count int
			var sum, lastX float64
			s.points(func(x, y float64) {
				points++
				lastX = x
			})
			for _, b := range append(s.buckets, s.pending) {
				count += b.count
				sum += b.sum
				if b.count > 0 && math.Abs(b.y()*float64(b.n)-b.sum) > 1e-9*b.sum {
					t.Fatalf("bucket %+v: y()·n != sum", b)
				}
			}
			if points > maxPoints {
				t.Errorf("%d points drawn, want ≤ %d", points, maxPoints)
			}
			if s.stride != tt.wantStride {
				t.Errorf("stride = %d, want %d", s.stride, tt.wantStride)
			}
			wantSum := float64(tt.n) * float64(tt.n+1) / 2
			if count != tt.n || sum != wantSum {
				t.Errorf("buckets hold %d values summing to %v, want %d summing to %v", count, sum, tt.n, wantSum)
			}
			if lastX != float64(tt.n) {
				t.Errorf("last point at step %v, want %d", lastX, tt.n)
			}
			if s.last != float64(tt.n) || s.count != tt.n {
				t.Errorf("last = %v, count = %d, want %d and %d", s.last, s.count, tt.n, tt.n)
			}
		})
	}
}

func TestSeriesNonFinite(t *testing.T) {
	s := newSeries("y", "#000")
	for _, v := range []float64{1, math.NaN(), 3, math.Inf(1)} {
		s.add(1, v)
	}
	s.halve() // merge the four single-value buckets into two
	var ys []float64
	s.points(func(_, y float64) { ys = append(ys, y) })
	if len(ys) != 2 || ys[0] != 1 || ys[1] != 3 {
		t.Errorf("points = %v, want [1 3]: the mean of the finite values", ys)
	}
	s = newSeries("y", "#000")
	s.add(1, math.NaN())
	s.points(func(_, y float64) { ys = append(ys[:0], y) })
	if len(ys) != 1 || !math.IsNaN(ys[0]) {
		t.Errorf("points of a NaN-only series = %v, want [NaN]", ys)
	}
}
