package main

import (
	"fmt"
	"strings"
	"unicode"
)

func shift(r rune, k int) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return 'a' + (r-'a'+rune(k)+26)%26
	case r >= 'A' && r <= 'Z':
		return 'A' + (r-'A'+rune(k)+26)%26
	}
	return r
}

func caesar(s string, k int) string {
	return strings.Map(func(r rune) rune { return shift(r, k) }, s)
}

func isPalindrome(s string) bool {
	var rs []rune
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			rs = append(rs, r)
		}
	}
	for i := 0; i < len(rs)/2; i++ {
		if rs[i] != rs[len(rs)-1-i] {
			return false
		}
	}
	return true
}

func main() {
	msg := "Attack at Dawn, 5 o'clock!"
	enc := caesar(msg, 3)
	fmt.Println(enc)
	fmt.Println(caesar(enc, -3))
	fmt.Println(caesar(msg, 13), caesar(caesar(msg, 13), 13) == msg)
	for _, p := range []string{"A man, a plan, a canal: Panama", "Go gopher", "Was it a car or a cat I saw?", ""} {
		fmt.Printf("%-32q %v\n", p, isPalindrome(p))
	}
}
