package main

import (
	"encoding/json"
	"fmt"
)

type product struct {
	ID       int               `json:"id"`
	Name     string            `json:"name"`
	Price    float64           `json:"price,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Secret   string            `json:"-"`
	internal int
	Stock    int `json:",string"`
	Note     *string
}

func main() {
	note := "limited"
	items := []product{
		{ID: 1, Name: "lamp", Price: 19.5, Tags: []string{"home", "light"}, Secret: "s3", internal: 9, Stock: 4, Note: &note},
		{ID: 2, Name: "free sample", Attrs: map[string]string{"size": "S", "color": "red"}},
	}
	b, err := json.Marshal(items)
	fmt.Println(string(b), err)
	pretty, _ := json.MarshalIndent(items[0], "", "  ")
	fmt.Println(string(pretty))
}
