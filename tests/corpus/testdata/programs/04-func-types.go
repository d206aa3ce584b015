package main

import (
	"fmt"
	"sort"
)

type op func(a, b int) int

func (f op) apply3(a, b, c int) int { return f(f(a, b), c) }

var ops = map[string]op{
	"add": func(a, b int) int { return a + b },
	"mul": func(a, b int) int { return a * b },
	"max": func(a, b int) int {
		if a > b {
			return a
		}
		return b
	},
}

func compose(fs ...func(int) int) func(int) int {
	return func(x int) int {
		for _, f := range fs {
			x = f(x)
		}
		return x
	}
}

func main() {
	names := make([]string, 0, len(ops))
	for k := range ops {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n, ops[n](6, 7), ops[n].apply3(2, 3, 4))
	}
	ops["sub"] = func(a, b int) int { return a - b }
	inc := func(x int) int { return x + 1 }
	sq := func(x int) int { return x * x }
	fmt.Println(compose(inc, sq)(3), compose(sq, inc)(3), compose()(3), ops["sub"].apply3(10, 3, 2))
}
