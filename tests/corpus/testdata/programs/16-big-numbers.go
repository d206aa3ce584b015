package main

import (
	"fmt"
	"math/big"
)

func factorial(n int64) *big.Int {
	r := big.NewInt(1)
	for i := int64(2); i <= n; i++ {
		r.Mul(r, big.NewInt(i))
	}
	return r
}

func fib(n int) *big.Int {
	a, b := big.NewInt(0), big.NewInt(1)
	for range n {
		a.Add(a, b)
		a, b = b, a
	}
	return a
}

func main() {
	f50 := factorial(50)
	fmt.Println(f50)
	fmt.Println(len(f50.String()), f50.BitLen(), fib(100), fib(100).ProbablyPrime(20))
	two := big.NewInt(2)
	fmt.Println(new(big.Int).Exp(two, big.NewInt(200), nil), new(big.Int).Exp(two, big.NewInt(200), big.NewInt(1_000_007)))
	r := big.NewRat(1, 3)
	r.Add(r, big.NewRat(1, 6))
	fmt.Println(r, r.FloatString(5), new(big.Rat).Mul(r, big.NewRat(4, 1)))
	n, ok := new(big.Int).SetString("123456789012345678901234567890", 10)
	q, m := new(big.Int).DivMod(n, big.NewInt(97), new(big.Int))
	fmt.Println(ok, q, m, n.Cmp(f50), new(big.Int).GCD(nil, nil, big.NewInt(84), big.NewInt(36)))
	x := new(big.Float).SetPrec(100).SetInt64(2)
	fmt.Println(x.Sqrt(x).Text('f', 25))
}
