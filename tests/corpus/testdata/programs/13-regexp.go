package main

import (
	"fmt"
	"regexp"
	"strings"
)

func main() {
	logs := `2024-03-01 ERROR disk /dev/sda1 full (98%)
2024-03-01 INFO user=ann action=login
2024-03-02 WARN cpu 91%
2024-03-02 INFO user=bob action=logout`
	dateRE := regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2}) (\w+)`)
	kvRE := regexp.MustCompile(`(?P<key>\w+)=(?P<val>\w+)`)
	pctRE := regexp.MustCompile(`\d+%`)
	for _, line := range strings.Split(logs, "\n") {
		m := dateRE.FindStringSubmatch(line)
		fmt.Printf("day %s level %-5s", m[3], m[4])
		for _, kv := range kvRE.FindAllStringSubmatch(line, -1) {
			fmt.Printf(" %s->%s", kv[kvRE.SubexpIndex("key")], kv[kvRE.SubexpIndex("val")])
		}
		if p := pctRE.FindString(line); p != "" {
			fmt.Print(" pct ", p)
		}
		fmt.Println()
	}
	fmt.Println(pctRE.ReplaceAllStringFunc(logs[:44], strings.ToLower), regexp.MustCompile(`a+`).ReplaceAllString("baaad caat", "A"))
	fmt.Println(kvRE.MatchString("x=1"), dateRE.NumSubexp(), kvRE.SubexpNames())
	_, err := regexp.Compile(`(unclosed`)
	fmt.Println(err)
}
