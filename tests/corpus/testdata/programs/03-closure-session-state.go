package main

import (
	"fmt"
	"strings"
)

var total int

var seen []string

func main() {
	add := func(name string, n int) {
		total += n
		seen = append(seen, name)
	}
	add("apples", 3)
	add("pears", 5)
	fmt.Println(total, seen)
	total = 100
	add("plums", 1)
	fmt.Println(total, strings.Join(seen, ","))
	report := func() string { return fmt.Sprintf("%d items: %v", len(seen), seen) }
	seen = seen[:1]
	fmt.Println(report())
}
