package main

import (
	"fmt"
	"sort"
)

type employee struct {
	name   string
	age    int
	salary float64
}

type byAge []employee

func (a byAge) Len() int { return len(a) }

func (a byAge) Swap(i, j int) { a[i], a[j] = a[j], a[i] }

func (a byAge) Less(i, j int) bool { return a[i].age < a[j].age }

type bySalaryDesc struct{ byAge }

func (b bySalaryDesc) Less(i, j int) bool { return b.byAge[i].salary > b.byAge[j].salary }

func main() {
	staff := []employee{
		{"ann", 41, 5200},
		{"bob", 29, 4100},
		{"cid", 35, 6100},
		{"dee", 29, 3900},
	}
	sort.Sort(byAge(staff))
	for _, e := range staff {
		fmt.Printf("%s %d %.0f\n", e.name, e.age, e.salary)
	}
	sort.Sort(bySalaryDesc{staff})
	fmt.Println(staff)
	sort.Sort(sort.Reverse(byAge(staff)))
	fmt.Println(staff[0].name, sort.IsSorted(byAge(staff)))
}
