package main

import (
	"fmt"
)

func main() {
	base := make([]int, 3, 10)
	for i := range base {
		base[i] = i + 1
	}
	a := append(base, 4)
	b := append(base, 5)
	fmt.Println(base, a, b, len(base), cap(base))
	c := append(base[:3:3], 6)
	d := append(base[:3:3], 7)
	c[0] = 100
	fmt.Println(base, c, d, cap(c) >= 4)
	sub := base[1:2]
	fmt.Println(sub, len(sub), cap(sub), sub[:4])
	sub = append(sub, 42)
	fmt.Println(base, a[:4])
	grow := []int{}
	caps := map[int]bool{}
	for i := range 20 {
		grow = append(grow, i)
		caps[cap(grow)] = true
	}
	fmt.Println(len(grow), len(caps) > 2, grow[19])
}
