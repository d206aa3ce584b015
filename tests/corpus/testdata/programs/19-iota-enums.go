package main

import (
	"fmt"
	"strings"
)

type weekday int

const (
	sunday weekday = iota
	monday
	tuesday
	wednesday
	thursday
	friday
	saturday
)

var dayNames = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

func (d weekday) String() string { return dayNames[d] }

func (d weekday) weekend() bool { return d == saturday || d == sunday }

type size int64

const (
	_       = iota
	kb size = 1 << (10 * iota)
	mb
	gb
)

func (s size) String() string {
	switch {
	case s >= gb:
		return fmt.Sprintf("%.1fGB", float64(s)/float64(gb))
	case s >= mb:
		return fmt.Sprintf("%.1fMB", float64(s)/float64(mb))
	case s >= kb:
		return fmt.Sprintf("%.1fKB", float64(s)/float64(kb))
	}
	return fmt.Sprintf("%dB", int64(s))
}

var weekend []string

func main() {
	for d := sunday; d <= saturday; d++ {
		if d.weekend() {
			weekend = append(weekend, d.String())
		}
	}
	fmt.Println(monday, friday+1, strings.Join(weekend, "+"), int(wednesday))
	fmt.Println(kb, mb, gb, size(1536), size(3*gb+gb/2), size(12))
	fmt.Printf("%v %d %s\n", tuesday, tuesday, []weekday{thursday, sunday})
}
