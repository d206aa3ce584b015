package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

type dimensions struct {
	W float64 `json:"w"`
	H float64 `json:"h"`
}

type order struct {
	Number   int         `json:"number"`
	Customer string      `json:"customer"`
	Lines    []orderLine `json:"lines"`
	Box      *dimensions `json:"box"`
	Meta     map[string]int
	hidden   string
}

type orderLine struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

var o order

var strict order

var bad order

func main() {
	src := `{"number": 17, "customer": "Zoë", "unknown": true,
  "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}],
  "box": {"w": 30.5, "h": 12}, "Meta": {"b": 2, "a": 1}, "hidden": "x"}`
	err := json.Unmarshal([]byte(src), &o)
	fmt.Println(err)
	fmt.Printf("%+v\n", o.Lines)
	fmt.Println(o.Number, o.Customer, *o.Box, o.Meta, o.hidden == "")
	dec := json.NewDecoder(strings.NewReader(src))
	dec.DisallowUnknownFields()
	fmt.Println(dec.Decode(&strict))
	err = json.Unmarshal([]byte(`{"number": "seventeen"}`), &bad)
	fmt.Println(err)
	err = json.Unmarshal([]byte(`{"number": 1,`), &bad)
	fmt.Println(err)
}
