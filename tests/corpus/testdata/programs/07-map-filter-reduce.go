package main

import (
	"fmt"
	"strconv"
	"strings"
)

func mapSlice[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func reduce[T, A any](xs []T, init A, f func(A, T) A) A {
	acc := init
	for _, x := range xs {
		acc = f(acc, x)
	}
	return acc
}

type item struct {
	name  string
	price float64
	qty   int
}

func main() {
	cart := []item{{"pen", 1.5, 4}, {"book", 12.0, 1}, {"mug", 7.25, 2}, {"tape", 0.99, 0}}
	inStock := filter(cart, func(i item) bool { return i.qty > 0 })
	names := mapSlice(inStock, func(i item) string { return strings.ToUpper(i.name) })
	total := reduce(inStock, 0.0, func(acc float64, i item) float64 { return acc + i.price*float64(i.qty) })
	fmt.Println(names, total)
	lengths := mapSlice(names, func(s string) int { return len(s) })
	asText := mapSlice(lengths, strconv.Itoa)
	fmt.Println(lengths, strings.Join(asText, "+"), reduce(lengths, 0, func(a, b int) int { return a + b }))
}
