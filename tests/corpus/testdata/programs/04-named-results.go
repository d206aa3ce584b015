package main

import (
	"fmt"
)

func divmod(a, b int) (q, r int) {
	q = a / b
	r = a % b
	return
}

func collect(n int) (evens []int, sum int) {
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			evens = append(evens, i)
			sum += i
		}
	}
	return
}

func describe(n int) (kind string, big bool) {
	if n > 100 {
		big = true
	}
	if n%2 == 0 {
		kind = "even"
		return
	}
	kind = "odd"
	return kind, big
}

func main() {
	fmt.Println(divmod(17, 5))
	fmt.Println(divmod(-17, 5))
	for _, n := range []int{5, 3, 8} {
		evens, sum := collect(n)
		fmt.Println(n, evens, sum, len(evens))
	}
	for _, n := range []int{1000, 7, 4, 101} {
		k, b := describe(n)
		fmt.Println(n, k, b)
	}
}
