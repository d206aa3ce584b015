// Package worker runs the user's session in a separate process, so that
// nothing a cell does can take the kernel down with it.
//
// The kernel side is a Client, which implements kernel.Executor: it starts
// `gotrain worker` as a child process, listens for it on a Unix socket (or
// TCP, for a worker on another host) and forwards execute, complete,
// inspect, is_complete, stdin and interrupt requests over the link. The
// worker side is Serve: it captures file descriptors 1 and 2, so that fmt,
// log, os.Stdout, C code through cgo, child processes and goroutines all
// stream into the running cell, and runs the session engine it is given.
//
// # The link
//
// One stream connection carries frames: a 4-byte big-endian length, one
// kind byte, and a body (raw text for stream output, JSON otherwise). It
// begins with a handshake in which the worker and the kernel prove to each
// other that they hold the worker's secret, which the kernel passed in
// TokenEnv, without sending it (auth.go); a handshake frame is at most
// 4 KiB, and a peer that fails is disconnected, having learnt nothing. Over
// TCP (%workers -np) the link is TLS, with a certificate the kernel made
// and the workers pin. The worker's output leaves in the order it was produced:
// every display, input prompt and result first drains fds 1 and 2, and
// stream text written while the link is busy is sent as one frame.
//
// # Faults
//
// A worker that dies (a stack overflow, an allocation the system refuses,
// os.Exit, SIGKILL, a fatal signal in C) turns the running cell into an
// error named WorkerExited, with the exit status and the runtime's last
// words, which the worker copies to its original stderr through
// debug.SetCrashOutput. A worker that ends any way it controls (told to
// shut down, its kernel gone, SIGTERM) first closes its session, which
// removes the session's build folder. Requests waiting on it are answered, a fresh worker
// starts in the background, and the next cell is told once that the
// session's state is gone. A worker whose kernel is gone sees its link
// close and exits.
//
// # Several workers
//
// Group is the kernel's executor: one Client, or, after %workers, one per
// worker of a multi-worker strategy, every worker running every cell.
// %workers N starts them itself, joined by a loopback cluster. %workers -np
// N starts mpirun, which starts them on the hosts it is given; each rank
// attaches to the kernel over TLS with the job's credential and its rank (a
// Client with Config.Attach starts nothing), runs as the child of a small
// supervisor that keeps its crash report for mpirun to relay (Supervise),
// and reduces through MPI. The kernel is mpirun's parent, never a rank:
// mpirun ends the job when a rank dies, and names it. A rank that stops
// answering pings for a few seconds (its host lost) is counted lost too.
//
// # Magics
//
// A cell's first lines may be magics, handled before its Go code: !CMD,
// %help, %env, %time, %reset, %replay, %workers, %limit and %go. One table
// (magics, which %help shows) says for each where it runs and what the
// %replay journal keeps of it. A cell's magics are parsed once, where it
// enters the kernel, and travel parsed: the Group runs %workers, %replay
// and its part of %reset, its Client %help, %reset and its part of %limit,
// and the execute frame carries the rest to the worker's server, which
// runs them and calls the session for %go. Each of the three has a map of
// handlers that TestMagicTable holds to the table.
//
// # Replay
//
// The Group journals the cells that changed the running session: those
// that succeeded, and those whose statements ran and then panicked, with
// the kind and line of their failure. When its worker dies, the cell's
// error offers %replay, which runs the dead session's journaled cells
// again, in order, in the fresh session, each expected to end as it did
// (a failed cell to fail the same way): seeded strategies, datasets and
// initializers make a training session come back bit for bit. A replay
// that stops at a cell ending otherwise keeps that cell and the ones
// after it in the journal, so that a later %replay, or a later death and
// %replay, goes on with them. A cell with a shell command acts outside the
// session: it is listed and skipped unless %replay all is given.
//
// BUG(worker): An interrupted cell is not journaled: where it stopped
// cannot be found again, so %replay leaves out what it did.
package worker
