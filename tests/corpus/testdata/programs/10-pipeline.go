package main

import (
	"fmt"
)

func gen(nums ...int) <-chan int {
	out := make(chan int)
	go func() {
		for _, n := range nums {
			out <- n
		}
		close(out)
	}()
	return out
}

func square(in <-chan int) <-chan int {
	out := make(chan int)
	go func() {
		for n := range in {
			out <- n * n
		}
		close(out)
	}()
	return out
}

func filterOdd(in <-chan int) <-chan int {
	out := make(chan int, 2)
	go func() {
		defer close(out)
		for n := range in {
			if n%2 == 1 {
				out <- n
			}
		}
	}()
	return out
}

func main() {
	for v := range square(gen(1, 2, 3, 4)) {
		fmt.Print(v, " ")
	}
	fmt.Println()
	sum := 0
	for v := range filterOdd(square(square(gen(1, 2, 3, 4, 5)))) {
		fmt.Print(v, " ")
		sum += v
	}
	fmt.Println("sum:", sum)
}
