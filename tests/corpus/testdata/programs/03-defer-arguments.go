package main

import (
	"fmt"
)

func trace(name string) func() {
	fmt.Println("enter", name)
	return func() { fmt.Println("leave", name) }
}

func evaluated() {
	x := 1
	defer fmt.Println("deferred with x =", x)
	defer func() { fmt.Println("closure sees x =", x) }()
	x = 42
	fmt.Println("returning with x =", x)
}

func double(n int) (result int) {
	defer trace("double")()
	defer func() { result *= 2 }()
	return n + 1
}

func safeDiv(a, b int) (q int, ok bool) {
	defer func() {
		if recover() != nil {
			q, ok = 0, false
		}
	}()
	return a / b, true
}

func main() {
	evaluated()
	fmt.Println(double(4), double(10))
	fmt.Println(safeDiv(7, 2))
	fmt.Println(safeDiv(7, 0))
}
