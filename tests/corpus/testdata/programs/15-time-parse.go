package main

import (
	"fmt"
	"time"
)

func main() {
	layouts := map[string]string{
		"iso":    time.RFC3339,
		"us":     "01/02/2006 3:04 PM",
		"log":    "2006-01-02 15:04:05.000",
		"custom": "Jan _2, 2006",
	}
	inputs := [][2]string{
		{"iso", "2023-07-14T09:30:00+02:00"},
		{"us", "12/25/2023 6:45 PM"},
		{"log", "2024-01-05 23:59:59.250"},
		{"custom", "Mar  3, 2021"},
		{"iso", "2023-13-01T00:00:00Z"},
		{"us", "yesterday"},
	}
	for _, in := range inputs {
		t, err := time.Parse(layouts[in[0]], in[1])
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(t.UTC().Format(time.RFC3339Nano), t.Weekday())
	}
	loc := time.FixedZone("UTC-5", -5*3600)
	t, err := time.ParseInLocation("2006-01-02 15:04", "2024-06-01 08:00", loc)
	fmt.Println(t, err, t.UTC().Hour())
}
