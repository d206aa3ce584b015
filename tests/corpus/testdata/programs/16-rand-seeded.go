package main

import (
	"fmt"
	"math/rand"
	"strings"
)

var ints []int

func main() {
	rng := rand.New(rand.NewSource(42))
	for range 8 {
		ints = append(ints, rng.Intn(100))
	}
	fmt.Println(ints)
	fmt.Printf("%.4f %.4f %.4f\n", rng.Float64(), rng.NormFloat64(), rng.ExpFloat64())
	fmt.Println(rng.Perm(6), rng.Int63n(1000), rng.Int31())
	words := strings.Fields("alpha beta gamma delta epsilon")
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	fmt.Println(words)
	other := rand.New(rand.NewSource(42))
	fmt.Println(other.Intn(100) == ints[0])
	dice := map[int]int{}
	for range 600 {
		dice[other.Intn(6)+1]++
	}
	fmt.Println(dice)
}
