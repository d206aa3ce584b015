package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

type event struct {
	Type  string  `json:"type"`
	User  string  `json:"user"`
	Value float64 `json:"value,omitempty"`
}

func main() {
	stream := `{"type":"login","user":"ann"}
{"type":"buy","user":"ann","value":12.5}
{"type":"buy","user":"bo","value":3}
{"type":"logout","user":"ann"}`
	dec := json.NewDecoder(strings.NewReader(stream))
	totals := map[string]float64{}
	count := 0
	for {
		var e event
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			fmt.Println("error:", err)
			break
		}
		count++
		if e.Type == "buy" {
			totals[e.User] += e.Value
		}
	}
	fmt.Println(count, totals)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "\t")
	enc.Encode(map[string]any{"events": count, "totals": totals, "html": "<b>&</b>"})
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "")
	if err := enc.Encode([]string{"<b>&</b>"}); err != nil {
		fmt.Println(err)
	}
}
