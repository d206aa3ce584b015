package main

import (
	"fmt"
	"strings"
)

func shout(s string) string { return strings.ToUpper(s) }

// The first greet had no punctuation: this cell redefines it before any
// cell calls it.
func greet(name string) string {
	return fmt.Sprintf("hello, %s!", name)
}

func main() {
	for _, n := range []string{"ann", "bob"} {
		fmt.Println(greet(n), shout(greet(n)))
	}
}
