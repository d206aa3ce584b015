package main

import (
	"fmt"
)

type vec struct{ x, y float64 }

func (v vec) GoString() string { return fmt.Sprintf("vec(%g, %g)", v.x, v.y) }

func (v vec) String() string { return fmt.Sprintf("<%g %g>", v.x, v.y) }

type path struct {
	name   string
	points []vec
}

func main() {
	v := vec{1, 2.5}
	fmt.Printf("%v %s %#v\n", v, v, v)
	pt := path{"zigzag", []vec{{0, 0}, {1, 1}, {2, 0}}}
	fmt.Printf("%v\n", pt)
	fmt.Printf("%+v\n", pt)
	fmt.Printf("%#v\n", pt)
	m := map[string]vec{"a": {3, 4}}
	fmt.Printf("%v %#v\n", m, m)
	fmt.Printf("%#v %#v %#v\n", []int{1}, "quoted", 42)
}
