package strategy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
)

// pairReduce is an all-reduction of two in-process workers, for fuse: each
// worker's call waits for the other's and both get the sum in rank order.
// It records the length of every reduction rank 0 makes.
type pairReduce struct {
	mu    sync.Mutex
	parts [2][]float32
	turn  chan struct{} // closed when both ranks' parts are in; replaced per call
	done  sync.WaitGroup
	lens  []int
}

func newPairReduce() *pairReduce { return &pairReduce{turn: make(chan struct{})} }

func (p *pairReduce) rank(r int) func([]float32) error {
	return func(buf []float32) error {
		p.mu.Lock()
		p.parts[r] = buf
		turn := p.turn
		both := p.parts[1-r] != nil
		if both {
			if len(p.parts[0]) != len(p.parts[1]) {
				panic(fmt.Sprintf("ranks reduce %d and %d elements", len(p.parts[0]), len(p.parts[1])))
			}
			p.lens = append(p.lens, len(buf))
			for i := range p.parts[0] {
				s := p.parts[0][i] + p.parts[1][i]
				p.parts[0][i], p.parts[1][i] = s, s
			}
			p.parts = [2][]float32{}
			p.turn = make(chan struct{})
			close(turn)
		}
		p.mu.Unlock()
		if !both {
			<-turn
		}
		return nil
	}
}

// TestFuse checks that the fused reduction gives every gradient the bits of
// its own reduction, rank 0's plus rank 1's, with the buckets the limit
// allows: a gradient that fits joins the bucket, one that would overflow it
// starts the next, and one of at least alone elements goes alone, in place,
// as it comes.
func TestFuse(t *testing.T) {
	const limit = 10
	tests := []struct {
		name     string
		alone    int
		lens     []int // 0: an F64 gradient, skipped by the F32 pass
		wantLens []int
	}{
		{"one", limit, []int{4}, []int{4}},
		{"all fit", limit, []int{3, 4, 2}, []int{9}},
		{"exactly full", limit, []int{6, 4}, []int{10}},
		{"overflow", limit, []int{3, 4, 5, 2}, []int{7, 7}},
		{"long alone", limit, []int{3, 12, 2, 10}, []int{12, 10, 5}},
		{"long first", limit, []int{11, 1, 1}, []int{11, 2}},
		{"other dtype between", limit, []int{3, 0, 4}, []int{7}},
		{"none", limit, []int{0}, nil},
		{"alone below limit", 4, []int{3, 4, 1, 5, 2, 3}, []int{4, 5, 9}},
		{"alone after a full bucket", 6, []int{5, 5, 6, 5}, []int{6, 10, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.lens))))
			var grads [2][]Grad
			var want [][]float32
			for _, n := range tt.lens {
				if n == 0 {
					for r := range grads {
						grads[r] = append(grads[r], Grad{F64: []float64{1}})
					}
					want = append(want, nil)
					continue
				}
				w := make([]float32, n)
				for r := range grads {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(rng.NormFloat64())
					}
					grads[r] = append(grads[r], Grad{F32: x})
				}
				for i := range w {
					w[i] = grads[0][len(grads[0])-1].F32[i] + grads[1][len(grads[1])-1].F32[i]
				}
				want = append(want, w)
			}
			p := newPairReduce()
			var buckets [2][]float32
			var errs [2]error
			var wg sync.WaitGroup
			for r := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[r] = fuse(grads[r], &buckets[r], limit, tt.alone, func(g Grad) []float32 { return g.F32 }, p.rank(r))
				}()
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if !slices.Equal(p.lens, tt.wantLens) {
				t.Errorf("lengths %v: reductions of %v elements, want %v", tt.lens, p.lens, tt.wantLens)
			}
			for r := range grads {
				for k, g := range grads[r] {
					if want[k] == nil {
						if g.F64[0] != 1 {
							t.Errorf("rank %d: the float64 gradient %d changed to %v", r, k, g.F64)
						}
						continue
					}
					for i := range g.F32 {
						if math.Float32bits(g.F32[i]) != math.Float32bits(want[k][i]) {
							t.Errorf("rank %d: gradient %d element %d = %v, want %v", r, k, i, g.F32[i], want[k][i])
						}
					}
				}
			}
		})
	}
}

// doubling is a Cluster of 2 workers in one process whose other worker
// holds the same buffers as this one: a reduction doubles them. Its
// reductions fail when fail is set.
type doubling struct {
	calls int
	fail  error
}

func (d *doubling) Rank() int { return 0 }
func (d *doubling) Size() int { return 2 }
func (d *doubling) AllReduceF32(buf []float32) error {
	d.calls++
	for i := range buf {
		buf[i] += buf[i]
	}
	return d.fail
}
func (d *doubling) AllReduceF64(buf []float64) error {
	d.calls++
	for i := range buf {
		buf[i] += buf[i]
	}
	return d.fail
}
func (d *doubling) AllGather(local []float64) ([][]float64, error) {
	return [][]float64{local, local}, d.fail
}
func (d *doubling) Broadcast(buf []byte, root int) ([]byte, error) { return buf, d.fail }

