package main

import (
	"fmt"
	"strings"
)

type shape interface {
	area() float64
	name() string
}

type square struct{ side float64 }

func (s square) area() float64 { return s.side * s.side }

func (s square) name() string { return "square" }

type triangle struct{ base, height float64 }

func (t triangle) area() float64 { return t.base * t.height / 2 }

func (t triangle) name() string { return "triangle" }

func totalArea[S shape](xs []S) float64 {
	t := 0.0
	for _, x := range xs {
		t += x.area()
	}
	return t
}

type labelled interface {
	~int | ~string
	label() string
}

type code int

func (c code) label() string { return fmt.Sprintf("#%03d", int(c)) }

func labels[L labelled](xs []L) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = x.label()
	}
	return strings.Join(parts, ",")
}

func main() {
	fmt.Println(totalArea([]square{{1}, {2}, {3}}))
	fmt.Println(totalArea([]triangle{{base: 4, height: 3}}))
	fmt.Println(totalArea([]shape{square{2}, triangle{2, 2}}))
	fmt.Println(labels([]code{7, 42, 100}))
}
