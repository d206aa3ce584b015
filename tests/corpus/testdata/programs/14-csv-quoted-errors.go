package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
)

var pe *csv.ParseError

func main() {
	good := `id,comment
1,"hello, world"
2,"she said ""hi"""
3,"multi
line"`
	recs, err := csv.NewReader(strings.NewReader(good)).ReadAll()
	fmt.Println(err)
	for _, r := range recs {
		fmt.Printf("%q\n", r)
	}
	ragged := "a,b,c\n1,2,3\n4,5\n"
	_, err = csv.NewReader(strings.NewReader(ragged)).ReadAll()
	fmt.Println(err)
	fmt.Println(errors.As(err, &pe), pe.Line, errors.Is(err, csv.ErrFieldCount))
	loose := csv.NewReader(strings.NewReader(ragged))
	loose.FieldsPerRecord = -1
	all, err := loose.ReadAll()
	fmt.Println(len(all), len(all[2]), err)
	_, err = csv.NewReader(strings.NewReader("x,\"bad\"quote\n")).Read()
	fmt.Println(err)
	lazy := csv.NewReader(strings.NewReader("x,\"bad\"quote\n"))
	lazy.LazyQuotes = true
	rec, err := lazy.Read()
	fmt.Printf("%q %v\n", rec, err)
}
