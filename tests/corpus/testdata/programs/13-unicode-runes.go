package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

var letters, digits, spaces, upper, other int

func reverse(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

func main() {
	s := "Héllo, 世界! 123"
	fmt.Println(len(s), utf8.RuneCountInString(s), []rune(s)[7], string([]rune(s)[7:9]))
	for i, r := range s[:8] {
		fmt.Printf("%d:%c(%d) ", i, r, utf8.RuneLen(r))
	}
	fmt.Println()
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			upper++
			letters++
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		case unicode.IsSpace(r):
			spaces++
		default:
			other++
		}
	}
	fmt.Println(letters, digits, spaces, upper, other, unicode.Is(unicode.Han, '世'))
	r, size := utf8.DecodeRuneInString("€uro")
	fmt.Println(reverse(s), string(r), size, utf8.ValidString("\xff"), strings.ToUpper("straße"))
	bad := string([]byte{'a', 0xff, 'b'})
	for _, r := range bad {
		fmt.Printf("%U ", r)
	}
	fmt.Println()
}
