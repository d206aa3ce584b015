package main

import (
	"fmt"
	"iter"
	"strings"
)

type element[T any] struct {
	val  T
	next *element[T]
}

type list[T any] struct {
	head, tail *element[T]
	n          int
}

func (l *list[T]) add(vs ...T) {
	for _, v := range vs {
		e := &element[T]{val: v}
		if l.tail == nil {
			l.head = e
		} else {
			l.tail.next = e
		}
		l.tail = e
		l.n++
	}
}

func (l *list[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for e := l.head; e != nil; e = e.next {
			if !yield(e.val) {
				return
			}
		}
	}
}

func collect[T any](seq iter.Seq[T]) []T {
	var out []T
	for v := range seq {
		out = append(out, v)
	}
	return out
}

var names list[string]

func main() {
	names.add("ada", "grace", "linus")
	for n := range names.all() {
		fmt.Print(strings.ToUpper(n[:1])+n[1:], " ")
	}
	fmt.Println(names.n)
	nums := &list[float64]{}
	nums.add(1.5, 2.5)
	nums.add(3)
	fmt.Println(collect(nums.all()), collect(names.all())[1])
}
