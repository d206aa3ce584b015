package main

import (
	"errors"
	"fmt"
	"strconv"
)

func main() {
	inputs := []string{"42", "-7", "3.5", "99999999999999999999", "0x1f", "", "12abc"}
	for _, s := range inputs {
		n, err := strconv.ParseInt(s, 0, 64)
		var ne *strconv.NumError
		switch {
		case err == nil:
			fmt.Printf("%q ok %d\n", s, n)
		case errors.Is(err, strconv.ErrRange):
			fmt.Printf("%q out of range (n=%d)\n", s, n)
		case errors.As(err, &ne):
			fmt.Printf("%q %s failed: %v\n", s, ne.Func, ne.Err)
		}
	}
	_, err := strconv.Atoi("nope")
	fmt.Println(err)
	_, err = strconv.ParseBool("maybe")
	fmt.Println(err)
	f, err := strconv.ParseFloat("1e400", 64)
	fmt.Println(f, err)
}
