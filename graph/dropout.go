package graph

import (
	"fmt"
)

// The dropout mask.
var (
	opDropoutMask = newOp() // 0 or 1/(1-rate) from a counter-based random stream
)

func init() {
	defineOps(map[opKind]opDef{
		opDropoutMask: {name: "dropout_mask", cpu: cpu(dropoutMaskKernel, dropoutMaskKernel), grad: dropoutMaskGrad},
	})
}

// DropoutMask returns a node of the given shape whose elements are 0 with
// probability rate and 1/(1-rate) otherwise, drawn from a counter-based
// random stream: element i depends only on (seed, stream, counter, i). The
// counter is read at each Run from step, a node of two elements (usually a
// Variable advanced by AdvanceCounter between Runs) holding the counter's low
// 24 bits and the rest, which float32 holds exactly. Two Programs with the
// same seed, stream and counter draw the same mask; streams differ per
// replica and per layer. The mask carries no gradient.
// It panics with an error wrapping ErrShape if step does not hold two
// elements or rate is outside [0,1).
func DropoutMask(step *Node, shape []int, rate float64, seed, stream uint64) *Node {
	const op = "dropout_mask"
	g := graphOf(op, step)
	checkDims(op, shape)
	if step.size != 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want a counter of 2 elements, got %v", step.shape)))
	}
	if !(rate >= 0 && rate < 1) {
		panic(shapeErr(g, op, fmt.Sprintf("want a rate in [0,1), got %v", rate)))
	}
	out := g.add(opDropoutMask, shape, step)
	out.rate, out.seed, out.stream = rate, seed, stream
	return out
}

// Dropout returns x times DropoutMask(step, x's shape, rate, seed, stream):
// inverted dropout, so the expected value of each element is unchanged. A
// rate of 0 returns x.
func Dropout(x, step *Node, rate float64, seed, stream uint64) *Node {
	graphOf("dropout", x, step)
	if rate == 0 {
		return x
	}
	return Mul(x, DropoutMask(step, x.shape, rate, seed, stream))
}

// counterLow is the range of a counter's low element: 2^24, the integers
// float32 holds exactly.
const counterLow = 1 << 24

// CounterValue returns the value of a counter kept as DropoutMask reads it.
// It panics with an error wrapping ErrShape if v does not hold 2 elements.
func CounterValue(v *Variable) uint64 {
	checkCounter(v)
	x := v.Value()
	return uint64(x[1])*counterLow + uint64(x[0])
}

// AdvanceCounter adds one to a counter kept as DropoutMask reads it, and
// marks its device mirrors stale. Like every write to a Variable, it must
// not run while a Program reads v.
// It panics with an error wrapping ErrShape if v does not hold 2 elements.
func AdvanceCounter(v *Variable) {
	checkCounter(v)
	v.hostWrite()
	if v.dt == Float32 {
		advance(v.f32)
	} else {
		advance(v.f64)
	}
}

func advance[T Float](x []T) {
	x[0]++
	if x[0] >= counterLow {
		x[0] = 0
		x[1]++
	}
}

func checkCounter(v *Variable) {
	if v.Len() != 2 {
		panic(&Error{Op: "counter " + quote(v.name), Msg: fmt.Sprintf("want 2 elements, got shape %v", v.shape), Err: ErrShape})
	}
}

// dropoutMaskGrad: the mask carries no gradient to its counter.
func dropoutMaskGrad(*Node, *Node) []*Node { return []*Node{nil} }

func dropoutMaskKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	step := in[0]
	rate, seed, stream := n.rate, n.seed, n.stream
	return func() { dropoutMask(out, step, rate, seed, stream) }
}

const golden = 0x9E3779B97F4A7C15

// splitmix is SplitMix64's output function: a bijective mix of z+γ.
func splitmix(z uint64) uint64 {
	z += golden
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// dropoutMask is: out[i] = 0 if u(seed, stream, counter, i) < rate, else
// 1/(1-rate), u uniform in [0,1) with 53 bits. Counter-based, so any element
// of any step can be drawn without state and replicas never share draws.
func dropoutMask[T Float](out, step []T, rate float64, seed, stream uint64) {
	ctr := uint64(step[1])*counterLow + uint64(step[0])
	key := splitmix(splitmix(splitmix(seed)^stream) ^ ctr)
	thr := uint64(rate * (1 << 53))
	keep := T(1 / (1 - rate))
	for i := range out {
		if splitmix(key+uint64(i)*golden)>>11 >= thr {
			out[i] = keep
		} else {
			out[i] = 0
		}
	}
}
