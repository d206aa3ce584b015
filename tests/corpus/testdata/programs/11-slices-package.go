package main

import (
	"fmt"
	"slices"
	"strings"
)

func main() {
	xs := []int{5, 2, 8, 2, 9, 1, 5, 5}
	s := slices.Clone(xs)
	slices.Sort(s)
	fmt.Println(s, xs)
	i, found := slices.BinarySearch(s, 8)
	fmt.Println(i, found, slices.Index(xs, 9), slices.Contains(xs, 7))
	fmt.Println(slices.Max(xs), slices.Min(xs), slices.Compact(s))
	words := []string{"pear", "fig", "apple"}
	words = slices.Insert(words, 1, "kiwi", "lime")
	fmt.Println(words)
	words = slices.Delete(words, 0, 2)
	fmt.Println(words, len(words))
	slices.Reverse(words)
	fmt.Println(words, slices.Equal(words, []string{"apple", "fig", "lime"}))
	idx := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "f") })
	fmt.Println(idx, slices.ContainsFunc(words, func(w string) bool { return len(w) > 4 }))
	for c := range slices.Chunk([]int{1, 2, 3, 4, 5}, 2) {
		fmt.Print(c, " ")
	}
	fmt.Println()
	fmt.Println(slices.Repeat([]string{"ab"}, 3), slices.Concat([]int{1}, []int{2, 3}, nil, []int{4}))
}
