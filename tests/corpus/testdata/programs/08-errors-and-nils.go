package main

import (
	"errors"
	"fmt"
)

type node struct {
	id   int
	next *node
}

type label string

func (l label) String() string { return "<" + string(l) + ">" }

type status struct {
	Err  error
	code int
	note label
	Note label
}

var nilNode *node

var nilErr error

var nilMap map[string]int

var nilSlice []int

var nilFunc func()

var nilAny any

func main() {
	fmt.Println(nilNode, nilErr, nilMap, nilSlice, nilFunc == nil, nilAny)
	fmt.Printf("%v %+v %#v\n", nilNode, nilErr, nilSlice)
	fmt.Printf("%#v %#v %T %T\n", nilMap, nilAny, nilNode, nilErr)
	n := &node{1, &node{2, nil}}
	fmt.Printf("%v %v %+v\n", n.id, n.next.id, *n.next)
	st := status{errors.New("disk full"), 507, "unexported", "exported"}
	fmt.Printf("%v\n%+v\n", st, st)
	fmt.Printf("%v|%s|%q\n", st.Err, st.Err, st.Err)
	fmt.Println(status{}, fmt.Errorf("wrapped: %w", st.Err))
	fmt.Println(st.note, st.Note, []label{"a"}, struct{ l label }{"b"})
}
