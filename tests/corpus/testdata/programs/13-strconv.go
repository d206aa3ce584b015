package main

import (
	"fmt"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi("-1234")
	fmt.Println(n+1, strconv.Itoa(n*2))
	f, _ := strconv.ParseFloat("3.14159", 64)
	fmt.Println(strconv.FormatFloat(f, 'f', 2, 64), strconv.FormatFloat(f, 'e', 3, 64), strconv.FormatFloat(f, 'g', -1, 32))
	b, _ := strconv.ParseBool("TRUE")
	fmt.Println(b, strconv.FormatBool(!b))
	fmt.Println(strconv.FormatInt(255, 2), strconv.FormatInt(-255, 16), strconv.FormatUint(1<<63, 36))
	u, err := strconv.ParseUint("ff", 16, 8)
	fmt.Println(u, err)
	_, err = strconv.ParseUint("1ff", 16, 8)
	fmt.Println(err)
	i8, err := strconv.ParseInt("-129", 10, 8)
	fmt.Println(i8, err)
	q := strconv.Quote("tab\there \"quoted\" é ☺")
	fmt.Println(q, strconv.QuoteToASCII("é☺"), strconv.QuoteRune('☺'))
	uq, err := strconv.Unquote(q)
	fmt.Println(uq, err)
	buf := []byte("n=")
	buf = strconv.AppendInt(buf, 42, 10)
	buf = strconv.AppendQuote(append(buf, ' '), "s")
	fmt.Println(string(buf))
}
