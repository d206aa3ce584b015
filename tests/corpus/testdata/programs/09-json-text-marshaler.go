package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

type point struct{ x, y int }

func (p point) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("%d:%d", p.x, p.y)), nil }

func (p *point) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d:%d", &p.x, &p.y)
	return err
}

var back map[point]string

var pts []point

func main() {
	grid := map[point]string{{2, 1}: "b", {0, 0}: "origin", {10, 3}: "far"}
	b, err := json.Marshal(grid)
	fmt.Println(string(b), err)
	err = json.Unmarshal(b, &back)
	fmt.Println(err, len(back), back[point{10, 3}])
	json.NewDecoder(strings.NewReader(`["1:2", "3:4"]`)).Decode(&pts)
	fmt.Println(pts, pts[1].y)
}
