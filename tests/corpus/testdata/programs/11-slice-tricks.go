package main

import (
	"fmt"
	"slices"
)

func filterInPlace(xs []int, keep func(int) bool) []int {
	out := xs[:0]
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func rotate(xs []int, k int) {
	k %= len(xs)
	slices.Reverse(xs[:k])
	slices.Reverse(xs[k:])
	slices.Reverse(xs)
}

func windows(xs []int, size int) [][]int {
	var out [][]int
	for i := 0; i+size <= len(xs); i++ {
		out = append(out, xs[i:i+size])
	}
	return out
}

func main() {
	data := []int{1, 2, 3, 4, 5, 6, 7, 8}
	evens := filterInPlace(data, func(x int) bool { return x%2 == 0 })
	fmt.Println(evens, data)
	nums := []int{1, 2, 3, 4, 5}
	rotate(nums, 2)
	fmt.Println(nums, windows(nums, 3))
	dups := []string{"a", "a", "b", "c", "c", "c", "a"}
	compacted := slices.Compact(slices.Clone(dups))
	fmt.Println(compacted, len(compacted), len(dups))
	nums = slices.DeleteFunc(nums, func(x int) bool { return x > 3 })
	fmt.Println(nums)
}
