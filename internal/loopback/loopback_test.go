package loopback

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/strategy"
)

var _ strategy.Cluster = (*Cluster)(nil)

// start joins size workers in this process, one goroutine each, and runs
// fn on each; it returns their errors.
func start(t *testing.T, size int, fn func(c *Cluster) error) []error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.sock")
	token := NewToken()
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Join(path, r, size, token, 10*time.Second)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			errs[r] = fn(c)
		}()
	}
	wg.Wait()
	return errs
}

// TestCollectives: sums in rank order, the same bits everywhere; gathers of
// any lengths; broadcasts from every root.
func TestCollectives(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4} {
		// Each rank's values, and the rank-order sums they must give.
		vals := make([][]float32, size)
		want := make([]float32, 1000)
		for r := range vals {
			rng := rand.New(rand.NewPCG(1, uint64(r)))
			vals[r] = make([]float32, len(want))
			for i := range want {
				vals[r][i] = float32(rng.NormFloat64() * 1e3)
				want[i] += vals[r][i]
			}
		}
		got := make([][]float32, size)
		gathered := make([][][]float64, size)
		cast := make([][]byte, size)
		errs := start(t, size, func(c *Cluster) error {
			buf := slices.Clone(vals[c.Rank()])
			if err := c.AllReduceF32(buf); err != nil {
				return err
			}
			got[c.Rank()] = buf
			f64 := []float64{float64(c.Rank()), 0.5}
			if err := c.AllReduceF64(f64); err != nil {
				return err
			}
			if f64[0] != float64(size*(size-1)/2) || f64[1] != 0.5*float64(size) {
				t.Errorf("rank %d: AllReduceF64 %v", c.Rank(), f64)
			}
			local := make([]float64, c.Rank()) // rank r sends r values
			for i := range local {
				local[i] = float64(10*c.Rank() + i)
			}
			all, err := c.AllGather(local)
			if err != nil {
				return err
			}
			gathered[c.Rank()] = all
			for root := range size {
				b, err := c.Broadcast([]byte(strings.Repeat("x", root)+"from"), root)
				if err != nil {
					return err
				}
				if want := strings.Repeat("x", root) + "from"; string(b) != want {
					t.Errorf("rank %d: Broadcast from %d gave %q", c.Rank(), root, b)
				}
				cast[c.Rank()] = b
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%d workers: rank %d: %v", size, r, err)
			}
		}
		for r := range size {
			if !slices.Equal(got[r], want) {
				t.Errorf("%d workers: rank %d's sum is not the rank-order sum", size, r)
			}
			for q, part := range gathered[r] {
				if len(part) != q || (q > 0 && part[0] != float64(10*q)) {
					t.Errorf("%d workers: rank %d gathered %v from rank %d", size, r, part, q)
				}
			}
		}
	}
}

// TestDivergedWorkers: a worker calling another collective, or a reduction
// of another length, makes every worker's call fail naming it.
func TestDivergedWorkers(t *testing.T) {
	errs := start(t, 3, func(c *Cluster) error {
		switch c.Rank() {
		case 2:
			_, err := c.AllGather([]float64{1})
			return err
		default:
			return c.AllReduceF64([]float64{1, 2})
		}
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "worker 2 called AllGather while worker 0 called AllReduceF64") {
			t.Errorf("rank %d: got %v", r, err)
		}
	}
	errs = start(t, 2, func(c *Cluster) error {
		return c.AllReduceF32(make([]float32, 3+c.Rank()))
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "worker 1's AllReduceF32 has 16 bytes, worker 0's 12") {
			t.Errorf("rank %d: got %v", r, err)
		}
	}
}
