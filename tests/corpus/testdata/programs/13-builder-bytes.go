package main

import (
	"bytes"
	"fmt"
	"strings"
)

var sb strings.Builder

var buf bytes.Buffer

func main() {
	for i := 3; i > 0; i-- {
		fmt.Fprintf(&sb, "%d...", i)
	}
	sb.WriteString("liftoff")
	sb.WriteByte('!')
	sb.WriteRune('🚀')
	fmt.Println(sb.String(), sb.Len())
	buf.WriteString("header\n")
	buf.Write([]byte("line one\nline two\n"))
	first, err := buf.ReadString('\n')
	fmt.Printf("%q %v %d\n", first, err, buf.Len())
	rest := buf.Bytes()
	fmt.Println(bytes.Count(rest, []byte("line")), bytes.HasPrefix(rest, []byte("line")), string(bytes.ToUpper(rest[:8])))
	fields := bytes.Fields([]byte(" a bb  ccc "))
	fmt.Println(len(fields), string(bytes.Join(fields, []byte("+"))))
	fmt.Println(bytes.Equal([]byte("x"), []byte("x")), bytes.Compare([]byte("a"), []byte("b")), string(bytes.TrimSpace([]byte("  pad  "))))
}
