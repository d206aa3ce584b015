package main

import (
	"fmt"
	"sort"
)

type employee struct {
	name   string
	dept   string
	salary int
}

func main() {
	byID := map[int]employee{
		1: {"ann", "eng", 100},
		2: {"bob", "ops", 80},
		3: {"cyd", "eng", 120},
	}
	e := byID[2]
	e.salary += 10
	byID[2] = e
	fmt.Println(byID[2].salary, byID[1].name)
	ptrs := map[string]*employee{}
	for id := 1; id <= 3; id++ {
		emp := byID[id]
		ptrs[emp.name] = &emp
	}
	ptrs["ann"].salary *= 2
	ptrs["cyd"].dept = "research"
	names := make([]string, 0, len(ptrs))
	for n := range ptrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("%s %+v\n", n, *ptrs[n])
	}
	fmt.Println(byID[1].salary, byID)
}
