package strategy

// Cluster connects the worker processes of a multi-worker strategy, which
// run the same program (SPMD): every worker calls the same methods in the
// same order, and each call returns the same result on every worker. The
// strategy calls a Cluster from one goroutine at a time, though not always
// from the same one. An error is fatal for the cluster: the strategy returns
// it, and the workers must be started again.
type Cluster interface {
	// Rank returns this worker's index in [0, Size).
	Rank() int
	// Size returns the number of workers.
	Size() int
	// AllReduceF32 replaces buf, of the same length on every worker, with
	// the element-wise sum over workers: the same bits on every worker.
	AllReduceF32(buf []float32) error
	// AllReduceF64 is AllReduceF32 for float64.
	AllReduceF64(buf []float64) error
	// AllGather returns every worker's local slice, in rank order; the
	// lengths may differ between workers.
	AllGather(local []float64) ([][]float64, error)
	// Broadcast returns root's buf on every worker; the others' buf is
	// ignored.
	Broadcast(buf []byte, root int) ([]byte, error)
}
