package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

type sale struct {
	day     int
	product string
	units   int
	price   float64
}

func (s sale) revenue() float64 { return float64(s.units) * s.price }

func parseSale(rec []string) (sale, error) {
	day, err := strconv.Atoi(rec[0])
	if err != nil {
		return sale{}, fmt.Errorf("day: %w", err)
	}
	units, err := strconv.Atoi(rec[2])
	if err != nil {
		return sale{}, fmt.Errorf("units: %w", err)
	}
	price, err := strconv.ParseFloat(rec[3], 64)
	if err != nil {
		return sale{}, fmt.Errorf("price: %w", err)
	}
	return sale{day, rec[1], units, price}, nil
}

var sales []sale

func main() {
	src := "1,widget,3,2.50\n1,gadget,1,10\n2,widget,7,2.50\n2,doohickey,x,1\n3,gadget,2,9.5\n3,widget,1,2.75\n"
	r := csv.NewReader(strings.NewReader(src))
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		s, err := parseSale(rec)
		if err != nil {
			line, _ := r.FieldPos(0)
			fmt.Printf("skipping line %d: %v\n", line, err)
			continue
		}
		sales = append(sales, s)
	}
	sort.SliceStable(sales, func(i, j int) bool { return sales[i].revenue() > sales[j].revenue() })
	for _, s := range sales[:3] {
		fmt.Printf("day %d %-8s %6.2f\n", s.day, s.product, s.revenue())
	}
	perDay := map[int]float64{}
	for _, s := range sales {
		perDay[s.day] += s.revenue()
	}
	fmt.Println(len(sales), perDay)
}
