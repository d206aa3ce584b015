package strategy

import (
	"os"
	"runtime"
	"strconv"
	"time"
)

// How replicas wait for each other.
//
// A replica that reaches a collective (a synchronized batch norm's
// statistics, an all-reduced loss) or the step barrier before the others
// waits for them; a ResNet step meets about 30 times. Sleeping there is
// slow on a virtual machine: a replica's goroutine is locked to its thread
// (replicaLoop.pin), so waking it takes two thread wake-ups (a spinning
// runtime thread finds it, then hands its processor to the locked one), and
// in a 2-replica ResNet step on this project's 2-core VM the sleeper left a
// collective a median 100-150 µs after the last arrival, at every one of
// the 30. It then arrived late at the next one, where the other replica
// waited as long: 7-9 ms of a 63 ms step. So a replica that has a core of
// its own spins first, for up to spinBudget, and sleeps only after that.
//
// Spinning needs a processor beyond the replicas'. With GOMAXPROCS equal to
// the replicas, a replica that computes in C (oneDNN, OpenBLAS) leaves its
// processor in a system call while the other holds its own spinning; the
// runtime's monitor, seeing no idle processor, takes the computing one's
// away and starts a thread to look for work, again and again: the step
// took 80 ms instead of 60. Even without spinning that churn cost the
// replicas 2-4 ms of descheduled time a step. NewMirrored therefore raises
// GOMAXPROCS to one more than its CPU replicas (reserveProcessor), and
// replicas spin only where that holds (spinning).

// spinBudget bounds how long a waiting replica spins before it sleeps. The
// replicas of a ResNet step arrive at a collective a median 100-200 µs
// apart, with a tail past 1 ms; 200 µs left too many sleeps.
const spinBudget = time.Millisecond

// spinUntil calls ready until it reports true, for up to spinBudget, and
// reports whether it did.
func spinUntil(ready func() bool) bool {
	start := time.Now()
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		if i%256 == 0 && time.Since(start) > spinBudget {
			return false
		}
	}
}

// spinning reports whether n replicas waiting for each other should spin
// before sleeping: when each has a core and the runtime a processor beyond
// theirs (see reserveProcessor). One replica never waits for another.
func spinning(n int) bool {
	return n > 1 && hostReplicas(n) <= runtime.NumCPU() && runtime.GOMAXPROCS(0) > n
}

// hostReplicas is the number of replicas sharing this host's cores: the
// process's n times the processes mpirun started on the host (workers
// simulating several hosts on one, or several ranks per host). A replica
// spinning on a core another process's replica needs would delay the
// replica it waits for.
func hostReplicas(n int) int { return n * localRanks }

// localRanks is the number of processes mpirun started on this host, this
// one among them, or 1 without mpirun: OMPI_COMM_WORLD_LOCAL_SIZE, read
// once, since a process's mpirun does not change.
var localRanks = parseLocalRanks(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))

func parseLocalRanks(v string) int {
	if n, err := strconv.Atoi(v); err == nil && n > 1 {
		return n
	}
	return 1
}

// reserveProcessor raises GOMAXPROCS to n+1 for n CPU replicas that have a
// core each, unless the user set GOMAXPROCS: the replicas keep their
// processors while they compute in C, and the runtime's other goroutines
// (the input pipeline, the kernel's) run on the one left, sharing a core
// with a replica while they run. It never lowers GOMAXPROCS.
func reserveProcessor(n int) {
	if n < 2 || hostReplicas(n) > runtime.NumCPU() || os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if runtime.GOMAXPROCS(0) <= n {
		runtime.GOMAXPROCS(n + 1)
	}
}
