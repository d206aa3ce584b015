package main

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type cellKey struct{ month, region string }

var months, regions []string

func main() {
	src := `month,region,amount
Jan,north,100
Jan,south,80
Feb,north,120
Feb,east,40
Mar,south,95
Mar,north,110
Mar,east,60
Jan,north,15`
	recs, _ := csv.NewReader(strings.NewReader(src)).ReadAll()
	table := map[cellKey]int{}
	for _, r := range recs[1:] {
		n, _ := strconv.Atoi(r[2])
		table[cellKey{r[0], r[1]}] += n
		if !slices.Contains(months, r[0]) {
			months = append(months, r[0])
		}
		if !slices.Contains(regions, r[1]) {
			regions = append(regions, r[1])
		}
	}
	slices.Sort(regions)
	fmt.Printf("%-5s", "")
	for _, rg := range regions {
		fmt.Printf("%7s", rg)
	}
	fmt.Printf("%7s\n", "total")
	colTotals := make([]int, len(regions))
	for _, m := range months {
		fmt.Printf("%-5s", m)
		rowTotal := 0
		for i, rg := range regions {
			v := table[cellKey{m, rg}]
			rowTotal += v
			colTotals[i] += v
			fmt.Printf("%7d", v)
		}
		fmt.Printf("%7d\n", rowTotal)
	}
	fmt.Printf("%-5s", "all")
	for _, t := range colTotals {
		fmt.Printf("%7d", t)
	}
	fmt.Println()
}
