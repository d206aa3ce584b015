package main

import (
	"fmt"
	"math"
)

var zero float64

var i8 int8 = 127

var u8 uint8 = 0

func main() {
	fmt.Println(math.Sqrt(2), math.Cbrt(27), math.Pow(2, 10), math.Exp(1), math.Log(math.E), math.Log10(1000), math.Log2(8))
	fmt.Println(math.Floor(-2.5), math.Ceil(-2.5), math.Round(-2.5), math.Trunc(-2.5), math.RoundToEven(2.5), math.Abs(-3))
	fmt.Println(math.Mod(7, 3), math.Mod(-7, 3), math.Remainder(7, 3), math.Hypot(3, 4), math.Max(1, math.NaN()))
	inf := math.Inf(1)
	nan := math.NaN()
	fmt.Println(inf, -inf, nan, nan == nan, math.IsNaN(nan), math.IsInf(-inf, -1), 1/inf)
	fmt.Println(1/zero, -1/zero, zero/zero == zero/zero, math.Signbit(math.Copysign(0, -1)))
	fmt.Println(math.MaxInt64, math.MinInt64, math.MaxUint32, math.MaxInt8)
	fmt.Println(math.MaxFloat64, math.SmallestNonzeroFloat64, math.Pi)
	i8++
	u8--
	fmt.Println(i8, u8, 0.1+0.2, 0.1+0.2 == 0.3, float32(0.1), 7/2, -7/2, 7%-2, 7.0/2)
	fmt.Printf("%.2f %.0f %v %v\n", math.Sin(math.Pi/6), math.Cos(math.Pi), math.Atan2(1, 1)*4, math.Float64bits(1.0))
}
