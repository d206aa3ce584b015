package main

import (
	"fmt"
	"math"
	"sort"
)

type shape interface {
	area() float64
	perimeter() float64
}

type rect struct{ w, h float64 }

func (r rect) area() float64 { return r.w * r.h }

func (r rect) perimeter() float64 { return 2 * (r.w + r.h) }

type circle struct{ r float64 }

func (c circle) area() float64 { return math.Pi * c.r * c.r }

func (c circle) perimeter() float64 { return 2 * math.Pi * c.r }

func main() {
	shapes := []shape{rect{3, 4}, circle{1}, rect{w: 10, h: 0.5}, circle{r: 2.5}}
	sort.Slice(shapes, func(i, j int) bool { return shapes[i].area() < shapes[j].area() })
	total := 0.0
	for _, s := range shapes {
		fmt.Printf("%-10s area=%7.3f perimeter=%7.3f\n", fmt.Sprint(s), s.area(), s.perimeter())
		total += s.area()
	}
	fmt.Printf("total area %.2f\n", total)
}
