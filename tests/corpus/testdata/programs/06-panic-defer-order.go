package main

import (
	"fmt"
)

type step struct {
	name string
	log  *[]string
}

func (s step) done() { *s.log = append(*s.log, "undo "+s.name) }

func run(failAt int) (log []string, status string) {
	defer func() {
		if r := recover(); r != nil {
			status = fmt.Sprint("recovered: ", r)
		}
	}()
	for i, name := range []string{"alloc", "connect", "write"} {
		s := step{name, &log}
		defer s.done()
		log = append(log, "do "+name)
		if i == failAt {
			panic(name + " exploded")
		}
	}
	return log, "ok"
}

func main() {
	for _, f := range []int{-1, 1, 0} {
		log, status := run(f)
		fmt.Println(status)
		fmt.Println("  ", log)
	}
}
