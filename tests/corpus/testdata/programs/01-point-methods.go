package main

import (
	"fmt"
	"math"
)

type point struct {
	x, y float64
}

func (p point) dist(q point) float64 {
	return math.Hypot(p.x-q.x, p.y-q.y)
}

func (p *point) move(dx, dy float64) {
	p.x += dx
	p.y += dy
}

func main() {
	a := point{x: 1, y: 2}
	b := point{4, 6}
	fmt.Println(a.dist(b))
	a.move(3, 4)
	fmt.Println(a.x, a.y, a == b)
	pa := &a
	pa.move(-1, -1)
	fmt.Printf("%v %+v\n", a, *pa)
}
