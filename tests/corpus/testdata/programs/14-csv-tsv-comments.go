package main

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

func main() {
	tsv := "# sensor log\nid\tvalue\tunit\n# calibration run\ns1\t  12.5\tC\ns2\t\t C\ns3\t-3\tC\n"
	r := csv.NewReader(strings.NewReader(tsv))
	r.Comma = '\t'
	r.Comment = '#'
	rows, err := r.ReadAll()
	fmt.Println(len(rows), err)
	header := rows[0]
	for _, row := range rows[1:] {
		rec := map[string]string{}
		for i, h := range header {
			rec[h] = strings.TrimSpace(row[i])
		}
		v, err := strconv.ParseFloat(rec["value"], 64)
		if err != nil {
			fmt.Printf("%s: missing value (%q)\n", rec["id"], rec["value"])
			continue
		}
		fmt.Printf("%s: %.1f %s\n", rec["id"], v, rec["unit"])
	}
}
