//go:build mpi && cgo

package mpi

// These tests run on every rank of an mpirun job (scripts/mpi-test.sh), or
// as a singleton world of one rank when the binary runs on its own. Every
// rank calls the same collectives in the same order, so a test never stops
// on one rank alone: checks report with Errorf and go on, and a test skips
// only on a condition that every rank shares.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// world is the World that TestMain initialized; every test uses it.
var world *World

func TestMain(m *testing.M) {
	if os.Getenv(lifecycleEnv) != "" {
		os.Exit(lifecycle())
	}
	w, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	world = w
	code := m.Run()
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func TestRankSize(t *testing.T) {
	// mpirun tells each rank its place in these variables; a singleton has
	// none of them.
	wantRank, wantSize := 0, 1
	if s, ok := os.LookupEnv("OMPI_COMM_WORLD_SIZE"); ok {
		wantSize, _ = strconv.Atoi(s)
		wantRank, _ = strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	}
	if got := world.Size(); got != wantSize {
		t.Errorf("Size() = %d, want %d", got, wantSize)
	}
	if got := world.Rank(); got != wantRank {
		t.Errorf("Rank() = %d, want %d", got, wantRank)
	}
	ranks, err := world.AllGather([]float64{float64(world.Rank())})
	if err != nil {
		t.Fatal(err) // every rank got it: the collective failed everywhere
	}
	for r, got := range ranks {
		if len(got) != 1 || got[0] != float64(r) {
			t.Errorf("AllGather of ranks: entry %d = %v, want [%d]", r, got, r)
		}
	}
}

func TestInitTwice(t *testing.T) {
	w, err := Init()
	if w != world || err != nil {
		t.Errorf("second Init() = %p, %v; want the first World %p, nil", w, err, world)
	}
}

// TestPanicAfterInit checks that a nil dereference after Init is still a
// panic that recover stops: MPI left Go's signal handlers alone.
func TestPanicAfterInit(t *testing.T) {
	var p *int
	recovered := func() (r any) {
		defer func() { r = recover() }()
		intSink = *p
		return nil
	}()
	if recovered == nil {
		t.Error("nil dereference: nothing to recover")
	}
}

var intSink int

// TestNotBound checks that mpirun left every rank on all the CPUs that
// mpirun itself may use (--bind-to none). A rank bound to one core runs
// with GOMAXPROCS=1.
func TestNotBound(t *testing.T) {
	if _, ok := os.LookupEnv("OMPI_COMM_WORLD_SIZE"); !ok {
		t.Skip("not started by mpirun")
	}
	mine, err := cpusAllowed("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	parent, err := cpusAllowed(fmt.Sprintf("/proc/%d/status", os.Getppid()))
	if err != nil {
		t.Skip(err)
	}
	if mine < parent {
		t.Errorf("rank %d may run on %d of mpirun's %d CPUs, so GOMAXPROCS is %d: start mpirun with --bind-to none",
			world.Rank(), mine, parent, runtime.GOMAXPROCS(0))
	}
}

// cpusAllowed counts the CPUs in the Cpus_allowed_list line of a
// /proc/PID/status file ("0-3,8").
func cpusAllowed(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		n := 0
		for part := range strings.SplitSeq(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				return 0, fmt.Errorf("%s: bad Cpus_allowed_list %q", path, list)
			}
			n += b - a + 1
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s: no Cpus_allowed_list", path)
}

// reduceCase is one all-reduce input: gen gives rank r's values.
type reduceCase struct {
	name string
	n    int
	gen  func(r, n int) []float64
	// exact: every partial sum is exact in float32, so the result equals
	// the sum in any order; otherwise it is checked within rounding.
	exact bool
}

var reduceCases = []reduceCase{
	{name: "empty", n: 0, gen: ints, exact: true},
	{name: "one", n: 1, gen: ints, exact: true},
	{name: "ints-1000", n: 1000, gen: ints, exact: true},
	// The MLP 784-512-512-10's gradient: 669,706 parameters.
	{name: "ints-670000", n: 670_000, gen: ints, exact: true},
	{name: "magnitudes-670000", n: 670_000, gen: magnitudes},
}

// ints are rank-dependent integers of either sign, small enough that any
// sum over 4 ranks is exact in float32.
func ints(r, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64((i%4096 - 2048) * (r + 1))
		if i%3 == 0 {
			x[i] = -x[i]
		}
	}
	return x
}

// magnitudes are normal values scaled by 10^-3 … 10^3, rank r's from its
// own seed, so that sums round and their order shows.
func magnitudes(r, n int) []float64 {
	rng := rand.New(rand.NewPCG(uint64(r+1), 99))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
	}
	return x
}

