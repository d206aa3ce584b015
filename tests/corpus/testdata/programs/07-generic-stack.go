package main

import (
	"fmt"
)

type stack[T any] struct {
	items []T
}

func (s *stack[T]) push(v T) { s.items = append(s.items, v) }

func (s *stack[T]) pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, true
}

func (s stack[T]) size() int { return len(s.items) }

type frame struct {
	fn   string
	line int
}

var ints stack[int]

func main() {
	for i := range 4 {
		ints.push(i * 3)
	}
	calls := &stack[frame]{}
	calls.push(frame{"main", 10})
	calls.push(frame{fn: "parse", line: 42})
	fmt.Println(ints.size(), calls.size())
	for {
		v, ok := ints.pop()
		if !ok {
			break
		}
		fmt.Print(v, " ")
	}
	fmt.Println()
	f, _ := calls.pop()
	fmt.Printf("%+v %d\n", f, calls.size())
	_, ok := (&stack[string]{}).pop()
	fmt.Println(ok)
}
