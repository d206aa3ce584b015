package main

import (
	"fmt"
	"math"
)

const huge = 1 << 100

const big = huge >> 98

const third = 1.0 / 3

const typed int32 = 7

const greeting = "hi"

type id string

const root id = "root"

var f32 float32 = third

var f64 float64 = third

var i8 int8 = big * 31

var u uint = math.MaxUint64 >> 1

const (
	a = iota * 10
	b
	c = "s"
	d
	e = iota
)

func main() {
	fmt.Println(big, huge/(1<<90), third*3 == 1, third)
	fmt.Println(f32, f64, float64(f32) == f64)
	fmt.Printf("%T %T %T %T %v\n", big, third, typed, root, len(greeting))
	x := 10
	y := x / 3 * 3.0
	fmt.Println(i8, u, y, 'a'+1, string(rune('a'+1)), 5/2, 5.0/2, 1e3)
	fmt.Println(a, b, c, d, e)
}
