package main

import (
	"fmt"
)

var empty []int

func main() {
	src := []int{1, 2, 3, 4, 5}
	dst := make([]int, 3)
	n := copy(dst, src)
	fmt.Println(n, dst)
	n = copy(src[1:], src)
	fmt.Println(n, src)
	buf := make([]byte, 8)
	n = copy(buf, "héllo")
	fmt.Println(n, buf, string(buf[:n]))
	clone := append([]int(nil), src...)
	clone[0] = -1
	fmt.Println(src[0], clone[0], copy(empty, src), empty == nil)
	matrix := [][]int{{1, 2}, {3, 4}}
	shallow := make([][]int, len(matrix))
	copy(shallow, matrix)
	shallow[0][0] = 99
	shallow[1] = []int{7, 7}
	fmt.Println(matrix, shallow)
}
