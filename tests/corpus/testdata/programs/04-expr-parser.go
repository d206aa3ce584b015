package main

import (
	"fmt"
	"strconv"
	"unicode"
)

type parser struct {
	src []rune
	pos int
}

func (p *parser) peek() rune {
	for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

// expr = term {('+'|'-') term}
func (p *parser) expr() float64 {
	v := p.term()
	for {
		switch p.peek() {
		case '+':
			p.pos++
			v += p.term()
		case '-':
			p.pos++
			v -= p.term()
		default:
			return v
		}
	}
}

// term = factor {('*'|'/') factor}
func (p *parser) term() float64 {
	v := p.factor()
	for {
		switch p.peek() {
		case '*':
			p.pos++
			v *= p.factor()
		case '/':
			p.pos++
			v /= p.factor()
		default:
			return v
		}
	}
}

// factor = number | '(' expr ')' | '-' factor
func (p *parser) factor() float64 {
	switch c := p.peek(); {
	case c == '(':
		p.pos++
		v := p.expr()
		p.peek()
		p.pos++ // ')'
		return v
	case c == '-':
		p.pos++
		return -p.factor()
	}
	start := p.pos
	for p.pos < len(p.src) && (unicode.IsDigit(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	v, _ := strconv.ParseFloat(string(p.src[start:p.pos]), 64)
	return v
}

func eval(s string) float64 {
	p := &parser{src: []rune(s)}
	return p.expr()
}

func main() {
	for _, s := range []string{"1 + 2 * 3", "(1 + 2) * 3", "10 / 4 - 1", "-(2.5 * 4) + 12", "2 * (3 + (4 - 1)) / 3"} {
		fmt.Printf("%-24s = %g\n", s, eval(s))
	}
}
