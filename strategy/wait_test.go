package strategy

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// waitCases are the ways a replica's wait ends: the other replica arrives
// while it still spins (or at once, sleeping), arrives after it stopped
// spinning and sleeps, or the step is abandoned.
var waitCases = []struct {
	name  string
	delay time.Duration // before the second replica arrives or the step is abandoned
	abort bool
}{
	{"arrives while the first spins", spinBudget / 4, false},
	{"arrives after the first sleeps", 3 * spinBudget, false},
	{"abandoned while the first spins", spinBudget / 4, true},
	{"abandoned after the first sleeps", 3 * spinBudget, true},
}

// TestCollectiveWaits: a replica waiting in an all-reduction, spinning or
// not, gets the sum when the other arrives and errAborted when the step is
// abandoned, whenever either happens.
func TestCollectiveWaits(t *testing.T) {
	for _, spin := range []bool{false, true} {
		for _, tc := range waitCases {
			t.Run(fmt.Sprintf("spin=%v/%s", spin, tc.name), func(t *testing.T) {
				c := newCollective(2)
				c.reset()
				c.mu.spin = spin
				got := make(chan error, 1)
				buf := []float32{1, 2}
				go func() {
					defer func() {
						v := recover()
						err, _ := v.(error)
						if v != nil && err == nil {
							err = fmt.Errorf("panic %v", v)
						}
						got <- err
					}()
					replicaCollective{c, 0}.AllReduceF32(buf)
				}()
				time.Sleep(tc.delay)
				if tc.abort {
					c.abort()
				} else {
					replicaCollective{c, 1}.AllReduceF32([]float32{10, 20})
				}
				select {
				case err := <-got:
					switch {
					case tc.abort && !errors.Is(err, errAborted):
						t.Errorf("the waiting replica got %v, want errAborted", err)
					case !tc.abort && err != nil:
						t.Errorf("the waiting replica failed: %v", err)
					case !tc.abort && (buf[0] != 11 || buf[1] != 22):
						t.Errorf("the waiting replica got %v, want [11 22]", buf)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the waiting replica was never released")
				}
			})
		}
	}
}

// TestCollectiveSequence: two replicas running many reductions in a row,
// arriving in either order, spinning or sleeping, each get every sum: a
// wake-up of one reduction never releases a replica from the next.
func TestCollectiveSequence(t *testing.T) {
	for _, spin := range []bool{false, true} {
		c := newCollective(2)
		c.reset()
		c.mu.spin = spin
		const steps = 500
		errs := make(chan error, 2)
		for r := range 2 {
			go func() {
				for k := range steps {
					if (k+r)%7 == 0 {
						time.Sleep(time.Duration(k%3) * spinBudget)
					}
					buf := []float64{float64(k), float64(r)}
					replicaCollective{c, r}.AllReduceF64(buf)
					if buf[0] != float64(2*k) || buf[1] != 1 {
						errs <- fmt.Errorf("spin=%v: replica %d, reduction %d: got %v, want [%d 1]", spin, r, k, buf, 2*k)
						return
					}
				}
				errs <- nil
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBarrierWaits: a replica waiting at the step barrier, spinning or not,
// learns whether the other replica failed, whenever it arrives.
func TestBarrierWaits(t *testing.T) {
	for _, spin := range []bool{false, true} {
		for _, delay := range []time.Duration{spinBudget / 4, 3 * spinBudget} {
			for _, failed := range []bool{false, true} {
				b := newStepBarrier(2)
				b.reset()
				b.spin = spin
				got := make(chan bool, 1)
				go func() { got <- b.wait(false) }()
				time.Sleep(delay)
				last := b.wait(failed)
				if first := <-got; first != !failed || last != !failed {
					t.Errorf("spin=%v, second arrives after %v, failed=%v: the replicas report %v and %v, want %v",
						spin, delay, failed, first, last, !failed)
				}
			}
		}
	}
}

// TestReserveProcessor: CPU replicas with a core each, counting those of
// other processes mpirun started on the host, get one processor more than
// themselves, unless the user set GOMAXPROCS; GOMAXPROCS is never lowered;
// and replicas spin only with that processor.
func TestReserveProcessor(t *testing.T) {
	cpus := runtime.NumCPU()
	if cpus < 2 {
		t.Skip("needs 2 CPUs: one replica never waits for another")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(n int) { localRanks = n }(localRanks)
	for _, tc := range []struct {
		env       string // GOMAXPROCS
		local     string // OMPI_COMM_WORLD_LOCAL_SIZE
		procs     int    // before
		replicas  int
		wantProcs int
		wantSpin  bool
		why       string
	}{
		{"", "", cpus, cpus, cpus + 1, true, "a core each and a processor more"},
		{"", "", 2, 2, 3, true, "a core each and a processor more"},
		{"", "1", 2, 2, 3, true, "the one process mpirun started here"},
		{"", "", cpus + 4, 2, cpus + 4, true, "never lowered"},
		{"", "", 1, 1, 1, false, "one replica"},
		{"", "", cpus, cpus + 1, cpus, false, "more replicas than cores"},
		{"", strconv.Itoa(cpus), 2, 2, 2, false, "other processes' replicas on the cores"},
		{"2", "", 2, 2, 2, false, "GOMAXPROCS set by the user"},
	} {
		t.Setenv("GOMAXPROCS", tc.env)
		localRanks = parseLocalRanks(tc.local)
		runtime.GOMAXPROCS(tc.procs)
		reserveProcessor(tc.replicas)
		procs, spin := runtime.GOMAXPROCS(0), spinning(tc.replicas)
		if procs != tc.wantProcs || spin != tc.wantSpin {
			t.Errorf("GOMAXPROCS=%q, OMPI_COMM_WORLD_LOCAL_SIZE=%q, %d processors, %d replicas: %d processors, spinning %v; want %d, %v (%s)",
				tc.env, tc.local, tc.procs, tc.replicas, procs, spin, tc.wantProcs, tc.wantSpin, tc.why)
		}
	}

	t.Setenv("GOMAXPROCS", "")
	localRanks = 1
	if n := testing.AllocsPerRun(10, func() { spinning(2) }); n != 0 {
		t.Errorf("spinning, which every step calls, allocates %v times, want 0", n)
	}
	runtime.GOMAXPROCS(2)
	s := NewMirrored(WithReplicas(2))
	defer s.Close()
	if procs := runtime.GOMAXPROCS(0); procs != 3 {
		t.Errorf("NewMirrored with 2 CPU replicas left GOMAXPROCS at %d, want 3", procs)
	}
}
