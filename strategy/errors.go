package strategy

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is the value Mirrored methods panic with after Close.
	ErrClosed = errors.New("strategy: use of closed strategy")

	// ErrUsage is wrapped by every misuse panic: a bad option, a step function
	// of the wrong type, an argument Run cannot feed.
	ErrUsage = errors.New("strategy: misuse")

	// ErrScope is wrapped when a step reads or updates a variable that was not
	// created under the strategy running it.
	ErrScope = errors.New("strategy: variable outside scope")

	// ErrNonFinite is wrapped by the error of a step whose gradients or
	// outputs held NaN or Inf (WithCheckNumerics). Nothing was applied.
	ErrNonFinite = errors.New("strategy: value not finite")

	// ErrReplica is wrapped by every error from a step that failed on a replica.
	ErrReplica = errors.New("strategy: replica failed")

	// ErrCluster is wrapped by the error of a collective across workers
	// that failed (a worker died, or the workers' programs diverged): the
	// workers must be started again.
	ErrCluster = errors.New("strategy: cluster failed")
)

// usageError builds a misuse error that wraps ErrUsage but prints only msg.
func usageError(format string, args ...any) error {
	return &wrapped{msg: "strategy: " + fmt.Sprintf(format, args...), kind: ErrUsage}
}

// wrapped is an error with its own text that still matches a category
// sentinel through errors.Is.
type wrapped struct {
	msg  string
	kind error
}

func (e *wrapped) Error() string        { return e.msg }
func (e *wrapped) Is(target error) bool { return target == e.kind }

// ReplicaError is the error of a step that failed on one replica. Nothing of
// the step was applied.
type ReplicaError struct {
	Replica int    // the lowest replica that failed
	Phase   string // "trace", "run" or "apply"
	Err     error  // what the replica reported
	Others  int    // how many further replicas failed
}

func (e *ReplicaError) Error() string {
	msg := fmt.Sprintf("strategy: replica %d: %v", e.Replica, e.Err)
	if e.Others > 0 {
		msg += fmt.Sprintf(" (and %d more replicas failed)", e.Others)
	}
	return msg
}

func (e *ReplicaError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrReplica) true for every replica failure.
func (e *ReplicaError) Is(target error) bool { return target == ErrReplica }

// panicError turns a recovered panic value into an error, keeping errors as
// they are so errors.Is still sees through them.
func panicError(v any) error {
	if err, ok := v.(error); ok {
		return err
	}
	return fmt.Errorf("panic: %v", v)
}
