package main

import (
	"fmt"
)

var funcs []func() int

var ptrs []*string

var printers []func()

func main() {
	for i := 0; i < 3; i++ {
		funcs = append(funcs, func() int { return i * i })
	}
	for _, f := range funcs {
		fmt.Print(f(), " ")
	}
	fmt.Println()
	for _, s := range []string{"x", "y", "z"} {
		ptrs = append(ptrs, &s)
	}
	for _, p := range ptrs {
		fmt.Print(*p)
	}
	fmt.Println()
	for i := range 3 {
		j := i * 10
		printers = append(printers, func() { fmt.Println("i", i, "j", j) })
		i += 100
	}
	for _, p := range printers {
		p()
	}
}
