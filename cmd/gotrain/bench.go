package main

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/bench"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/internal/loopback"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/worker"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "gpt" {
		return benchGPT(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rnn" {
		return benchRNN(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "resnet" {
		return benchResNet(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "mlp" {
		return fmt.Errorf("gotrain bench: want a benchmark name (mlp, gpt, rnn or resnet), got %q", args)
	}
	fs := flag.NewFlagSet("gotrain bench mlp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	replicas := fs.Int("replicas", runtime.NumCPU(), "number of replicas")
	dimsFlag := fs.String("dims", "784,512,512,10", "layer widths, input first")
	batch := fs.Int("batch", 256, "global batch size")
	steps := fs.Int("steps", 200, "timed training steps")
	dtype := fs.String("dtype", "f32", "f32 or f64")
	threads := fs.Int("threads", 0, "BLAS threads per replica; 0 divides the cores among replicas")
	workers := fs.Int("workers", 1, "worker processes (a loopback cluster on this machine), each with --replicas replicas")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	dims, err := parseDims(*dimsFlag)
	if err != nil {
		return err
	}
	dt, err := parseDType("mlp", *dtype)
	if err != nil {
		return err
	}
	if *workers < 1 {
		return fmt.Errorf("gotrain bench mlp: --workers: want N ≥ 1, got %d", *workers)
	}
	spec := os.Getenv(worker.ClusterEnv)
	if *workers > 1 && spec == "" {
		return benchWorkers(*workers, args, stdout)
	}
	var opts []strategy.Option
	perReplica := max(1, runtime.NumCPU() / *replicas)
	quiet := false // another worker than 0: worker 0 prints the figures
	if spec != "" {
		c, err := joinWorkers(spec)
		if err != nil {
			return err
		}
		defer leaveCluster(c)
		if c.Size() != *workers {
			return fmt.Errorf("gotrain bench mlp: --workers %d, but the cluster has %d workers", *workers, c.Size())
		}
		quiet = c.Rank() != 0
		opts = append(opts, strategy.WithCluster(c))
		// The workers' replicas share the cores.
		perReplica = max(1, runtime.NumCPU()/(*replicas**workers))
		if *threads == 0 {
			opts = append(opts, strategy.WithBLASThreads(false))
			blas.SetThreads(perReplica)
		}
	}
	if *threads > 0 {
		// One replica on one core is the baseline that replica scaling is
		// measured against.
		opts = append(opts, strategy.WithBLASThreads(false))
		blas.SetThreads(*threads)
		perReplica = *threads
	}
	rate, err := bench.MLP(*replicas, dims, *batch, *steps, dt, opts...)
	if err != nil {
		return err
	}
	if quiet {
		return nil
	}
	flopsPerSample := mlpFlops(dims)
	achieved := rate * flopsPerSample / 1e9
	fmt.Fprintf(stdout, "mlp dims=%s workers=%d replicas=%d global_batch=%d %s blas=%s threads/replica=%d\n", *dimsFlag, *workers, *replicas, *batch, *dtype, blas.Name(), perReplica)
	if spec != "" {
		// Every worker would measure the peak while the others do: no
		// peak figure for several workers.
		fmt.Fprintf(stdout, "GFLOP/s: %.1f\n", achieved)
	} else {
		peak := gemmPeak(*replicas, perReplica, dt)
		fmt.Fprintf(stdout, "GFLOP/s: %.1f (%.0f%% of this machine's %s gemm peak %.1f GFLOP/s, same replicas and BLAS threads)\n",
			achieved, 100*achieved/peak, *dtype, peak)
	}
	fmt.Fprintf(stdout, "samples/s: %.0f\n", rate)
	return nil
}

// parseDType reads the --dtype flag of benchmark name.
func parseDType(name, s string) (graph.DType, error) {
	switch s {
	case "f32":
		return graph.Float32, nil
	case "f64":
		return graph.Float64, nil
	}
	return 0, fmt.Errorf("gotrain bench %s: --dtype: want f32 or f64, got %q", name, s)
}

// mlpFlops is the floating-point operations of the matrix products in one
// sample's training step: forward, one product per layer; backward, the
// weights' gradient of every layer and the inputs' gradient of every layer
// but the first, which nobody asks for and the graph does not compute.
func mlpFlops(dims []int) float64 {
	var macs float64
	for i := 0; i+1 < len(dims); i++ {
		macs += 3 * float64(dims[i]*dims[i+1])
	}
	macs -= float64(dims[0] * dims[1])
	return 2 * macs
}

func parseDims(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	dims := make([]int, len(parts))
	for i, p := range parts {
		d, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || d < 1 {
			return nil, fmt.Errorf("gotrain bench mlp: --dims: want positive integers separated by commas, got %q", s)
		}
		dims[i] = d
	}
	if len(dims) < 2 {
		return nil, fmt.Errorf("gotrain bench mlp: --dims: want at least two widths, got %q", s)
	}
	return dims, nil
}

// gemmPeak measures what the BLAS in use reaches on a square 512 product
// laid out as the strategy lays out training: one goroutine per replica,
// each replica's BLAS with the given threads. It is the ceiling the
// training step's matrix products can approach.
func gemmPeak(workers, threads int, dt graph.DType) float64 {
	const n, reps = 512, 20
	prev := blas.Threads()
	blas.SetThreads(threads)
	defer blas.SetThreads(prev)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if dt == graph.Float64 {
				a, c := make([]float64, n*n), make([]float64, n*n)
				for i := range a {
					a[i] = float64(i%7) * 0.1
				}
				for r := 0; r < reps; r++ {
					blas.Dgemm(false, false, n, n, n, 1, a, n, a, n, 0, c, n)
				}
				return
			}
			a, c := make([]float32, n*n), make([]float32, n*n)
			for i := range a {
				a[i] = float32(i%7) * 0.1
			}
			for r := 0; r < reps; r++ {
				blas.Sgemm(false, false, n, n, n, 1, a, n, a, n, 0, c, n)
			}
		}()
	}
	wg.Wait()
	return float64(workers) * reps * 2 * n * n * n / time.Since(start).Seconds() / 1e9
}

// benchWorkers runs the benchmark as n worker processes of this binary,
// joined by a loopback cluster; worker 0's report is the benchmark's, and
// a worker that fails fails it with its output.
func benchWorkers(n int, args []string, stdout io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "gotrain-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "cluster")
	token := hex.EncodeToString(loopback.NewToken())
	outs := make([]bytes.Buffer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cmd := exec.Command(exe, append([]string{"bench"}, args...)...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=loopback %d %d %s", worker.ClusterEnv, r, n, sock), worker.ClusterTokenEnv+"="+token)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = cmd.Run() }()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return fmt.Errorf("gotrain bench mlp: worker %d of %d: %v\n%s", r, n, err, outs[r].String())
		}
	}
	_, err = io.Copy(stdout, &outs[0])
	return err
}
