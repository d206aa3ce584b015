//go:build cuda

package graph_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/graph"
)

// TestDeviceStepSumAndApply: a gradient summed over replicas by each way
// DeviceStep has (one replica, the add kernel on one device, NCCL and the
// host across devices) is the replicas' sum in replica order, on the host
// (Host) and on every device (Apply, whose update here copies the sum into
// the variable), for both dtypes.
func TestDeviceStepSumAndApply(t *testing.T) {
	count, err := graph.GPUCount()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		ordinals []int
		nccl     bool
	}{
		{"one", []int{0}, false},
		{"add-kernel", []int{0, 0, 0}, false},
		{"nccl", []int{0, 1}, true},
		{"host", []int{0, 1}, false},
	}
	const n = 1000
	for _, c := range cases {
		for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				if len(c.ordinals) > 1 && c.ordinals[1] >= count {
					t.Skipf("want 2 GPUs, have %d", count)
				}
				gpus, err := graph.OpenGPUs(c.ordinals, c.nccl)
				if err != nil {
					t.Fatal(err)
				}
				defer gpus.Close()
				v := graph.NewVariable("w", []int{n}, dt, make([]float64, n))
				reps := len(c.ordinals)
				progs, hostGrads, devGrads := make([]*graph.Program, reps), make([]*graph.Node, reps), make([]*graph.Node, reps)
				want := make([]float64, n)
				for r := range reps {
					g := graph.New(dt)
					x := g.Placeholder("x", n)
					// Two outputs: the gradient Host reads, and the one Apply
					// uses, which a sum through the host writes back.
					hostGrads[r], devGrads[r] = graph.Scale(x, 2), graph.Scale(x, 3)
					p, err := gpus.Compile(r, g, hostGrads[r], devGrads[r])
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					xs := make([]float64, n)
					for i := range xs {
						xs[i] = float64(i%7 + r)
						want[i] += xs[i]
					}
					p.Feed(x, xs)
					progs[r] = p
				}
				st, err := gpus.Step(progs)
				if err != nil {
					t.Fatal(err)
				}
				for r, p := range progs {
					if err := p.Run(); err != nil {
						t.Fatal(err)
					}
					if err := st.Wait(r); err != nil {
						t.Fatal(err)
					}
				}
				hg, dg := st.Gradient(hostGrads, false), st.Gradient(devGrads, true)
				for _, g := range []*graph.DeviceGrad{hg, dg} {
					if err := g.Sum(); err != nil {
						t.Fatal(err)
					}
				}
				f32, f64, err := hg.Host()
				if err != nil {
					t.Fatal(err)
				}
				got := make([]float64, n)
				for i := range got {
					if dt == graph.Float32 {
						got[i] = float64(f32[i])
					} else {
						got[i] = f64[i]
					}
				}
				checkSum(t, "Host", got, want, 2)

				size := 4
				if dt == graph.Float64 {
					size = 8
				}
				copySum := func(s *gpu.Stream, i int, w, g gpu.Ptr, _ []gpu.Ptr) error {
					return s.CopyDtoD(w, g, n*size)
				}
				if err := st.Apply([]graph.DeviceApply{{Vars: []*graph.Variable{v}, Grads: []*graph.DeviceGrad{dg}, Update: copySum}}); err != nil {
					t.Fatal(err)
				}
				checkSum(t, "Apply", v.Value(), want, 3)
			})
		}
	}
}

// checkSum checks got[i] = scale·want[i], exactly: small integers.
func checkSum(t *testing.T, what string, got, want []float64, scale float64) {
	t.Helper()
	for i := range want {
		if got[i] != scale*want[i] {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], scale*want[i])
		}
	}
}

// ExampleGPUs sums a gradient over two replicas on one GPU.
func ExampleGPUs() {
	gpus, err := graph.OpenGPUs([]int{0, 0}, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gpus.Close()
	var progs []*graph.Program
	var grads []*graph.Node
	for r := range 2 {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 3)
		grad := graph.Scale(x, 2)
		p, err := gpus.Compile(r, g, grad)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer p.Close()
		p.Feed(x, []float64{1, 2, float64(3 + r)})
		progs, grads = append(progs, p), append(grads, grad)
	}
	st, err := gpus.Step(progs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for r, p := range progs {
		if err := p.Run(); err != nil {
			fmt.Println(err)
			return
		}
		st.Wait(r)
	}
	sum := st.Gradient(grads, false)
	if err := sum.Sum(); err != nil {
		fmt.Println(err)
		return
	}
	f32, _, err := sum.Host()
	fmt.Println(f32, err)
	// Output: [4 8 14] <nil>
}
