package strategy

import (
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/blas"
)

// Option configures NewMirrored and NewOneDevice.
type Option func(*config)

type config struct {
	replicas int
	devices  []string
	dtype    graph.DType
	seed     uint64
	setBLAS  bool

	checkNumerics bool
	warn          io.Writer
	cluster       Cluster

	noDefer bool // WithDeferProducts(false), in tests
	noNCCL  bool // withoutNCCL, in tests: sum across GPUs through the host
	onCPU   bool // WithReplicas: logical CPU devices even with GPUs present
}

// WithReplicas asks for n replicas on logical CPU devices, assigned to cores
// round-robin (replica r on "cpu:r mod NumCPU"), also when GPUs are present.
// It panics if n < 1.
func WithReplicas(n int) Option {
	if n < 1 {
		panic(usageError("WithReplicas: want at least 1 replica, got %d", n))
	}
	return func(c *config) { c.replicas = n; c.devices = nil; c.onCPU = true }
}

// WithDevices places one replica on each named device. Devices are "cpu:N"
// with N < runtime.NumCPU(), or, in a binary built with -tags cuda, "gpu:N"
// with N below the number of NVIDIA GPUs; a device may be named several
// times (several logical devices per core, several replicas per GPU). The
// replicas are all on CPUs or all on GPUs. It panics on a malformed or
// unknown device.
func WithDevices(devices ...string) Option {
	if len(devices) == 0 {
		panic(usageError("WithDevices: want at least 1 device, got none"))
	}
	for _, d := range devices {
		if err := checkDevice(d); err != nil {
			panic(err)
		}
	}
	ds := append([]string(nil), devices...)
	return func(c *config) { c.devices = ds; c.replicas = len(ds) }
}

// WithDType sets the floating-point type of the strategy's variables and
// graphs (default graph.Float32).
func WithDType(dt graph.DType) Option {
	if dt != graph.Float32 && dt != graph.Float64 {
		panic(usageError("WithDType: want Float32 or Float64, got %v", dt))
	}
	return func(c *config) { c.dtype = dt }
}

// WithSeed sets the seed from which layers derive their initializers (default
// 0). Two strategies with the same seed build identical models.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithCluster makes the strategy one worker of a multi-worker strategy
// (TensorFlow's MultiWorkerMirroredStrategy): every worker process runs the
// same program with its own replicas, and the cross-replica sums (gradients,
// Reduce, Gather, the example count of per-replica datasets) and the
// agreement on interrupts and failed steps go through c. Replica ids and
// NumReplicasInSync count every replica of every worker; DistributeDataset
// gives each worker its replicas' shards of every global batch, so N
// workers train as one process with all their replicas would. A nil c, or
// a cluster of one worker, is a strategy of this process alone.
func WithCluster(c Cluster) Option { return func(cf *config) { cf.cluster = c } }

// WithBLASThreads controls whether NewMirrored divides the OpenBLAS threads
// among replicas (default true): with replicas filling the cores, each
// replica's matrix products must use max(1, NumCPU/replicas) threads or they
// fight over the cores, and the MLP's step took twice as long.
func WithBLASThreads(on bool) Option { return func(c *config) { c.setBLAS = on } }

func checkDevice(d string) error {
	kind, num, ok := strings.Cut(strings.ToLower(d), ":")
	n, err := strconv.Atoi(num)
	switch {
	case !ok || err != nil || n < 0:
		return usageError("device %q: want \"cpu:N\" or \"gpu:N\"", d)
	case kind == "gpu":
		return checkGPU(d, n)
	case kind != "cpu":
		return usageError("device %q: want \"cpu:N\" or \"gpu:N\"", d)
	case n >= runtime.NumCPU():
		return usageError("device %q: want a core below %d", d, runtime.NumCPU())
	}
	return nil
}

// parseDevice splits a device that checkDevice accepted into its kind
// ("cpu" or "gpu") and number.
func parseDevice(d string) (kind string, n int) {
	kind, num, _ := strings.Cut(strings.ToLower(d), ":")
	n, _ = strconv.Atoi(num)
	return kind, n
}

