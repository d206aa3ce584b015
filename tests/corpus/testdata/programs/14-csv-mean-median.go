package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

const raw = `city,temp_c,rain_mm
Oslo,4.5,12.1
Rome,18.2,3.0
Lima,19.9,0.0
Oslo,6.1,20.4
Rome,21.0,1.5
Cairo,28.4,0.0
Lima,18.7,0.3`

var temps []float64

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func stddev(xs []float64) float64 {
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

func main() {
	r := csv.NewReader(strings.NewReader(raw))
	records, err := r.ReadAll()
	fmt.Println(len(records), err, records[0])
	for _, rec := range records[1:] {
		v, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			panic(err)
		}
		temps = append(temps, v)
	}
	fmt.Printf("n=%d mean=%.3f median=%.2f sd=%.3f\n", len(temps), mean(temps), median(temps), stddev(temps))
	fmt.Printf("median of first four: %.2f\n", median(temps[:4]))
}
