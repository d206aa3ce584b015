package rt

import "testing"

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
