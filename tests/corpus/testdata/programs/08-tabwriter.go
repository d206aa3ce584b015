package main

import (
	"fmt"
	"os"
	"text/tabwriter"
)

type planet struct {
	name   string
	moons  int
	radius float64
	rings  bool
}

func main() {
	planets := []planet{
		{"Mercury", 0, 2439.7, false},
		{"Earth", 1, 6371.0, false},
		{"Jupiter", 95, 69911, true},
		{"Saturn", 146, 58232, true},
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tMOONS\tRADIUS\tRINGS")
	for _, p := range planets {
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%v\n", p.name, p.moons, p.radius, p.rings)
	}
	if err := w.Flush(); err != nil {
		fmt.Println(err)
	}
	right := tabwriter.NewWriter(os.Stdout, 0, 0, 1, '.', tabwriter.AlignRight|tabwriter.Debug)
	for _, p := range planets[:2] {
		fmt.Fprintf(right, "%s\t%d\t\n", p.name, p.moons)
	}
	if err := right.Flush(); err != nil {
		fmt.Println(err)
	}
}
