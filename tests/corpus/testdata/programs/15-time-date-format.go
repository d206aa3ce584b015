package main

import (
	"fmt"
	"time"
)

func main() {
	t := time.Date(2024, time.February, 29, 13, 4, 5, 123456789, time.UTC)
	fmt.Println(t)
	fmt.Println(t.Format(time.RFC3339), t.Format(time.RFC3339Nano))
	fmt.Println(t.Format("2006-01-02 15:04"), t.Format("Mon Jan 2 3:04PM"), t.Format("02/01/06 .000"))
	fmt.Println(t.Year(), t.Month(), t.Day(), t.Weekday(), t.YearDay(), t.Hour(), t.Nanosecond())
	next := t.AddDate(1, 0, 0)
	fmt.Println(next.Format(time.DateOnly), t.AddDate(0, 1, 0).Format(time.DateOnly), t.AddDate(0, 0, -29).Format(time.DateOnly))
	_, week := t.ISOWeek()
	fmt.Println(week, t.Unix(), t.Truncate(time.Hour).Format(time.TimeOnly))
	tokyo := time.FixedZone("JST", 9*60*60)
	local := t.In(tokyo)
	fmt.Println(local.Format(time.RFC1123Z), local.Equal(t), local == t)
	fmt.Println(time.Unix(0, 0).UTC(), time.Date(2023, 12, 32, 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
}
