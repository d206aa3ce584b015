package display

import "math"

// maxPoints bounds the points a series keeps, and so the points its line in
// the chart has: an SVG of a few series stays a few tens of kilobytes
// however long training runs. It is even, so that a full buffer halves.
const maxPoints = 500

// bucket is one point of the chart: the mean of the finite values of
// consecutive steps, drawn at the last of those steps.
type bucket struct {
	x     float64 // step of the newest value in the bucket
	sum   float64 // sum of the finite values
	n     int     // number of finite values
	count int     // number of values, finite or not
}

func (b bucket) y() float64 {
	if b.n == 0 {
		return math.NaN()
	}
	return b.sum / float64(b.n)
}

// series is the downsampled history of one metric. Each stored bucket
// covers stride consecutive values; when the buffer fills, neighbours merge
// pairwise and stride doubles, so memory and chart size stay bounded, each
// value costs O(1) amortized and nothing is allocated after creation.
type series struct {
	name    string
	color   string
	buckets []bucket // len < maxPoints; capacity maxPoints
	pending bucket   // filling; holds fewer than stride values
	stride  int      // values per full bucket; a power of two
	last    float64  // newest value, shown in the progress line
	count   int      // values added
}

func newSeries(name, color string) *series {
	return &series{
		name:    name,
		color:   color,
		buckets: make([]bucket, 0, maxPoints),
		stride:  1,
		last:    math.NaN(),
	}
}

// add records the value v of step x.
func (s *series) add(x, v float64) {
	s.last = v
	s.count++
	s.pending.x = x
	s.pending.count++
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		s.pending.sum += v
		s.pending.n++
	}
	if s.pending.count < s.stride {
		return
	}
	s.buckets = append(s.buckets, s.pending)
	s.pending = bucket{}
	if len(s.buckets) == maxPoints {
		// Halving now, not at the next append, keeps the filling bucket
		// within the bound too.
		s.halve()
	}
}

// halve merges neighbouring buckets pairwise in place and doubles stride.
func (s *series) halve() {
	half := len(s.buckets) / 2
	for i := range half {
		a, b := s.buckets[2*i], s.buckets[2*i+1]
		s.buckets[i] = bucket{x: b.x, sum: a.sum + b.sum, n: a.n + b.n, count: a.count + b.count}
	}
	s.buckets = s.buckets[:half]
	s.stride *= 2
}

// points calls f for each point to draw, oldest first, the filling bucket
// included.
func (s *series) points(f func(x, y float64)) {
	for _, b := range s.buckets {
		f(b.x, b.y())
	}
	if s.pending.count > 0 {
		f(s.pending.x, s.pending.y())
	}
}
