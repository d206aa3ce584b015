package worker

import "github.com/gotrain/gotrain/kernel"

// The enames of the errors this package ends a cell with: what a notebook
// shows above the traceback, and what the group and %replay branch on, so
// each is written once.
const (
	enameWorkerExited      = "WorkerExited"      // the process running the session exited: its variables are gone
	enameWorkerLost        = "WorkerLost"        // one of several workers exited, and all were stopped
	enameWorkerStartFailed = "WorkerStartFailed" // a fresh worker could not start its session
	enameWorkerClosed      = "WorkerClosed"      // the worker was stopped on purpose (shutdown, the others failed)
	enameWorkerError       = "WorkerError"       // the link to the worker failed
	enameWorkersStopped    = "WorkersStopped"    // %workers' set stopped; restart or off first
	enameWorkersFailed     = "WorkersFailed"     // %workers' set could not start or run the cell
	enameReplayDiverged    = "ReplayDiverged"    // %replay's cell printed other than it did
)

// sessionLost reports whether e says the cell's worker died, and with it
// the session's variables.
func sessionLost(e *kernel.ExecError) bool {
	return e != nil && (e.Name == enameWorkerExited || e.Name == enameWorkerLost)
}
