package graph

import "testing"

// TestSplitGradientIsConcat: the gradient of x split into parts that are
// all used is their gradients joined, with no add_n and no slice_grad
// zeroing a buffer of x's size per part (attention's q, k and v, issue 22);
// with a part unused, the slices' gradients are summed.
func TestSplitGradientIsConcat(t *testing.T) {
	for _, c := range []struct {
		name string
		use  func(p []*Node) *Node
		want opKind
	}{
		{"all-parts", func(p []*Node) *Node { return Add(Mul(p[0], p[1]), p[2]) }, opConcat},
		{"part-unused", func(p []*Node) *Node { return Mul(p[0], p[2]) }, opAddN},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New(Float64)
			x := g.Placeholder("x", 3, 2, 4)
			d := g.Gradients(Sum(c.use(Split(x, 0, 1, 1, 1))), []*Node{x})[0]
			if d.op != c.want {
				t.Errorf("dx is %s, want %s", ops[d.op].name, ops[c.want].name)
			}
		})
	}
}
