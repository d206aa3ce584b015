package main

import (
	"fmt"
	"strings"
)

type reader interface {
	read() (string, bool)
}

type writer interface {
	write(s string)
}

type readWriter interface {
	reader
	writer
}

type queue struct {
	items []string
	log   strings.Builder
}

func (q *queue) write(s string) {
	q.items = append(q.items, s)
	fmt.Fprintf(&q.log, "w:%s ", s)
}

func (q *queue) read() (string, bool) {
	if len(q.items) == 0 {
		return "", false
	}
	s := q.items[0]
	q.items = q.items[1:]
	fmt.Fprintf(&q.log, "r:%s ", s)
	return s, true
}

func pump(dst writer, src reader) int {
	n := 0
	for {
		s, ok := src.read()
		if !ok {
			return n
		}
		dst.write(strings.ToUpper(s))
		n++
	}
}

var rw readWriter = &queue{}

func main() {
	for _, w := range strings.Fields("alpha beta gamma") {
		rw.write(w)
	}
	out := &queue{}
	fmt.Println(pump(out, rw), out.items)
	fmt.Println(strings.TrimSpace(rw.(*queue).log.String()))
	fmt.Println(strings.TrimSpace(out.log.String()))
}