// Mirrored is a synchronous data-parallel strategy: N replicas run the same
// step on their shard of each global batch and one merged update keeps their
// (shared) variables identical. Create it with NewMirrored; call Close when
// done. It is safe for concurrent use; Run calls are serialized.
type Mirrored struct {
	devices       []string       // immutable
	dtype         graph.DType    // immutable
	seed          uint64         // immutable
	checkNumerics bool           // immutable; WithCheckNumerics
	cluster       Cluster        // immutable; nil for one worker (WithCluster)
	rank, size    int            // immutable; this worker and the number of workers
	noDefer       bool           // immutable; traces defer no gradient products (graph.Program.Defer), for tests that compare
	gpus          *graph.GPUs    // the replicas' GPUs, nil when the replicas are on CPUs; its Step and Close guarded by runMu
	loops         []*replicaLoop // immutable; one goroutine per local replica
	wg            sync.WaitGroup

	runMu sync.Mutex // serializes Run and Close; guards traces

	traces       traceCache
	warn         io.Writer // immutable; WithWarnings
	warnedShapes bool      // warned about a retrace for new shapes; guarded by runMu
	warnedNew    bool      // warned about retraces of new closures; guarded by runMu
	fusion       fusion    // sumAcrossFused's buckets, kept across steps; guarded by runMu (used by the Run holding it, or by its replica in acrossParts while it waits)

	mu struct {
		sync.Mutex
		closed bool
		vars   map[*graph.Variable]bool // created under this strategy
		order  []*graph.Variable        // vars in creation order
		names  map[string]int           // UniqueName counters

		scopeFailed bool // the last Scope's function panicked
	}
}

// NewMirrored returns a strategy with one replica per GPU when the binary
// is built with -tags cuda and NVIDIA GPUs are present, else one replica per
// CPU core, or as the options say (WithReplicas and WithDevices("cpu:0", …)
// keep it on CPUs), and starts its replica goroutines. For CPU replicas
// with a core each it raises GOMAXPROCS to one more than the replicas,
// unless GOMAXPROCS is set in the environment: the replicas spin where they
// wait for each other, and the runtime keeps a processor for its other
// goroutines (see wait.go).
func NewMirrored(opts ...Option) *Mirrored {
	c := config{replicas: runtime.NumCPU(), dtype: graph.Float32, setBLAS: true, checkNumerics: true, warn: os.Stderr}
	for _, o := range opts {
		o(&c)
	}
	if c.devices == nil && !c.onCPU {
		c.devices = defaultGPUs()
	}
	if c.devices == nil {
		for r := range c.replicas {
			c.devices = append(c.devices, fmt.Sprintf("cpu:%d", r%runtime.NumCPU()))
		}
	}
	gpus := placeDevices(c.devices, !c.noNCCL)
	s := &Mirrored{devices: c.devices, dtype: c.dtype, seed: c.seed, checkNumerics: c.checkNumerics, warn: c.warn, noDefer: c.noDefer, size: 1,
		gpus: gpus}
	if c.cluster != nil && c.cluster.Size() > 1 {
		s.cluster, s.rank, s.size = c.cluster, c.cluster.Rank(), c.cluster.Size()
	}
	s.mu.vars = make(map[*graph.Variable]bool)
	s.mu.names = make(map[string]int)
	s.loops = make([]*replicaLoop, len(c.devices))
	for r := range s.loops {
		w := &replicaLoop{jobs: make(chan func(), 1), gpus: gpus, r: r}
		s.loops[r] = w
		s.wg.Add(1)
		go w.loop(&s.wg)
	}
	if c.setBLAS {
		blas.SetThreads(max(1, runtime.NumCPU()/len(c.devices)))
	}
	if gpus == nil {
		reserveProcessor(len(c.devices))
	}
	live.add(s)
	return s
}

// NewOneDevice returns a strategy with a single replica (on "cpu:0" unless
// WithDevices names one device). It has the same API as a Mirrored strategy
// with one replica, like tf.distribute.OneDeviceStrategy.
func NewOneDevice(opts ...Option) *Mirrored {
	all := append([]Option{WithReplicas(1)}, opts...)
	var c config
	for _, o := range all {
		o(&c)
	}
	if c.replicas != 1 {
		panic(usageError("NewOneDevice: want 1 device, got %d", c.replicas))
	}
	return NewMirrored(all...)
}

// NumReplicasInSync returns the number of replicas, of every worker.
func (s *Mirrored) NumReplicasInSync() int { return s.size * len(s.devices) }

// NumWorkers returns the number of worker processes (1 without WithCluster).
func (s *Mirrored) NumWorkers() int { return s.size }

// WorkerID returns this worker's index in [0, NumWorkers); worker w's
// replicas have the ids w·LocalReplicas() … (w+1)·LocalReplicas()-1.
func (s *Mirrored) WorkerID() int { return s.rank }

