package main

import (
	"fmt"
	"strings"
)

type state int

const (
	start state = iota
	inWord
	inNumber
	done
)

func (s state) String() string { return [...]string{"start", "word", "number", "done"}[s] }

type tokenizer struct {
	st     state
	tokens []string
	cur    strings.Builder
}

func (t *tokenizer) emit() {
	if t.cur.Len() > 0 {
		t.tokens = append(t.tokens, fmt.Sprintf("%s(%s)", t.st, t.cur.String()))
		t.cur.Reset()
	}
}

func (t *tokenizer) feed(r rune) {
	var next state
	switch {
	case r >= '0' && r <= '9':
		next = inNumber
	case r >= 'a' && r <= 'z':
		next = inWord
	default:
		next = start
	}
	if next != t.st {
		t.emit()
		t.st = next
	}
	if next != start {
		t.cur.WriteRune(r)
	}
}

func main() {
	tk := &tokenizer{}
	for _, r := range "abc 123def,45 x" {
		tk.feed(r)
	}
	tk.emit()
	tk.st = done
	fmt.Println(tk.tokens, tk.st)
}
