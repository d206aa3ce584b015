package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

type countingWriter struct {
	w     io.Writer
	bytes int
	lines int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.bytes += n
	c.lines += strings.Count(string(p[:n]), "\n")
	return n, err
}

type upper struct{ w io.Writer }

func (u upper) Write(p []byte) (int, error) {
	return u.w.Write([]byte(strings.ToUpper(string(p))))
}

var w io.Writer = upper{os.Stdout}

func main() {
	cw := &countingWriter{w: os.Stdout}
	fmt.Fprintf(cw, "hello %s\n", "world")
	fmt.Fprintln(cw, "second line", 2)
	io.WriteString(upper{cw}, "shouting now\n")
	copied, err := io.Copy(cw, strings.NewReader("copied\ntext\n"))
	fmt.Println(cw.bytes, cw.lines, copied, err)
	fmt.Fprintf(w, "%d bytes in %d lines\n", cw.bytes, cw.lines)
}
