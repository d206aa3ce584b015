//go:build !cuda

package graph_test

import (
	"errors"
	"testing"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/graph"
)

// TestCompileOnNotBuilt checks that without -tags cuda CompileOn fails
// with an error wrapping gpu.ErrNotBuilt, and mirrors are refused.
func TestCompileOnNotBuilt(t *testing.T) {
	g := graph.New(graph.Float32)
	v := graph.NewVariable("v", []int{2}, graph.Float32, nil)
	out := graph.Scale(g.Var(v), 2)
	if _, err := g.CompileOn(nil, out); !errors.Is(err, gpu.ErrNotBuilt) {
		t.Errorf("CompileOn: got %v, want an error wrapping gpu.ErrNotBuilt", err)
	}
	if _, err := v.Mirror(nil); err == nil {
		t.Error("Mirror(nil) succeeded")
	}
	p, err := g.Compile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Device() != nil || p.Stream() != nil || p.Buffer(out) != 0 || p.Close() != nil {
		t.Error("a CPU program reports device state")
	}
}
