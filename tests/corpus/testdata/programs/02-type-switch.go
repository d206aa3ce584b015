package main

import (
	"errors"
	"fmt"
	"strings"
)

type point struct{ x, y int }

type celsius float64

func (c celsius) String() string { return fmt.Sprintf("%.1f°C", float64(c)) }

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case int:
		return fmt.Sprintf("int %d", x)
	case int64, int32:
		return fmt.Sprintf("sized int %v", x)
	case string:
		return "string of length " + fmt.Sprint(len(x))
	case []int:
		return fmt.Sprintf("slice of %d ints", len(x))
	case point:
		return fmt.Sprintf("point at %d,%d", x.x, x.y)
	case *point:
		return fmt.Sprintf("pointer to point at %d,%d", x.x, x.y)
	case error:
		return "error: " + x.Error()
	case fmt.Stringer:
		return "stringer " + x.String()
	default:
		return fmt.Sprintf("other %T", x)
	}
}

func main() {
	values := []any{nil, 42, int64(7), int32(-1), "héllo", []int{1, 2}, point{1, 2}, &point{3, 4},
		errors.New("boom"), celsius(21.5), 3.14, strings.NewReader("x"), map[string]int{}}
	for i, v := range values {
		fmt.Println(i, describe(v))
	}
}
