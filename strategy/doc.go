// Package strategy runs one model on N replicas and keeps their weights
// identical: it is gotrain's MirroredStrategy, modelled on TensorFlow's
// tf.distribute.MirroredStrategy used through a custom training loop.
//
// A user creates a strategy, builds the model and optimizer inside
// [Mirrored.Scope], distributes a dataset with [Mirrored.DistributeDataset]
// and calls [Mirrored.Run] once per step:
//
//	s := strategy.NewMirrored()
//	dist := s.DistributeDataset(ds.Batch(64))
//	s.Scope(func() { model = nn.NewSequential(...); opt = nn.NewAdam(0.001) })
//	for it := dist.Iter(); it.Next(); {
//		loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
//	}
//
// # Devices and replicas
//
// Without GPUs every replica is a logical CPU device ("cpu:N"). By default
// there is one replica per core; several logical devices may share a core
// ([WithReplicas], [WithDevices]). Each replica has a persistent goroutine,
// started by [NewMirrored] and stopped by [Mirrored.Close].
//
// In a binary built with -tags cuda, with NVIDIA GPUs present, NewMirrored
// makes one replica per GPU ("gpu:N") instead; WithReplicas or CPU devices
// keep it on CPUs, and WithDevices("gpu:0", "gpu:0") puts several replicas on
// one GPU. A GPU replica's goroutine keeps its OS thread, with its device's
// context current there; its step is a device program (graph.GPUs.Compile)
// fed its shard from the host. The strategy decides which update runs
// where; the device work between the programs (sums, copies, device
// updates) is graph.DeviceStep's. Each update's gradients are summed over the
// replicas in replica order: on one GPU by an add kernel into replica 0's
// buffer; over GPUs of one replica each by NCCL when it is available (its
// own order); otherwise through the host. An update that is a [DeviceSplit]
// (the optimizers of package nn without clipping) then runs on every
// device's copy of its variables, whose results become the variables'
// values there without a copy (graph.Variable.SetDeviceNewer): the host copy
// is made from one device at the first host read of the variable (Value,
// F32, F64, a checkpoint, a host update, a CPU program), between Runs; any
// other update gets the summed gradients on the host and Apply runs there,
// after which the device copies are refreshed from the host at their next
// use. Either way Value, checkpoints and Assign
// work as on CPUs, and a host write reaches the devices at the next step.
// The step's outputs are copied to the host for Reduce and Gather.
//
// # Tracing
//
// The step function passed to Run is called once per replica, the first time
// Run sees it with given per-replica input shapes, to build one graph per
// replica (like tf.function). The step function is therefore never called per
// step: every later Run feeds the shards into the compiled programs, runs them
// concurrently, sums the gradients that optimizers registered with
// [ReplicaContext.ApplyUpdate] across replicas in a fixed order (replica 0
// first, so the result is bit-identical whatever the replicas' scheduling)
// and applies each update once to the shared variables. How each update is
// applied is decided once, when the step is traced, from the interfaces it
// implements ([Update], [Checker], [Split], [DeviceSplit]). An update that is
// element by element (an optimizer without clipping, see [Split]) is shared:
// after a barrier each replica's goroutine sums and updates its own part of
// every variable, and each replica's goroutine keeps one OS thread. In such
// an update, a gradient that is a matrix product (a dense layer's kernel,
// xᵀ·dz) is not computed by the programs: after the barrier each replica
// computes its rows of it from every replica's x and dz, accumulating in
// replica order, which reads less memory than the replicas' products when
// a replica's share of the batch is smaller than the layer. Steps whose
// updates are small (under 64k elements) skip all this: it costs more than
// it saves there. On several workers the replicas share the updates too,
// but meet a second time: after each has summed its part over the local
// replicas, the last to arrive agrees with the other workers that none
// failed and sums the gradients across them, and only then do the parts
// apply; no product is deferred there, since it must be whole before the
// sum across workers.
// Traces are cached by the step function's identity and the input shapes; the
// cache is small, so alternating between many step functions retraces. A
// closure the cache has not seen (a func literal written inside an outer
// function is a new closure at each call) is called to build its graphs,
// and if they are a cached trace's, that trace is reused without compiling.
// A retrace for new input shapes, and repeated retraces of new closures,
// warn once on the strategy's warning writer (WithWarnings; os.Stderr, which
// a notebook shows in the running cell). A
// trace also goes stale, and the step retraces, when a variable it reads
// changes trainability (a layer frozen or unfrozen between cells), since the
// gradients and updates it registered depend on which variables train.
// Likewise when a notebook session variable the step function reads is
// reassigned (an optimizer, a model, a loss object, a Go value folded into
// the graph): the cell compiler registers which variables each function of
// a cell reads, through the functions it calls (internal/stepdeps), a trace
// keeps their bytes, and the next Run that finds them changed retraces and
// says "strategy: retracing trainStep: current changed since it was
// traced" on the warning writer. Variables the step does not read (a loss
// total the loop adds to) trace nothing; the comparison costs a few bytes
// per Run and no allocation. A step function that no cell compiled (a Go
// program's) registers nothing and is not watched.
//
// # Collectives inside a step
//
// [ReplicaContext.AllReduce] reduces a value across replicas in the middle of
// the step: each replica's program pauses at the reduction until all have
// arrived, the last one sums in replica order, and all continue with the same
// bits. It is differentiable (its backward pass is another all-reduction), so
// synchronized batch statistics can feed a loss. If a replica fails, the
// others are released from any reduction they wait in and the step is
// discarded everywhere.
//
// # Mirrored variables
//
// On CPU the replicas share one copy of each variable: every replica reads the
// same storage during a step and only the merged update writes it, between
// steps. This keeps the mirrored semantics (all replicas see identical
// weights) and leaves room for per-device copies later.
//
// # Padding
//
// A global batch is split evenly along axis 0. When it does not divide by the
// replica count, or is shorter than the first (full) batch, it is padded to the
// full shape and a per-example mask (1 real, 0 padding) marks real rows, so
// shapes never change and the loss stays exact (see nn.ComputeAverageLoss).
//
// # Several workers
//
// [WithCluster] makes the strategy one worker of several processes that run
// the same program (SPMD, TensorFlow's MultiWorkerMirroredStrategy). Replica
// ids and [Mirrored.NumReplicasInSync] count every worker's replicas, so
// dropout streams, padding and the global count stay what one process with
// all the replicas would use. Each worker iterates the same global dataset
// and keeps its replicas' shards; [Mirrored.DistributeDatasetsFromFunction]
// gives each worker its input pipeline and agrees on the end of the data.
// Gradients are summed over the local replicas and then across workers
// through the [Cluster], whose sum must give the same bits on every worker;
// [Mirrored.Reduce] and [Mirrored.Gather] reduce across workers too, so
// every worker must call them. Every Run first agrees, in one collective,
// on pending interrupts (all workers stop at the same Run; a worker of
// several waits for this agreement instead of stopping at its own safe
// points, internal/safepoint.SetAgreed), on a trace that failed, and on a
// signature of the trace (updates, variables, shapes, outputs), so workers
// whose cells built different models fail with an error naming the worker
// before any gradient is summed. After the replicas ran they agree on
// failures: a step that failed on one worker applies nothing on any.
// [Mirrored.RunExternal] steps agree on interrupts and failures the same way.
//
// # Conventions
//
// Misuse (a wrong option, a closed strategy, a step function of the wrong
// type) panics with an error wrapping one of this package's error values.
// Failures of a step (a replica's panic, a shape error while tracing, a
// numeric error in a kernel) are returned by [Mirrored.TryRun] and panicked
// with by [Mirrored.Run], whose callers are notebook cells. A failed step
// changes no variable. Before anything is applied, each replica checks its
// gradients and the step's outputs for NaN and Inf ([WithCheckNumerics], on
// by default); a step that fails it returns a *ReplicaError wrapping
// ErrNonFinite that names the replica and the variable. Run refuses a
// data.Tensor with a batch axis on several replicas: distribute the
// dataset, or [Mirrored.Broadcast] the value. Run checks internal/safepoint
// first, so a notebook interrupt stops a training loop between steps: a
// step runs on every replica or on none.
//
// A Mirrored is safe for concurrent use, but Run calls are serialized.
package strategy

