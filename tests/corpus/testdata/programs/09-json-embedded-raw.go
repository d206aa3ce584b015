package main

import (
	"encoding/json"
	"fmt"
)

type base struct {
	ID   int    `json:"id"`
	Kind string `json:"kind"`
}

type circle struct {
	base
	Radius float64 `json:"radius"`
}

type rect struct {
	base
	W, H float64
}

type envelope struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

var envs []envelope

func main() {
	c := circle{base{1, "circle"}, 2}
	b, _ := json.Marshal(c)
	fmt.Println(string(b))
	msgs := `[{"kind":"circle","data":{"id":7,"radius":1.5}},{"kind":"rect","data":{"id":8,"W":2,"H":3}},{"kind":"blob","data":[1,2]}]`
	fmt.Println(json.Unmarshal([]byte(msgs), &envs), len(envs))
	for _, e := range envs {
		switch e.Kind {
		case "circle":
			var c circle
			json.Unmarshal(e.Data, &c)
			fmt.Printf("circle id=%d r=%g\n", c.ID, c.Radius)
		case "rect":
			var r rect
			json.Unmarshal(e.Data, &r)
			fmt.Printf("rect id=%d area=%g\n", r.ID, r.W*r.H)
		default:
			fmt.Printf("unknown %s: %s\n", e.Kind, e.Data)
		}
	}
}
