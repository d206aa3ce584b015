package main

import (
	"fmt"
)

var level = 0

func describe(level int) string {
	return fmt.Sprintf("param level=%d", level)
}

func bump() int {
	level++
	return level
}

func main() {
	x := 1
	name := "outer"
	if x := 10; x > 5 {
		fmt.Println("in if:", x)
	}
	fmt.Println("after if:", x)
	{
		name := "block"
		x++
		fmt.Println(name, x)
	}
	fmt.Println(name, x)
	fmt.Println(describe(99), level)
	first := bump()
	second := bump()
	fmt.Println(first, second, level)
	for x := 0; x < 2; x++ {
		name := fmt.Sprint("loop", x)
		fmt.Println(name)
	}
	x, y := 5, 6
	fmt.Println(x, y, name)
	if v, err := fmt.Sscan("42", &x); err == nil {
		fmt.Println("scanned", v, "value(s), x is now", x)
	}
}
