package main

import "fmt"

// A later cell redefines config, with more fields and a method, before
// any cell uses it.
type config struct {
	name string
	port int
}

func (c config) addr() string { return fmt.Sprintf("%s:%d", c.name, c.port) }

func main() {
	cfgs := []config{{"alpha", 80}, {name: "beta", port: 8080}}
	for _, c := range cfgs {
		fmt.Println(c.addr(), c)
	}
	fmt.Printf("%+v\n", cfgs[1])
}