// mlpGrads returns gradients of the shapes of an MLP's variables in dt, the
// layers' widths dims, input first.
func mlpGrads(dt graph.DType, dims ...int) []Grad {
	var grads []Grad
	for i := 0; i+1 < len(dims); i++ {
		for _, shape := range [][]int{{dims[i], dims[i+1]}, {dims[i+1]}} {
			v := graph.NewVariable(fmt.Sprintf("dense_%d/%d", i, len(shape)), shape, dt, nil)
			n := v.Len()
			g := Grad{Var: v}
			if dt == graph.Float32 {
				g.F32 = make([]float32, n)
				for j := range g.F32 {
					g.F32[j] = float32(j % 7)
				}
			} else {
				g.F64 = make([]float64, n)
				for j := range g.F64 {
					g.F64[j] = float64(j % 7)
				}
			}
			grads = append(grads, g)
		}
	}
	return grads
}

// TestSumAcrossFusedAllocs checks that the fused sum of the MLP's gradients
// across workers is three reductions (the two long gradients alone, the
// four others in one bucket) and, its bucket made by the first step,
// allocates nothing in the steps after.
func TestSumAcrossFusedAllocs(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			c := &doubling{}
			s := NewMirrored(WithReplicas(1), WithCluster(c), WithDType(dt))
			defer s.Close()
			grads := mlpGrads(dt, 784, 512, 512, 10)
			if err := s.sumAcrossFused(grads); err != nil {
				t.Fatal(err)
			}
			if c.calls != 3 {
				t.Errorf("%d reductions for %d gradients, want 3", c.calls, len(grads))
			}
			for _, g := range grads {
				for j := range max(len(g.F32), len(g.F64)) {
					got := float64(j % 7 * 2)
					if g.F32 != nil && g.F32[j] != float32(got) || g.F64 != nil && g.F64[j] != got {
						t.Fatalf("%s element %d: not doubled", g.Var.Name(), j)
					}
				}
			}
			if n := testing.AllocsPerRun(20, func() {
				if err := s.sumAcrossFused(grads); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("sumAcrossFused allocates %v times per step, want 0", n)
			}
		})
	}
}

// TestSumAcrossFusedError checks that a failed reduction is the cluster's
// error, naming the variables whose gradients it carried.
func TestSumAcrossFusedError(t *testing.T) {
	c := &doubling{fail: errors.New("peer gone")}
	s := NewMirrored(WithReplicas(1), WithCluster(c))
	defer s.Close()
	err := s.sumAcrossFused(mlpGrads(graph.Float32, 4, 3, 2))
	if !errors.Is(err, ErrCluster) {
		t.Fatalf("err = %v, want one wrapping ErrCluster", err)
	}
	for _, want := range []string{"4 variables", `"dense_0/2"`, `"dense_1/1"`, "peer gone"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %s", err, want)
		}
	}
}

// gradReplica is an external replica whose gradients are fixed buffers.
type gradReplica struct{ grads map[*graph.Variable]Grad }

func (g gradReplica) RunStep(ExternalInput) ([]data.Tensor, error) { return nil, nil }
func (g gradReplica) Gradient(v *graph.Variable) Grad              { return g.grads[v] }

// TestRunExternalFused checks that RunExternal sums an update's gradients
// across workers fused, as Run does (issue 12): the MLP 784-512-512-10's six
// gradients in three reductions, not one each, and Apply gets every
// gradient summed over the workers.
func TestRunExternalFused(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			c := &doubling{}
			s := NewMirrored(WithReplicas(1), WithCluster(c), WithDType(dt))
			defer s.Close()
			rep := gradReplica{grads: make(map[*graph.Variable]Grad)}
			var vars []*graph.Variable
			for _, g := range mlpGrads(dt, 784, 512, 512, 10) {
				v := s.CreateVariable(g.Var.Name(), g.Var.Shape(), nil)
				vars = append(vars, v)
				rep.grads[v] = Grad{F32: g.F32, F64: g.F64}
			}
			var got []Grad
			apply := UpdateFunc(func(gs []Grad) { got = slices.Clone(gs) })
			step := &ExternalStep{Replicas: []ExternalReplica{rep}, Updates: []Registration{{Name: "record", Vars: vars, Update: apply}}}
			if _, err := s.RunExternal(step); err != nil {
				t.Fatal(err)
			}
			if c.calls != 3 {
				t.Errorf("%d reductions across workers for %d gradients, want 3", c.calls, len(vars))
			}
			if len(got) != len(vars) {
				t.Fatalf("Apply got %d gradients, want %d", len(got), len(vars))
			}
			for k, g := range got {
				for j := range max(len(g.F32), len(g.F64)) {
					x, want := 0.0, float64(j%7*2)
					if g.F32 != nil {
						x = float64(g.F32[j])
					} else {
						x = g.F64[j]
					}
					if x != want {
						t.Fatalf("Apply's gradient of %s element %d = %v, want %v (summed over 2 workers)", vars[k].Name(), j, x, want)
					}
				}
			}
		})
	}
}
