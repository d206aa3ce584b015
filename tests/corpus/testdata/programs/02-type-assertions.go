package main

import (
	"fmt"
	"io"
	"strings"
)

type named interface{ name() string }

type aged interface{ age() int }

type person struct {
	first string
	years int
}

func (p person) name() string { return p.first }

func (p person) age() int { return p.years }

type robot struct{ serial string }

func (r robot) name() string { return "robot-" + r.serial }

var things []named

var r io.Reader = strings.NewReader("abc")

var empty any

func main() {
	things = append(things, person{"ada", 36}, robot{"x1"}, person{first: "alan", years: 41})
	for _, t := range things {
		if a, ok := t.(aged); ok {
			fmt.Println(t.name(), "is", a.age())
		} else {
			fmt.Println(t.name(), "has no age")
		}
		p, isPerson := t.(person)
		fmt.Printf("  person? %v %q\n", isPerson, p.first)
	}
	_, isWriter := r.(io.Writer)
	_, isSeeker := r.(io.Seeker)
	sr := r.(*strings.Reader)
	fmt.Println(isWriter, isSeeker, sr.Len())
	_, ok := empty.(named)
	fmt.Println(ok)
}
