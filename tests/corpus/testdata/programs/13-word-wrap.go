package main

import (
	"fmt"
	"strings"
)

func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func justify(line string, width int) string {
	words := strings.Fields(line)
	if len(words) < 2 {
		return line
	}
	gaps := len(words) - 1
	spaces := width - len(strings.Join(words, ""))
	var b strings.Builder
	for i, w := range words {
		b.WriteString(w)
		if i < gaps {
			n := spaces / gaps
			if i < spaces%gaps {
				n++
			}
			b.WriteString(strings.Repeat(" ", n))
		}
	}
	return b.String()
}

func main() {
	text := "Go is an open source programming language that makes it simple to build secure, scalable systems."
	for _, l := range wrap(text, 24) {
		fmt.Printf("|%-24s|\n", l)
	}
	lines := wrap(text, 30)
	for i, l := range lines {
		if i < len(lines)-1 {
			l = justify(l, 30)
		}
		fmt.Printf("|%-30s|\n", l)
	}
}