func TestAllReduceF32(t *testing.T) {
	testAllReduce(t, world.AllReduceF32, 0x1p-23)
}

func TestAllReduceF64(t *testing.T) {
	testAllReduce(t, world.AllReduceF64, 0x1p-52)
}

// testAllReduce runs every reduceCase through reduce, checks the sum
// against the sum in rank order of every rank's values (exactly, or within
// size·eps·Σ|x|), and checks that every rank got the same bits.
func testAllReduce[T float32 | float64](t *testing.T, reduce func([]T) error, eps float64) {
	rank, size := world.Rank(), world.Size()
	for _, c := range reduceCases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]T, c.n)
			for i, v := range c.gen(rank, c.n) {
				buf[i] = T(v)
			}
			want := make([]float64, c.n) // Σ in rank order, in float64
			abs := make([]float64, c.n)  // Σ|x|
			for r := range size {
				for i, v := range c.gen(r, c.n) {
					want[i] += float64(T(v))
					abs[i] += math.Abs(float64(T(v)))
				}
			}
			if err := reduce(buf); err != nil {
				t.Fatal(err) // every rank got it: the collective failed everywhere
			}
			bad := 0
			for i, got := range buf {
				tol := float64(size) * eps * abs[i]
				if c.exact {
					tol = 0
				}
				if d := math.Abs(float64(got) - want[i]); d > tol || math.IsNaN(d) {
					if bad++; bad <= 3 {
						t.Errorf("rank %d: element %d = %v, want %v (tolerance %g)", rank, i, got, want[i], tol)
					}
				}
			}
			if bad > 3 {
				t.Errorf("rank %d: %d of %d elements wrong", rank, bad, c.n)
			}
			sameEverywhere(t, c.name, hashOf(buf))
		})
	}
}

func TestAllReduceNoAllocs(t *testing.T) {
	f32, f64 := make([]float32, 1024), make([]float64, 1024)
	// AllocsPerRun calls each function the same number of times on every rank.
	if n := testing.AllocsPerRun(10, func() { world.AllReduceF32(f32) }); n != 0 {
		t.Errorf("AllReduceF32 allocates %v times a call, want 0", n)
	}
	if n := testing.AllocsPerRun(10, func() { world.AllReduceF64(f64) }); n != 0 {
		t.Errorf("AllReduceF64 allocates %v times a call, want 0", n)
	}
}

func TestAllGather(t *testing.T) {
	cases := []struct {
		name string
		n    func(r, size int) int // rank r's length
	}{
		{"all-empty", func(r, size int) int { return 0 }},
		{"one-each", func(r, size int) int { return 1 }},
		{"rank-r-has-r", func(r, size int) int { return r }},
		{"only-last", func(r, size int) int {
			if r == size-1 {
				return 5
			}
			return 0
		}},
		{"uneven-large", func(r, size int) int { return (r*7919)%10*10_000 + r }},
	}
	// value is element i of rank r's slice; every value is distinct.
	value := func(r, i int) float64 { return float64(r)*1e7 + float64(i) + 0.5 }
	rank, size := world.Rank(), world.Size()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			local := make([]float64, c.n(rank, size))
			for i := range local {
				local[i] = value(rank, i)
			}
			got, err := world.AllGather(local)
			if err != nil {
				t.Fatal(err) // every rank got it: the collective failed everywhere
			}
			if len(got) != size {
				t.Fatalf("rank %d: %d slices, want %d", rank, len(got), size)
			}
			for r, g := range got {
				n := c.n(r, size)
				if len(g) != n || cap(g) != n {
					t.Errorf("rank %d: slice of rank %d has len %d, cap %d; want %d, %d", rank, r, len(g), cap(g), n, n)
					continue
				}
				for i, v := range g {
					if v != value(r, i) {
						t.Errorf("rank %d: slice of rank %d, element %d = %v, want %v", rank, r, i, v, value(r, i))
						break
					}
				}
			}
		})
	}
}

