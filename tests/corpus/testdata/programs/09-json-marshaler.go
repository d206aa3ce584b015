package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

type temperature float64

func (t temperature) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(strconv.FormatFloat(float64(t), 'f', 1, 64) + "C")), nil
}

func (t *temperature) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "C"), 64)
	if err != nil {
		return fmt.Errorf("temperature %q: %w", s, err)
	}
	*t = temperature(v)
	return nil
}

type reading struct {
	Station string        `json:"station"`
	Temps   []temperature `json:"temps"`
	Peak    temperature   `json:"peak"`
}

var back reading

func main() {
	r := reading{"oslo", []temperature{-3.25, 0, 4.5}, 4.5}
	b, err := json.Marshal(r)
	fmt.Println(string(b), err)
	err = json.Unmarshal(b, &back)
	fmt.Println(err, back.Station, back.Temps, back.Peak+1)
	err = json.Unmarshal([]byte(`{"peak": "warmC"}`), &back)
	fmt.Println(err)
}