// BUG(strategy): A step function passed as a new closure at every step (a
// func literal written in the Run call or inside an outer function, a method
// value) is called at every step to build its
// graphs, which are then recognised and not compiled again; assigning the
// step function to a variable once avoids even that.

// BUG(strategy): A retrace for a session variable sees the variable
// reassigned, not the value it holds changed: setting a field through a
// pointer the step reads, or an element of a slice, does not retrace. A
// function redefined in a later cell does not update what the earlier
// cells' functions that call it were registered to read.

// BUG(strategy): WithCheckNumerics checks what goes into an update (the
// gradients, and the learning rate through a [Checker]), not what comes
// out: finite gradients and rate whose update overflows to Inf are applied.

// BUG(strategy): A device update (DeviceSplit) whose kernel launch or
// stream fails on the last device, after a previous step's device update
// left the host copy stale, leaves that device's copy, which it may have
// written in part, as the variable's value: no unwritten copy is left. An
// allocation failing (a device copy made at first use) changes nothing.

// BUG(strategy): With GPU replicas, WithCheckNumerics checks the step's
// outputs but not the gradients, which stay on the devices.

// BUG(strategy): Updates are applied one after another after every replica
// succeeded; if an optimizer's Apply panics, the updates registered before it
// in the same step stay applied.

// BUG(strategy): On several workers no gradient product is deferred
// (graph.Program.Defer), and a dataset's safe point (an interrupt in
// DistributedIterator.Next) is not agreed between workers, only Run's is.
