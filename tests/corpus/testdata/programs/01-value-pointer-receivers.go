package main

import (
	"fmt"
)

type counter struct {
	name string
	n    int
}

func (c counter) incValue() { c.n++ }

func (c *counter) incPtr() { c.n++ }

func (c counter) show() string { return fmt.Sprintf("%s=%d", c.name, c.n) }

func main() {
	c := counter{name: "a"}
	c.incValue()
	c.incValue()
	fmt.Println(c.show())
	c.incPtr()
	c.incPtr()
	fmt.Println(c.show())
	cs := []counter{{name: "x"}, {name: "y"}, {name: "z"}}
	for _, k := range cs {
		k.incPtr()
	}
	fmt.Println(cs[0].show(), cs[1].show(), cs[2].show())
	for i := range cs {
		cs[i].incPtr()
		for j := 0; j < i; j++ {
			cs[i].incPtr()
		}
	}
	fmt.Println(cs[0].show(), cs[1].show(), cs[2].show())
	ptrs := []*counter{&cs[0], &cs[2]}
	for _, p := range ptrs {
		p.incPtr()
	}
	fmt.Println(cs[0].n, cs[1].n, cs[2].n)
	f := c.show
	c.incPtr()
	fmt.Println(f(), c.show())
}
