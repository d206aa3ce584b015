package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Tensor is a node of a replica's graph. It is an alias, so a step function
// declared with *nn.Tensor parameters is the func(*strategy.ReplicaContext,
// *graph.Node, ...) that strategy.Run calls.
type Tensor = graph.Node

// Variable is a model weight or optimizer slot (an alias of graph.Variable).
type Variable = graph.Variable

// graphOf returns the graph to build in: the context's when there is one,
// else x's.
func graphOf(ctx *strategy.ReplicaContext, x *Tensor) *graph.Graph {
	if ctx != nil {
		return ctx.Graph()
	}
	return x.Graph()
}
