package main

import (
	"fmt"
)

type address struct {
	city string
	zip  int
}

type person struct {
	name    string
	age     int
	home    address
	tags    []string
	manager *person
}

func main() {
	boss := &person{name: "ada", age: 50}
	p := person{"bob", 31, address{"paris", 75001}, []string{"dev", "ops"}, boss}
	fmt.Printf("%v\n", p.home)
	fmt.Printf("%+v\n", p.home)
	fmt.Printf("%#v\n", p.home)
	fmt.Printf("%T %T %T\n", p, boss, p.home)
	fmt.Printf("%v\n", *boss)
	fmt.Printf("%+v\n", *boss)
	fmt.Printf("%#v\n", *boss)
	fmt.Printf("%v %+v\n", []address{{"rome", 1}, {"oslo", 2}}, map[string]address{"x": {"lima", 3}})
	fmt.Printf("%#v\n", []address{{"rome", 1}})
	fmt.Printf("%#v\n", map[string]address{"x": {"lima", 3}})
	fmt.Printf("%v %d %x %s\n", struct{ a, b int }{1, 2}, struct{ a, b int }{3, 4}, address{"nyc", 255}, p.tags)
}
