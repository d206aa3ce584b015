package main

import (
	"fmt"
	"iter"
	"maps"
	"slices"
)

func countTo(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 1; i <= n; i++ {
			if !yield(i) {
				fmt.Println("  stopped at", i)
				return
			}
		}
	}
}

func enumerate[T any](xs []T) iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		for i, x := range xs {
			if !yield(i, x) {
				return
			}
		}
	}
}

func main() {
	for i := range countTo(5) {
		fmt.Print(i, " ")
	}
	fmt.Println()
	for i := range countTo(10) {
		if i == 3 {
			break
		}
		fmt.Println("got", i)
	}
	for i, s := range enumerate([]string{"zero", "one", "two"}) {
		fmt.Println(i, s)
	}
	ages := map[string]int{"bo": 3, "al": 7, "cy": 5}
	fmt.Println(slices.Sorted(maps.Keys(ages)), slices.Collect(countTo(4)))
}
