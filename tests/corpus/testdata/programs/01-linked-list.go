package main

import (
	"fmt"
	"strings"
)

type node struct {
	val  int
	next *node
}

type list struct {
	head *node
	size int
}

func (l *list) pushFront(v int) {
	l.head = &node{val: v, next: l.head}
	l.size++
}

func (l *list) String() string {
	var parts []string
	for n := l.head; n != nil; n = n.next {
		parts = append(parts, fmt.Sprint(n.val))
	}
	return "[" + strings.Join(parts, " -> ") + "]"
}

func (l *list) reverse() {
	var prev *node
	for cur := l.head; cur != nil; {
		next := cur.next
		cur.next = prev
		prev, cur = cur, next
	}
	l.head = prev
}

var l list

func main() {
	for i := range 5 {
		l.pushFront(i * 10)
	}
	fmt.Println(l.String(), l.size)
	l.reverse()
	fmt.Println(&l)
	fmt.Println(l.head.val, l.head.next.val, l.head.next.next.next.next.next == nil)
}
