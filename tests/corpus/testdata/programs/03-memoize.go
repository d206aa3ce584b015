package main

import (
	"fmt"
)

func memoize(f func(int) int) (func(int) int, *int) {
	cache := map[int]int{}
	misses := 0
	return func(n int) int {
		if v, ok := cache[n]; ok {
			return v
		}
		misses++
		v := f(n)
		cache[n] = v
		return v
	}, &misses
}

var fib func(int) int

var misses *int

func main() {
	fib, misses = memoize(func(n int) int {
		if n < 2 {
			return n
		}
		return fib(n-1) + fib(n-2)
	})
	for _, n := range []int{10, 50, 30} {
		v := fib(n)
		fmt.Println(n, v, *misses)
	}
}
