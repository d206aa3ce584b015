package main

import (
	"fmt"
	"math/bits"
)

type perm uint8

const (
	read perm = 1 << iota
	write
	exec
)

func (p perm) String() string {
	s := []byte("---")
	for i, c := range "rwx" {
		if p&(1<<i) != 0 {
			s[i] = byte(c)
		}
	}
	return string(s)
}

var x uint32 = 0b1011_0000

func main() {
	p := read | exec
	fmt.Println(p, p|write, p&^read, p^exec, p&write == 0)
	fmt.Println(bits.OnesCount32(x), bits.LeadingZeros32(x), bits.TrailingZeros32(x), bits.Len32(x), bits.Reverse8(0b0000_0110))
	a8 := uint8(200)
	fmt.Println(bits.RotateLeft8(0b1000_0001, 1), 1<<10, -16>>2, a8+100, ^0, ^uint8(0))
	hi, lo := bits.Mul64(1<<63, 4)
	sum, carry := bits.Add64(1<<63, 1<<63, 0)
	fmt.Println(hi, lo, sum, carry)
	fmt.Printf("%08b %#x %o\n", 37, 0xBEEF&0x0FF0, 0o755)
}