func TestBroadcast(t *testing.T) {
	sizes := []struct {
		name string
		n    int
	}{{"empty", 0}, {"small", 13}, {"1MiB", 1 << 20}}
	payload := func(root, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte((i*31 + root) % 251)
		}
		return b
	}
	rank, size := world.Rank(), world.Size()
	for root := range size {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("root-%d/%s", root, s.name), func(t *testing.T) {
				// The others' buf is ignored: give them something else.
				buf := []byte("not root's")
				if rank == root {
					buf = payload(root, s.n)
				}
				got, err := world.Broadcast(buf, root)
				if err != nil {
					t.Fatal(err) // every rank got it: the collective failed everywhere
				}
				if want := payload(root, s.n); !bytes.Equal(got, want) {
					t.Errorf("rank %d: got %d bytes, want root %d's %d", rank, len(got), root, len(want))
				}
				if got == nil {
					t.Errorf("rank %d: got nil, want an empty slice", rank)
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	size := world.Size()
	for _, root := range []int{-1, size} {
		t.Run(fmt.Sprintf("Broadcast-root-%d", root), func(t *testing.T) {
			_, err := world.Broadcast([]byte("x"), root)
			var e *Error
			if !errors.As(err, &e) || e.Call != "MPI_Bcast" || !strings.Contains(err.Error(), "MPI_ERR_ROOT") {
				t.Fatalf("Broadcast(root %d) = %v, want an *Error from MPI_Bcast with MPI_ERR_ROOT", root, err)
			}
			want := fmt.Sprintf("mpi: Broadcast from root %d of %d ranks: length: MPI_Bcast: MPI_ERR_ROOT: invalid root", root, size)
			if err.Error() != want {
				t.Errorf("Broadcast(root %d) error:\n got %s\nwant %s", root, err, want)
			}
		})
	}
	// The world still works after an error that MPI returned.
	buf := []float64{1}
	if err := world.AllReduceF64(buf); err != nil || buf[0] != float64(size) {
		t.Errorf("AllReduceF64 after the errors: %v, %v; want [%d], nil", buf, err, size)
	}
}

// lifecycleEnv makes the test binary, started again by TestLifecycle,
// run lifecycle instead of the tests.
const lifecycleEnv = "GOTRAIN_MPI_TEST_LIFECYCLE"

// TestLifecycle checks Init and Finalize, which TestMain's world cannot
// show without ending MPI for the other tests, in a singleton process of
// its own.
func TestLifecycle(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe)
	// Without mpirun's variables the child is a singleton, not a rank of
	// this job.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMPI_") && !strings.HasPrefix(kv, "PMIX_") && !strings.HasPrefix(kv, "OPAL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, lifecycleEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("lifecycle process: %v\n%s", err, out)
	}
}

// lifecycle runs in the process TestLifecycle starts, and returns its exit
// code.
func lifecycle() int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	w, err := Init()
	if err != nil {
		return fail("Init: %v", err)
	}
	if w.Rank() != 0 || w.Size() != 1 {
		return fail("singleton: rank %d of %d, want 0 of 1", w.Rank(), w.Size())
	}
	if err := w.Finalize(); err != nil {
		return fail("Finalize: %v", err)
	}
	checks := []struct {
		name string
		err  error
	}{
		{"second Finalize", w.Finalize()},
		{"AllReduceF32", w.AllReduceF32([]float32{1})},
		{"AllReduceF64", w.AllReduceF64(nil)},
		{"AllGather", func() error { _, err := w.AllGather(nil); return err }()},
		{"Broadcast", func() error { _, err := w.Broadcast(nil, 0); return err }()},
		{"Init", func() error { _, err := Init(); return err }()},
	}
	for _, c := range checks {
		if !errors.Is(c.err, ErrFinalized) {
			return fail("%s after Finalize: %v, want ErrFinalized", c.name, c.err)
		}
	}
	return 0
}

// sameEverywhere checks that h, a hash of what this rank computed, is the
// same on every rank.
func sameEverywhere(t *testing.T, what string, h uint64) {
	t.Helper()
	// Two exact halves, so that no NaN bit pattern can travel.
	all, err := world.AllGather([]float64{float64(h >> 32), float64(h & 0xffffffff)})
	if err != nil {
		t.Fatal(err) // every rank got it: the collective failed everywhere
	}
	var differ []int
	for r, g := range all {
		if g[0] != all[0][0] || g[1] != all[0][1] {
			differ = append(differ, r)
		}
	}
	if len(differ) > 0 {
		t.Errorf("%s: ranks %v got other bits than rank 0", what, differ)
	}
}

// hashOf is FNV-64a over x's bits.
func hashOf[T float32 | float64](x []T) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range x {
		switch v := any(v).(type) {
		case float32:
			binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
			h.Write(b[:4])
		case float64:
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}
