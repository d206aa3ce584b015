package main

import (
	"encoding/json"
	"fmt"
	"sort"
)

var generic map[string]any

func main() {
	scores := map[string]int{"zed": 3, "amy": 9, "kim": 5}
	byID := map[int]string{10: "ten", 2: "two", 33: "thirty-three"}
	b1, _ := json.Marshal(scores)
	b2, _ := json.Marshal(byID)
	fmt.Println(string(b1), string(b2))
	json.Unmarshal([]byte(`{"n": 1.5, "s": "x", "b": true, "list": [1, "two", null], "obj": {"k": [] }, "nil": null}`), &generic)
	keys := make([]string, 0, len(generic))
	for k := range generic {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: %T %v\n", k, generic[k], generic[k])
	}
	out, _ := json.Marshal(generic)
	fmt.Println(string(out))
}
