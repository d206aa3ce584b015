package data

import "fmt"

// InputContext tells a dataset function which part of the input one input
// pipeline reads when a distribution strategy builds one pipeline per
// worker (tf.distribute.InputContext).
type InputContext struct {
	NumInputPipelines int // pipelines in all
	InputPipelineID   int // this pipeline, in [0, NumInputPipelines)
	NumReplicasInSync int // replicas that train in step
}

// PerReplicaBatchSize returns the batch each replica gets from a global
// batch, or an error if global does not divide evenly among the replicas.
func (c InputContext) PerReplicaBatchSize(global int) (int, error) {
	if c.NumReplicasInSync <= 0 {
		return 0, fmt.Errorf("data: want at least 1 replica in sync, got %d", c.NumReplicasInSync)
	}
	if global <= 0 {
		return 0, fmt.Errorf("data: want a positive global batch, got %d", global)
	}
	if global%c.NumReplicasInSync != 0 {
		return 0, fmt.Errorf("data: global batch %d not divisible by %d replicas", global, c.NumReplicasInSync)
	}
	return global / c.NumReplicasInSync, nil
}
