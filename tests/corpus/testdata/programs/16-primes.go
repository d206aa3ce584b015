package main

import (
	"fmt"
)

func sieve(n int) []int {
	composite := make([]bool, n+1)
	var primes []int
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		primes = append(primes, i)
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return primes
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func factorize(n int) map[int]int {
	f := map[int]int{}
	for p := 2; p*p <= n; p++ {
		for n%p == 0 {
			f[p]++
			n /= p
		}
	}
	if n > 1 {
		f[n]++
	}
	return f
}

func main() {
	ps := sieve(100)
	fmt.Println(len(ps), ps)
	fmt.Println(gcd(84, 36), gcd(17, 5), 84*36/gcd(84, 36))
	for _, n := range []int{360, 97, 1001, 1 << 10, 600851475143} {
		fmt.Println(n, factorize(n))
	}
	twin := 0
	for i := 1; i < len(ps); i++ {
		if ps[i]-ps[i-1] == 2 {
			twin++
		}
	}
	fmt.Println("twin pairs below 100:", twin)
}
