package main

import (
	"fmt"
)

type tree struct {
	left, right *tree
	val         int
}

func (t *tree) sum() int {
	if t == nil {
		return 0
	}
	return t.val + t.left.sum() + t.right.sum()
}

func (t *tree) insert(v int) *tree {
	if t == nil {
		return &tree{val: v}
	}
	if v < t.val {
		t.left = t.left.insert(v)
	} else {
		t.right = t.right.insert(v)
	}
	return t
}

func (t *tree) walk(visit func(int)) {
	if t == nil {
		return
	}
	t.left.walk(visit)
	visit(t.val)
	t.right.walk(visit)
}

type summer interface{ sum() int }

var root *tree

var s summer = root

func main() {
	fmt.Println(s.sum(), s == nil, root == nil)
	for _, v := range []int{5, 3, 8, 1, 4, 9, 7} {
		root = root.insert(v)
	}
	root.walk(func(v int) { fmt.Print(v, " ") })
	fmt.Println()
	s = root
	fmt.Println(s.sum(), root.left.sum(), root.right.left.sum())
}
