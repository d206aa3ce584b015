package main

import (
	"fmt"
	"math"
	"math/rand"
)

type sampler struct {
	rng *rand.Rand
	n   int
}

func (s *sampler) point() (float64, float64) {
	s.n++
	return s.rng.Float64()*2 - 1, s.rng.Float64()*2 - 1
}

func main() {
	s := &sampler{rng: rand.New(rand.NewSource(7))}
	inside := 0
	for range 100000 {
		x, y := s.point()
		if x*x+y*y <= 1 {
			inside++
		}
	}
	est := 4 * float64(inside) / float64(s.n)
	fmt.Printf("pi ~ %.4f (error %.4f) from %d points\n", est, math.Abs(est-math.Pi), s.n)
	walkRNG := rand.New(rand.NewSource(99))
	pos, maxDist := 0, 0
	for range 1000 {
		if walkRNG.Intn(2) == 0 {
			pos--
		} else {
			pos++
		}
		if d := max(pos, -pos); d > maxDist {
			maxDist = d
		}
	}
	fmt.Println("random walk ends at", pos, "max distance", maxDist)
}
