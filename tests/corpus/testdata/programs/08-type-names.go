package main

import (
	"fmt"
)

type celsius float64

type ids []int

type handler func(string) error

type pair struct{ a, b int }

type shape interface{ area() float64 }

var s shape

func main() {
	values := []any{
		3, "s", 2.5, 'r', byte(1), []int{}, map[string]bool{}, [2]int{}, struct{}{},
		celsius(1), ids{1}, handler(nil), pair{}, &pair{}, []pair{}, map[pair]celsius{},
		make(chan int), (<-chan string)(nil), func(int) string { return "" }, new(error),
	}
	for _, v := range values {
		fmt.Printf("%T\n", v)
	}
	fmt.Printf("%T %v\n", s, s)
	fmt.Printf("%v %v %v\n", celsius(1.5), ids{1, 2}, pair{3, 4})
}
