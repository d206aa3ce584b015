package rt

import "testing"

// The loops of cells: a safe point per iteration (Poll) against none, and
// an accumulator that is a package variable, as a cell's top-level
// variables are (each update goes through memory: about 2x here, with or
// without the safe point).

var sink int

func BenchmarkLoopPoll(b *testing.B) {
	for n := 0; n < b.N; n++ {
		s := 0
		for i := 0; i < 1000; i++ {
			Poll()
			s += i % 7
		}
		sink = s
	}
}

func BenchmarkLoop(b *testing.B) {
	for n := 0; n < b.N; n++ {
		s := 0
		for i := 0; i < 1000; i++ {
			s += i % 7
		}
		sink = s
	}
}

var global int

func BenchmarkLoopGlobal(b *testing.B) {
	for n := 0; n < b.N; n++ {
		global = 0
		for i := 0; i < 1000; i++ {
			Poll()
			global += i % 7
		}
	}
}
