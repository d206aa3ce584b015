package main

import (
	"fmt"
)

func grade(score int) string {
	switch {
	case score >= 90:
		return "A"
	case score >= 80:
		return "B"
	case score >= 70:
		return "C"
	default:
		return "F"
	}
}

func features(plan string) []string {
	var fs []string
	switch plan {
	case "enterprise":
		fs = append(fs, "sso")
		fallthrough
	case "pro":
		fs = append(fs, "api")
		fallthrough
	case "basic":
		fs = append(fs, "web")
	case "trial", "demo":
		fs = append(fs, "web (limited)")
	default:
		fs = append(fs, "none")
	}
	return fs
}

func main() {
	for _, s := range []int{95, 85, 72, 40} {
		fmt.Print(grade(s), " ")
	}
	fmt.Println()
	for _, p := range []string{"enterprise", "pro", "basic", "demo", "free"} {
		fmt.Println(p, features(p))
	}
	switch n := len(features("pro")); {
	case n > 1:
		fmt.Println("several:", n)
	case n == 1:
		fmt.Println("one")
	}
	switch x := 5; x {
	case 1, 2, 3:
		fmt.Println("small")
	case 4, 5:
		fmt.Println("medium")
		if x == 5 {
			break
		}
		fmt.Println("unreachable for 5")
	}
}
