package main

import (
	"fmt"
	"strings"
)

func filter(xs []string, keep func(string) bool) []string {
	var out []string
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func mapStrings(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func reduce(xs []string, init int, f func(int, string) int) int {
	acc := init
	for _, x := range xs {
		acc = f(acc, x)
	}
	return acc
}

func main() {
	words := strings.Fields("the quick brown fox jumps over the lazy dog")
	long := filter(words, func(w string) bool { return len(w) > 3 })
	fmt.Println(long)
	fmt.Println(mapStrings(long, strings.ToUpper))
	minLen := 5
	longer := filter(words, func(w string) bool { return len(w) >= minLen })
	totalLetters := reduce(words, 0, func(acc int, w string) int { return acc + len(w) })
	fmt.Println(longer, totalLetters)
	minLen = 4
	fmt.Println(filter(words, func(w string) bool { return len(w) == minLen }))
}
