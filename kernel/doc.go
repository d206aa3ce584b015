// Package kernel serves an Executor to Jupyter front ends over the Jupyter
// messaging protocol, version 5.5, on ZeroMQ sockets.
//
// The protocol is specified at
// https://jupyter-client.readthedocs.io/en/stable/messaging.html. The
// package knows nothing about running Go or training: it reads the
// connection file, binds the five sockets (shell, control and stdin as
// ROUTER, iopub as XPUB, heartbeat as REP), verifies and signs messages with
// HMAC-SHA256, dispatches requests, brackets each with status busy and idle
// on iopub, and hands code to an Executor.
//
// # Messages handled
//
// Shell: kernel_info_request, execute_request, is_complete_request,
// complete_request, inspect_request, history_request, comm_info_request,
// comm_open, comm_msg, comm_close, and also shutdown_request and
// interrupt_request.
//
// Control: kernel_info_request, interrupt_request, shutdown_request,
// comm_info_request and history_request. Control is served by its own
// goroutine, so it answers while a cell runs; it never calls the Executor
// other than Interrupt.
//
// Stdin: input_reply, answering the input_request an Executor's
// Output.Input sends. A reply without a parent header is accepted as the
// answer to the pending request, because jupyter_client sends it that way.
//
// Published on iopub: status, execute_input, stream, display_data,
// update_display_data, clear_output, execute_result, error, comm_open,
// comm_msg, comm_close and shutdown_reply, each with its request as
// parent_header; and iopub_welcome, with no parent, to each new subscriber
// alone (JEP 65), so a client knows when its subscription has taken effect,
// followed by the last status published for a request, sent again to that
// subscriber with that request as parent: a client whose subscription took
// effect after its first request was served (jupyter_server 1.23 does not
// always wait for the subscription) still sees that request end. A
// subscription takes effect only when the kernel sends these two, so no
// other client sees them and the new one cannot have seen that status.
//
// kernel_info_reply carries supported_features, empty: none of the
// optional features (debugger, subshells) is implemented.
//
// Unknown message types are logged and ignored.
//
// # A wire that one client cannot freeze
//
// The iopub socket keeps a bounded queue for each subscriber. A client that
// reads slowly, or not at all, loses stream, display_data,
// update_display_data and comm_msg messages once its queue is full (1000
// messages, as libzmq's default high-water mark, or 16 MiB); the kernel
// counts and logs the drops, and the other clients are not delayed. The
// messages a client needs to follow a request to its end (status,
// execute_input, execute_result, error, clear_output, comm_open,
// comm_close, shutdown_reply, iopub_welcome) are never dropped: they use a
// reserve, and a subscriber that has taken nothing for a second when even
// the reserve is full is disconnected instead (its client connects again).
//
// A TCP peer that never completes the ZeroMQ handshake on any port is
// disconnected after 10 seconds and blocks no other connection meanwhile.
//
// Anyone who can reach a port may connect without the key, so what one
// peer can make the kernel hold is bounded (peerLimits): a
// request's bytes and frames, the connections per socket, the
// subscriptions per iopub subscriber; a peer past a limit, or one that
// sends malformed ZeroMQ, is disconnected and nothing else is affected. A
// second connection with an identity already connected on shell, control
// or stdin is refused, as libzmq does, so it cannot receive the first
// one's replies; each client gets its replies from a queue of its own, so
// one that stops reading delays no other. An empty key, which turns
// signing off, is refused on tcp unless Config.AllowUnsigned is set.
//
// A message whose signed header (msg_id, session, msg_type, date) the
// kernel has already seen within Config.ReplayWindow (10 minutes by
// default) is a replay: it is logged and dropped, so a copied, validly
// signed execute_request does not run twice.
//
// # Conventions
//
// Every error about a malformed or forged message wraps ErrProtocol; such
// a message is logged and dropped, and the kernel keeps serving. A panic
// while serving a request is recovered at that request's boundary and
// logged with its stack; a panic escaping Executor.Execute becomes the
// cell's error.
//
// Shell requests run one at a time, in order, on one goroutine, except a
// kernel_info_request from a client with nothing queued, which is answered
// at once: a client that connects during a long cell or a burst of cells
// waits for nothing else before it can show the kernel. After a
// failed cell whose request has stop_on_error set, the execute_requests
// the kernel has already received are answered with status "aborted";
// other queued requests are served. Requests still in transit when the
// error reply goes out are served normally.
//
// The execution count starts at 1 and grows by one for each non-silent
// execute_request that stores history. A silent request broadcasts
// nothing on iopub: no execute_input, output, result or error.
//
// # Lifecycle
//
// New binds the sockets; Run serves until Close (stop now), Shutdown (stop
// taking shell requests, finish the running cell, then close) or a
// shutdown_request, and returns ErrClosed. Every goroutine the kernel starts
// is waited for before Close returns. A Kernel must not be reused after it
// is closed.
package kernel

// BUG(kernel): the limits on what a peer may send are per message and per
// connection, not for the kernel as a whole: peers that together
// send 64 MiB requests on every connection of shell, control and stdin at
// once make the kernel hold up to 3 x 64 x 64 MiB while it reads and drops
// them. No key is needed to send them; the ipc transport keeps other users
// from connecting at all.
