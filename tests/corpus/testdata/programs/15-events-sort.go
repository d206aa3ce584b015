package main

import (
	"fmt"
	"sort"
	"time"
)

type event struct {
	title string
	at    time.Time
	dur   time.Duration
}

func (e event) end() time.Time { return e.at.Add(e.dur) }

func main() {
	day := func(d, h, m int) time.Time { return time.Date(2024, 5, d, h, m, 0, 0, time.UTC) }
	events := []event{
		{"standup", day(6, 9, 30), 15 * time.Minute},
		{"lunch", day(6, 12, 0), time.Hour},
		{"review", day(7, 10, 0), 45 * time.Minute},
		{"planning", day(6, 9, 0), 90 * time.Minute},
		{"retro", day(7, 16, 0), time.Hour},
	}
	sort.Slice(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	for _, e := range events {
		fmt.Printf("%s %-8s until %s\n", e.at.Format("Mon 15:04"), e.title, e.end().Format("15:04"))
	}
	for i := 0; i < len(events); i++ {
		for j := i + 1; j < len(events); j++ {
			a, b := events[i], events[j]
			if a.at.Before(b.end()) && b.at.Before(a.end()) {
				fmt.Println("overlap:", a.title, b.title, a.end().Sub(b.at))
			}
		}
	}
	byDay := map[string]time.Duration{}
	for _, e := range events {
		byDay[e.at.Format(time.DateOnly)] += e.dur
	}
	fmt.Println(byDay, events[len(events)-1].end().Sub(events[0].at))
}
