package main

import (
	"fmt"
)

func makeCounter(step int) (inc func() int, reset func()) {
	n := 0
	inc = func() int {
		n += step
		return n
	}
	reset = func() { n = 0 }
	return
}

func main() {
	byOne, resetOne := makeCounter(1)
	byTen, _ := makeCounter(10)
	fmt.Println(byOne(), byOne(), byOne(), byTen(), byTen())
	resetOne()
	fmt.Println(byOne(), byTen())
	counters := map[string]func() int{}
	for _, name := range []string{"a", "b"} {
		inc, _ := makeCounter(len(name) + 1)
		counters[name] = inc
	}
	counters["a"]()
	fmt.Println(counters["a"](), counters["b"](), byOne())
}
