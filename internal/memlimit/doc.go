// Package memlimit says how much memory this process may use, so that the
// packages that allocate on a user's behalf (data's tensors and batches,
// nn's weights, graph's buffers) can refuse a shape larger than the machine
// with an error instead of letting the runtime end the process with "fatal
// error: out of memory", which no recover catches and which would cost a
// notebook its session.
//
// The limit is read once, on first use. All functions are safe for
// concurrent use.
package memlimit
