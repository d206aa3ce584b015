package main

import (
	"fmt"
	"time"
)

var total time.Duration

func main() {
	d := 90*time.Minute + 30*time.Second + 250*time.Millisecond
	fmt.Println(d, d.Hours(), d.Minutes(), d.Seconds(), d.Milliseconds())
	fmt.Println(d.Round(time.Minute), d.Truncate(time.Hour), d.Round(time.Second))
	fmt.Println(time.Duration(1500)*time.Microsecond, time.Duration(0), -d, 2*time.Nanosecond)
	for _, s := range []string{"1h15m", "2.5s", "300ms", "-1m30s", "1d", "42"} {
		p, err := time.ParseDuration(s)
		fmt.Printf("%-8s %-12v %v\n", s, p, err)
	}
	laps := []time.Duration{62 * time.Second, 59500 * time.Millisecond, time.Minute + 3*time.Second}
	best := laps[0]
	for _, l := range laps {
		total += l
		best = min(best, l)
	}
	fmt.Println(total, total/time.Duration(len(laps)), best, total > 3*time.Minute)
}