// LocalReplicas returns the number of replicas of this worker.
func (s *Mirrored) LocalReplicas() int { return len(s.devices) }

// Devices returns the device of each of this worker's replicas, in replica
// order.
func (s *Mirrored) Devices() []string { return append([]string(nil), s.devices...) }

// DType returns the floating-point type of the strategy's variables.
func (s *Mirrored) DType() graph.DType { return s.dtype }

// Seed returns the seed layers derive their initializers from.
func (s *Mirrored) Seed() uint64 { return s.seed }

// InitStream returns the random stream for the initializer of the variable
// named name: a PCG seeded by seed (a strategy's Seed) and a hash of name, so
// initial weights depend on neither the replica count nor the order in
// which variables are created.
func InitStream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// String describes the strategy, e.g.
// "MirroredStrategy(2 replicas: cpu:0, cpu:1; float32)".
func (s *Mirrored) String() string {
	plural := "s"
	if len(s.devices) == 1 {
		plural = ""
	}
	if s.size > 1 {
		return fmt.Sprintf("MultiWorkerMirroredStrategy(worker %d of %d, %d replica%s each: %s; %v)", s.rank, s.size, len(s.devices), plural, strings.Join(s.devices, ", "), s.dtype)
	}
	return fmt.Sprintf("MirroredStrategy(%d replica%s: %s; %v)", len(s.devices), plural, strings.Join(s.devices, ", "), s.dtype)
}

func (s *Mirrored) checkOpen() {
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed {
		panic(ErrClosed)
	}
}

// Variables returns the variables created under this strategy (model weights
// and optimizer slots), in creation order.
func (s *Mirrored) Variables() []*graph.Variable {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*graph.Variable(nil), s.mu.order...)
}

// owns reports whether v was created under s.
func (s *Mirrored) owns(v *graph.Variable) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.vars[v]
}

// CreateVariable creates a variable of the strategy's dtype, registered as a
// mirrored variable of s. init may be nil (zeros). It panics after Close or if
// len(init) does not match the shape.
func (s *Mirrored) CreateVariable(name string, shape []int, init []float64) *graph.Variable {
	s.checkOpen()
	v := graph.NewVariable(name, shape, s.dtype, init)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.vars[v] = true
	s.mu.order = append(s.mu.order, v)
	return v
}

// UniqueName returns base the first time, then base_1, base_2, ... (Keras
// style), counted per strategy.
func (s *Mirrored) UniqueName(base string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nextName(s.mu.names, base)
}

func nextName(counts map[string]int, base string) string {
	n := counts[base]
	counts[base] = n + 1
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s_%d", base, n)
}

// closeTimeout bounds how long Close waits for a replica still running a
// program before reporting it.
var closeTimeout = 10 * time.Second

// Close stops the replica goroutines and reports anything it had to leave
// behind: replicas still running after a grace period. Every later use of s
// panics with ErrClosed; a second Close returns ErrClosed (and panics under
// -tags invariants).
func (s *Mirrored) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		if invariants {
			panic(ErrClosed)
		}
		return ErrClosed
	}
	s.mu.closed = true
	s.mu.Unlock()
	live.remove(s)

	// Wait for a Run in flight so its replicas finish their step.
	s.runMu.Lock()
	s.traces.clear()
	if s.gpus != nil {
		s.gpus.Close()
	}
	for _, w := range s.loops {
		close(w.jobs)
	}
	s.runMu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(closeTimeout):
	}
	var busy []string
	for r, w := range s.loops {
		if w.running.Load() {
			busy = append(busy, strconv.Itoa(r))
		}
	}
	return fmt.Errorf("strategy: close: replicas still running after %v: %s", closeTimeout, strings.Join(busy, ", "))
}

// live lists the open strategies so an error can tell "created under another
// strategy" from "created outside any scope".
var live = liveRegistry{set: make(map[*Mirrored]bool)}

type liveRegistry struct {
	mu  sync.Mutex
	set map[*Mirrored]bool
}

func (l *liveRegistry) add(s *Mirrored) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set[s] = true
}

func (l *liveRegistry) remove(s *Mirrored) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.set, s)
}

// owner returns the open strategy that created v, or nil.
func (l *liveRegistry) owner(v *graph.Variable) *Mirrored {
	l.mu.Lock()
	ss := make([]*Mirrored, 0, len(l.set))
	for s := range l.set {
		ss = append(ss, s)
	}
	l.mu.Unlock()
	for _, s := range ss {
		if s.owns(v) {
			return s
		}
	}
	return nil
}
