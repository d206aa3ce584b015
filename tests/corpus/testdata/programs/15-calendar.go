package main

import (
	"fmt"
	"strings"
	"time"
)

func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func calendar(year int, month time.Month) string {
	var b strings.Builder
	first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	title := fmt.Sprintf("%s %d", month, year)
	fmt.Fprintf(&b, "%*s\n", (20+len(title))/2, title)
	b.WriteString("Mo Tu We Th Fr Sa Su\n")
	offset := (int(first.Weekday()) + 6) % 7
	b.WriteString(strings.Repeat("   ", offset))
	for d := 1; d <= daysIn(year, month); d++ {
		fmt.Fprintf(&b, "%2d", d)
		if (offset+d)%7 == 0 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	return strings.TrimRight(b.String(), " \n") + "\n"
}

func main() {
	fmt.Print(calendar(2024, time.February))
	fmt.Print(calendar(2023, time.October))
	for _, y := range []int{1900, 2000, 2023, 2024} {
		fmt.Print(y, ":", daysIn(y, time.February), " ")
	}
	fmt.Println()
}
