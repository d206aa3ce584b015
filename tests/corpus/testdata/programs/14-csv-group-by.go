package main

import (
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

type group struct {
	count    int
	sum      float64
	min, max float64
	names    []string
}

func main() {
	data := `dept,name,salary
eng,ann,120
ops,bob,80
eng,cyd,100
sales,dee,90
ops,eve,85
eng,fay,140
sales,gus,70`
	rows, err := csv.NewReader(strings.NewReader(data)).ReadAll()
	if err != nil {
		panic(err)
	}
	groups := map[string]*group{}
	for _, row := range rows[1:] {
		s, _ := strconv.ParseFloat(row[2], 64)
		g, ok := groups[row[0]]
		if !ok {
			g = &group{min: s, max: s}
			groups[row[0]] = g
		}
		g.count++
		g.sum += s
		g.min = min(g.min, s)
		g.max = max(g.max, s)
		g.names = append(g.names, row[1])
	}
	depts := make([]string, 0, len(groups))
	for d := range groups {
		depts = append(depts, d)
	}
	sort.Slice(depts, func(i, j int) bool { return groups[depts[i]].sum > groups[depts[j]].sum })
	fmt.Printf("%-6s %5s %7s %6s %6s  %s\n", "dept", "n", "avg", "min", "max", "names")
	for _, d := range depts {
		g := groups[d]
		fmt.Printf("%-6s %5d %7.2f %6.0f %6.0f  %s\n", d, g.count, g.sum/float64(g.count), g.min, g.max, strings.Join(g.names, ","))
	}
}
