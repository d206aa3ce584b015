package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

var sum float64

func main() {
	r := rand.New(rand.NewPCG(1, 2))
	fmt.Println(r.IntN(10), r.IntN(10), r.IntN(10), r.Int64N(1_000_000), r.Uint32())
	fmt.Printf("%.5f %.5f\n", r.Float64(), r.NormFloat64())
	p := r.Perm(8)
	fmt.Println(p)
	deck := []string{"A", "K", "Q", "J", "10"}
	r.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
	fmt.Println(deck, slices.Sorted(slices.Values(p))[7])
	for range 1000 {
		sum += r.Float64()
	}
	fmt.Printf("mean of 1000 draws: %.3f\n", sum/1000)
	cha := rand.New(rand.NewChaCha8([32]byte{1, 2, 3}))
	fmt.Println(cha.IntN(1000), cha.IntN(1000), rand.N(1) == 0)
}
