package main

import (
	"bufio"
	"fmt"
	"strings"
)

var order []string

func main() {
	input := `# config file
name = demo
  port=8080

debug = true
# trailing comment
timeout = 2.5s`
	settings := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(input))
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			fmt.Println("bad line", lineNo)
			continue
		}
		k = strings.TrimSpace(k)
		settings[k] = strings.TrimSpace(v)
		order = append(order, k)
	}
	fmt.Println(lineNo, sc.Err(), order)
	for _, k := range order {
		fmt.Printf("%s => %q\n", k, settings[k])
	}
	words := bufio.NewScanner(strings.NewReader("the quick  brown\n\tfox"))
	words.Split(bufio.ScanWords)
	n := 0
	for words.Scan() {
		n++
		fmt.Print("[", words.Text(), "]")
	}
	fmt.Println(n)
	runes := bufio.NewScanner(strings.NewReader("añb"))
	runes.Split(bufio.ScanRunes)
	for runes.Scan() {
		fmt.Printf("%q ", runes.Text())
	}
	fmt.Println()
}
