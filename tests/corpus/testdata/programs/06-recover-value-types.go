package main

import (
	"errors"
	"fmt"
)

type panicInfo struct {
	code   int
	reason string
}

func capture(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return "no panic"
}

func main() {
	cases := []func(){
		func() { panic("a string") },
		func() { panic(errors.New("an error")) },
		func() { panic(42) },
		func() { panic(panicInfo{code: 7, reason: "custom"}) },
		func() { panic(&panicInfo{code: 8}) },
		func() { panic(fmt.Sprintf("formatted %d", 3)) },
		func() {},
	}
	for i, f := range cases {
		v := capture(f)
		fmt.Printf("%d: %T %v\n", i, v, v)
		switch x := v.(type) {
		case error:
			fmt.Println("   error:", x.Error())
		case panicInfo:
			fmt.Println("   info:", x.code, x.reason)
		case *panicInfo:
			fmt.Println("   info pointer:", x.code)
		}
	}
	v := capture(func() { panic(nil) })
	err, isErr := v.(error)
	fmt.Println(isErr, err)
}
