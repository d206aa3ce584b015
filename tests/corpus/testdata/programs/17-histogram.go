package main

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
)

type histogram struct {
	lo, width float64
	counts    []int
	under     int
	over      int
}

func newHistogram(lo, hi float64, bins int) *histogram {
	return &histogram{lo: lo, width: (hi - lo) / float64(bins), counts: make([]int, bins)}
}

func (h *histogram) add(x float64) {
	i := int(math.Floor((x - h.lo) / h.width))
	switch {
	case i < 0:
		h.under++
	case i >= len(h.counts):
		h.over++
	default:
		h.counts[i]++
	}
}

func (h *histogram) print(scale int) {
	for i, c := range h.counts {
		lo := h.lo + float64(i)*h.width
		fmt.Printf("[%5.1f,%5.1f) %4d %s\n", lo, lo+h.width, c, strings.Repeat("#", c/scale))
	}
	fmt.Println("under", h.under, "over", h.over)
}

func main() {
	rng := rand.New(rand.NewSource(42))
	h := newHistogram(-3, 3, 12)
	for range 2000 {
		h.add(rng.NormFloat64())
	}
	h.print(10)
	ages := []float64{23, 35, 41, 29, 52, 67, 18, 33, 38, 45, 71, 26}
	ah := newHistogram(10, 80, 7)
	for _, a := range ages {
		ah.add(a)
	}
	ah.print(1)
}
