package main

import (
	"fmt"
)

func countdown(n int) {
	for i := 0; i < n; i++ {
		defer fmt.Print(i, " ")
	}
	fmt.Print("deferred: ")
}

func nested() {
	defer fmt.Println("outer done")
	for _, s := range []string{"a", "b"} {
		func() {
			defer fmt.Println("inner done", s)
			fmt.Println("inner", s)
		}()
	}
}

func main() {
	countdown(3)
	fmt.Println()
	countdown(5)
	fmt.Println()
	nested()
}
