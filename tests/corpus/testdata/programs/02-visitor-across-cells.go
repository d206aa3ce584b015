package main

import (
	"fmt"
	"strings"
)

type expr interface {
	accept(v visitor) string
}

type visitor interface {
	visitNum(v float64) string
	visitBin(op byte, l, r expr) string
}

type num struct{ v float64 }

func (n num) accept(v visitor) string { return v.visitNum(n.v) }

type bin struct {
	op   byte
	l, r expr
}

func (b bin) accept(v visitor) string { return v.visitBin(b.op, b.l, b.r) }

type printer struct{ parens bool }

func (p printer) visitNum(v float64) string { return fmt.Sprint(v) }

func (p printer) visitBin(op byte, l, r expr) string {
	s := l.accept(p) + " " + string(op) + " " + r.accept(p)
	if p.parens {
		return "(" + s + ")"
	}
	return s
}

type rpn struct{ sep string }

func (r rpn) visitNum(v float64) string { return fmt.Sprint(v) }

func (r rpn) visitBin(op byte, a, b expr) string {
	return strings.Join([]string{a.accept(r), b.accept(r), string(op)}, r.sep)
}

type evaluator struct{}

func (evaluator) visitNum(v float64) string { return fmt.Sprint(v) }

func (e evaluator) visitBin(op byte, l, r expr) string {
	var a, b float64
	fmt.Sscan(l.accept(e), &a)
	fmt.Sscan(r.accept(e), &b)
	switch op {
	case '+':
		return fmt.Sprint(a + b)
	case '-':
		return fmt.Sprint(a - b)
	case '*':
		return fmt.Sprint(a * b)
	}
	return fmt.Sprint(a / b)
}

var vs []visitor = []visitor{printer{true}, rpn{","}, evaluator{}}

func main() {
	e := bin{'*', bin{'+', num{1}, num{2.5}}, bin{op: '-', l: num{v: 7}, r: num{3}}}
	fmt.Println(e.accept(printer{}))
	fmt.Println(e.accept(printer{parens: true}))
	fmt.Println(e.accept(rpn{" "}), "=", e.accept(evaluator{}))
	for _, v := range vs {
		fmt.Println(num{42}.accept(v), bin{'/', num{1}, num{4}}.accept(v))
	}
}
