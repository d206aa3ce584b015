package main

import (
	"fmt"
	"time"
)

type weekly struct {
	day  time.Weekday
	hour int
}

func (w weekly) next(after time.Time) time.Time {
	t := time.Date(after.Year(), after.Month(), after.Day(), w.hour, 0, 0, 0, after.Location())
	for t.Weekday() != w.day || !t.After(after) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

func main() {
	start := time.Date(2024, 12, 30, 18, 0, 0, 0, time.UTC)
	gym := weekly{time.Monday, 19}
	piano := weekly{day: time.Wednesday, hour: 17}
	t := start
	for range 4 {
		t = gym.next(t)
		fmt.Println("gym  ", t.Format("Mon 2006-01-02 15:04"))
	}
	t = start
	for i := 0; i < 3; i++ {
		t = piano.next(t)
		fmt.Println("piano", t.Format("Mon 2006-01-02 15:04"), "in", t.Sub(start))
	}
	fmt.Println(gym.next(time.Date(2024, 12, 30, 19, 0, 0, 0, time.UTC)).Format(time.DateOnly))
}
