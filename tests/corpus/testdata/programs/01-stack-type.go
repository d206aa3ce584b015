package main

import (
	"errors"
	"fmt"
)

type stack struct {
	items []int
}

var errEmpty = errors.New("stack is empty")

func (s *stack) push(v int) { s.items = append(s.items, v) }

func (s *stack) pop() (int, error) {
	if len(s.items) == 0 {
		return 0, errEmpty
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, nil
}

func (s stack) peek() int { return s.items[len(s.items)-1] }

func (s stack) size() int { return len(s.items) }

var st stack

func main() {
	for i := 1; i <= 5; i++ {
		st.push(i * i)
	}
	fmt.Println(st.size(), st.peek(), st.items)
	for {
		v, err := st.pop()
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Print(v, " ")
	}
	fmt.Println()
	fmt.Println(st.size(), len(st.items) == 0)
}
