package main

import (
	"fmt"
	"strings"
)

func main() {
	s := "  Hello, Gophers! Hello, world.  "
	t := strings.TrimSpace(s)
	fmt.Printf("%q\n", t)
	fmt.Println(strings.Count(t, "Hello"), strings.Index(t, "world"), strings.LastIndex(t, "Hello"), strings.IndexByte(t, '!'))
	fmt.Println(strings.ToUpper(t), strings.ToLower(t))
	fmt.Println(strings.Replace(t, "Hello", "Bye", 1), "|", strings.ReplaceAll(t, "Hello", "Bye"))
	fmt.Printf("%q\n", strings.Split("a,b,,c", ","))
	fmt.Printf("%q\n", strings.SplitN("a,b,,c", ",", 2))
	fmt.Printf("%q\n", strings.Fields("  lots   of\tspace\n here "))
	fmt.Println(strings.Join([]string{"x", "y", "z"}, "/"), strings.Repeat("ab", 3))
	before, after, found := strings.Cut("key=value=more", "=")
	fmt.Println(before, after, found)
	fmt.Println(strings.TrimLeft("xxhixx", "x"), strings.TrimPrefix("xxhixx", "x"), strings.TrimSuffix("file.tar.gz", ".gz"), strings.Trim("--a-b--", "-"))
	fmt.Println(strings.HasPrefix(t, "Hello"), strings.HasSuffix(t, "."), strings.Contains(t, "Go"), strings.ContainsAny(t, "xyz!"), strings.EqualFold("Go", "GO"))
	fmt.Println(strings.Title("unused"), strings.Map(func(r rune) rune {
		if r == 'o' {
			return '0'
		}
		return r
	}, t))
}
