package main

import (
	"fmt"
)

type number interface {
	~int | ~int64 | ~float64
}

func sum[T number](xs ...T) T {
	var t T
	for _, x := range xs {
		t += x
	}
	return t
}

func average[T number](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	return float64(sum(xs...)) / float64(len(xs))
}

type celsius float64

type meters int

func (c celsius) String() string { return fmt.Sprintf("%.1fC", float64(c)) }

func main() {
	temps := []celsius{20.5, 22, 19.25}
	dists := []meters{100, 250, 75}
	fmt.Println(sum(temps...), average(temps))
	fmt.Println(sum(dists...), average(dists))
	fmt.Println(sum(1, 2, 3), sum(1.5, 2.5), sum[int64]())
	fmt.Printf("%T %T\n", sum(temps...), sum(dists...))
}
