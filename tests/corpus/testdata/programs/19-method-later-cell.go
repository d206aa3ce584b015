package main

import (
	"fmt"
	"strings"
)

type temp struct{ celsius float64 }

func (t temp) fahrenheit() float64 { return t.celsius*9/5 + 32 }

func (t temp) String() string { return fmt.Sprintf("%.1f°C", t.celsius) }

func (t *temp) warm(d float64) { t.celsius += d }

type reading interface{ fahrenheit() float64 }

func main() {
	days := []temp{{12.5}, {20}, {-3}}
	for i := range days {
		days[i].warm(1)
	}
	var parts []string
	for _, d := range days {
		var r reading = d
		parts = append(parts, fmt.Sprintf("%v=%.1f°F", d, r.fahrenheit()))
	}
	fmt.Println(strings.Join(parts, " "))
	fmt.Printf("%+v %T\n", days[0], days[0])
}
