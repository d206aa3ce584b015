package main

import (
	"fmt"
	"runtime"
)

func try(name string, f func()) {
	defer func() {
		r := recover()
		_, isRuntime := r.(runtime.Error)
		fmt.Printf("%-12s runtime.Error=%-5v %v\n", name, isRuntime, r)
	}()
	f()
}

type box struct{ v int }

var m map[string]int

var p *box

var anything any = "text"

func main() {
	xs := []int{1, 2, 3}
	idx := 5
	zero := 0
	try("index", func() { fmt.Println(xs[idx]) })
	try("slice", func() { fmt.Println(xs[2:idx]) })
	try("nil map", func() { m["k"] = 1 })
	try("nil pointer", func() { fmt.Println(p.v) })
	try("divide", func() { fmt.Println(10 / zero) })
	try("assertion", func() { fmt.Println(anything.(int)) })
	try("closed chan", func() {
		c := make(chan int)
		close(c)
		close(c)
	})
	fmt.Println(m["missing"], len(m), xs[len(xs)-1])
}
