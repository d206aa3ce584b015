package main

import (
	"fmt"
	"strings"
)

func factorial(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return n * factorial(n-1)
}

func hanoi(n int, from, to, via string, moves *[]string) {
	if n == 0 {
		return
	}
	hanoi(n-1, from, via, to, moves)
	*moves = append(*moves, from+"->"+to)
	hanoi(n-1, via, to, from, moves)
}

func permutations(s []rune) []string {
	if len(s) <= 1 {
		return []string{string(s)}
	}
	var out []string
	for i := range s {
		rest := append(append([]rune{}, s[:i]...), s[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, string(s[i])+p)
		}
	}
	return out
}

func ackermann(m, n int) int {
	switch {
	case m == 0:
		return n + 1
	case n == 0:
		return ackermann(m-1, 1)
	}
	return ackermann(m-1, ackermann(m, n-1))
}

var moves []string

func main() {
	fmt.Println(factorial(10), factorial(20))
	hanoi(3, "A", "C", "B", &moves)
	fmt.Println(len(moves), strings.Join(moves, " "))
	fmt.Println(permutations([]rune("abc")))
	fmt.Println(ackermann(2, 3), ackermann(3, 3))
}
