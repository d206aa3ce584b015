package main

import (
	"fmt"
	"strings"
)

type animal struct {
	name string
	legs int
}

func (a animal) describe() string {
	return fmt.Sprintf("%s has %d legs", a.name, a.legs)
}

func (a animal) sound() string { return "..." }

type dog struct {
	animal
	breed string
}

func (d dog) sound() string { return "woof" }

type bird struct {
	animal
	canFly bool
}

func main() {
	d := dog{animal{"rex", 4}, "collie"}
	b := bird{animal: animal{name: "tweety", legs: 2}, canFly: true}
	fmt.Println(d.describe())
	fmt.Println(b.describe())
	fmt.Println(d.name, d.legs, d.breed, d.animal.name)
	fmt.Println(d.sound(), d.animal.sound(), b.sound())
	d.name = strings.ToUpper(d.name)
	d.animal.legs--
	fmt.Println(d.describe())
	fmt.Printf("%+v\n", d)
	fmt.Printf("%v\n", b)
}
