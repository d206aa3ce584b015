package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

type contact struct {
	name, email, note string
}

var sb strings.Builder

func main() {
	people := []contact{
		{"Ann Lee", "ann@example.com", "likes tea, not coffee"},
		{"Bob \"the builder\"", "bob@example.com", ""},
		{"Cy", "cy@example.com", "line one\nline two"},
	}
	w := csv.NewWriter(os.Stdout)
	w.Write([]string{"name", "email", "note"})
	for _, p := range people {
		w.Write([]string{p.name, p.email, p.note})
	}
	w.Flush()
	fmt.Println("error:", w.Error())
	semi := csv.NewWriter(&sb)
	semi.Comma = ';'
	semi.UseCRLF = true
	semi.WriteAll([][]string{{"a;b", "c"}, {"d", " e "}})
	fmt.Printf("%q\n", sb.String())
}
