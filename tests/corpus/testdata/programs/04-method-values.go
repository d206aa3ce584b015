package main

import (
	"fmt"
	"strings"
)

type counter struct {
	name string
	n    int
}

func (c *counter) add(k int) int {
	c.n += k
	return c.n
}

func (c counter) label(suffix string) string { return c.name + suffix }

func main() {
	c := &counter{name: "hits"}
	inc := c.add
	inc(2)
	inc(3)
	fmt.Println(c.n)
	addExpr := (*counter).add
	addExpr(c, 10)
	fmt.Println(c.n)
	labelExpr := counter.label
	fmt.Println(labelExpr(*c, "!"), labelExpr(counter{name: "other"}, "?"))
	frozen := c.label
	c.name = "renamed"
	fmt.Println(frozen("."), c.label("."))
	transforms := []func(string) string{strings.ToUpper, strings.TrimSpace, c.label}
	for _, f := range transforms {
		fmt.Printf("%q\n", f(" mixed Case "))
	}
	fmt.Printf("%T\n%T\n", addExpr, labelExpr)
}
