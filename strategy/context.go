package strategy

import "github.com/gotrain/gotrain/graph"

// ReplicaContext is what a step function gets for the replica it is being
// traced for: the replica's graph, its place among the replicas, gradients,
// and the hook through which optimizers register their update
// (tf.distribute.ReplicaContext). It is valid only while the step function
// runs during tracing.
type ReplicaContext struct {
	s     *Mirrored
	id    int
	g     *graph.Graph
	count *graph.Node // scalar: real examples in the global batch; built on demand

	updates   []Registration
	gradVars  map[*graph.Node]*graph.Variable
	gradCalls []gradCall
	coll      replicaCollective // the trace's collective, as this replica
}

// gradCall remembers one Gradients call so ApplyGradients can find the
// variables of the slice it is handed.
type gradCall struct {
	grads []*graph.Node
	vars  []*graph.Variable
}

// Registration is an update as a step registers it (ApplyUpdate) or hands
// it to RunExternal: its name, its variables and their gradients, and its
// arithmetic. After every replica has run its step, the strategy sums each
// gradient across replicas and calls Update.Apply once with the sums, or,
// when Update is a Split, may have the replicas share it.
type Registration struct {
	Name   string            // for errors, e.g. "adam"
	Vars   []*graph.Variable // the variables to update, created under the strategy
	Grads  []*graph.Node     // this replica's gradients, aligned with Vars
	Update Update
}

// Update is the arithmetic of an update. Apply gets each variable of its
// Registration's Vars with its gradient summed over replicas, in order. The
// strategy discovers what else an update can do when the step is traced,
// by the interfaces it implements: Checker, Split and DeviceSplit.
type Update interface {
	Apply(grads []Grad)
}

// UpdateFunc adapts a function to an Update, as http.HandlerFunc adapts
// one to a Handler.
type UpdateFunc func(grads []Grad)

// Apply calls f(grads).
func (f UpdateFunc) Apply(grads []Grad) { f(grads) }

// Checker is implemented by an update that checks itself before each step.
// Check runs once per step before any replica does; an error stops the
// step, with nothing applied, and Run returns it as is. An optimizer checks
// there that its learning rate, a field that may have been assigned since
// the trace, is finite.
type Checker interface {
	Check() error
}

// Split is an update whose arithmetic is element by element, so that it can
// be applied in parts: the replicas can share it instead of Apply running it
// alone. The strategy shares it when no other update of the step touches
// its variables and the step's shareable updates have at least 64k
// elements in all; otherwise it calls Apply.
//
// In each step the strategy calls Begin once, then Part from every
// replica's goroutine, concurrently, for disjoint ranges that together
// cover every variable, and then End once. Each range's gradient is summed
// over replicas in replica order, as for Apply, and an element's arithmetic
// must not depend on the range it falls in: the parts then give the same
// bits as Apply.
//
// The replicas share the update so that it runs on the threads that already
// run the step, each summing and updating its part a block at a time while
// the block is in its core's cache, rather than on the goroutine calling Run
// after them, which has to wake helpers for every variable. With the MLP
// 784-512-512-10 on two cores, 5 interleaved runs: 43.1k samples/s against
// 38.2k (40.4k with the replica threads locked but the update not shared).
type Split interface {
	Update
	// Begin prepares the step's update (its number, its learning rate). It
	// runs on the goroutine calling Run before the replicas start, also for
	// a step that then fails, so it must not change any variable.
	Begin()
	// Part updates elements [off, off+len) of Vars[i] with g, their
	// gradient summed over replicas (g.F32 or g.F64 holds len values).
	// Calls with disjoint ranges run concurrently; each call gets at most
	// SplitBlock elements.
	Part(i, off int, g Grad)
	// End finishes the step (advances a step counter) after every Part, on
	// the goroutine calling Run. It is not called for a step that failed.
	End()
}

// DeviceSplit is a Split that also runs on a GPU (in a binary built with
// -tags cuda). GPU replicas, on one worker, run it on the devices instead
// of calling Part: between Begin and End, on the goroutine calling Run,
// once per variable and device; the variables' device copies then hold the
// results.
type DeviceSplit interface {
	Split
	// Device returns the update on a GPU: it enqueues on s the update of
	// the copy of Vars[i] at w on s's device, with g, its gradient summed
	// over replicas on that device, and the copies of Slots()[i] at slots,
	// aligned with them, giving the bits Part would.
	Device() graph.DeviceUpdate
	// Slots returns, aligned with Vars, the variables besides Vars[i] that
	// the update of Vars[i] writes (an optimizer's slots), for Device.
	Slots() [][]*graph.Variable
}

// SplitBlock is the most elements one call of Split.Part gets: a block whose
// gradient, weights and slots stay in a core's cache between the sum and the
// update.
const SplitBlock = 8192

// Grad is one variable's gradient summed over replicas, in the variable's
// dtype (F32 for Float32 strategies, F64 for Float64). Apply may read and
// scratch it; it is owned by the strategy and reused next step.
type Grad struct {
	Var *graph.Variable
	F32 []float32
	F64 []float64
}

// BuildContext returns a context for replica 0 over g, a graph of the
// strategy's dtype that is never run, for calling a model outside Run only
// so that its layers build their variables (nn.Build does, as Keras's
// model.build does): ReplicaID, NumReplicasInSync, Device and Graph answer
// as in replica 0's trace, so a Call that reads them works there too.
// Updates registered with it are never applied, and its AllReduce nodes
// never run. It panics with an error wrapping ErrUsage if g is nil or of
// another dtype.
func (s *Mirrored) BuildContext(g *graph.Graph) *ReplicaContext {
	if g == nil || g.DType() != s.dtype {
		panic(usageError("BuildContext: want a graph of the strategy's dtype %v, got %v", s.dtype, g))
	}
	return &ReplicaContext{s: s, g: g}
}

// Strategy returns the strategy running the step.
func (c *ReplicaContext) Strategy() *Mirrored { return c.s }

// ReplicaID returns the replica's index in [0, NumReplicasInSync), counted
// over every worker: worker w's replicas come after those of workers 0…w-1.
func (c *ReplicaContext) ReplicaID() int { return c.s.rank*len(c.s.devices) + c.id }

// NumReplicasInSync returns the number of replicas, of every worker.
func (c *ReplicaContext) NumReplicasInSync() int { return c.s.NumReplicasInSync() }

// Device returns the replica's device, e.g. "cpu:1".
func (c *ReplicaContext) Device() string { return c.s.devices[c.id] }

// Graph returns the replica's graph.
func (c *ReplicaContext) Graph() *graph.Graph { return c.g }

// Mask returns the replica's per-example mask ([rows]: 1 real, 0 padding), or
// nil when the step was not given a batch.
func (c *ReplicaContext) Mask() *graph.Node { return c.g.Mask() }

// GlobalCount returns a scalar node holding the number of real examples in
// the global batch of the current step (all replicas together), fed at each
// Run. Losses averaged by it are exact on a padded last batch.
func (c *ReplicaContext) GlobalCount() *graph.Node {
	if c.count == nil {
		c.count = c.g.Placeholder("global_count")
	}
	return c.count
}

// Gradients returns the gradient of the scalar loss with respect to each
// variable, aligned with vars. It panics with an error wrapping ErrScope if a
// variable was not created under the strategy, and with the graph's error if
// loss is not a scalar of this replica's graph.
func (c *ReplicaContext) Gradients(loss *graph.Node, vars []*graph.Variable) []*graph.Node {
	xs := make([]*graph.Node, len(vars))
	for i, v := range vars {
		if err := c.s.checkVariable(v); err != nil {
			panic(err)
		}
		xs[i] = c.g.Var(v)
	}
	if loss == nil || loss.Graph() != c.g {
		panic(usageError("Gradients: want a loss built in replica %d's graph, got %v", c.ReplicaID(), loss))
	}
	grads := c.g.Gradients(loss, xs)
	if c.gradVars == nil {
		c.gradVars = make(map[*graph.Node]*graph.Variable)
	}
	for i, gr := range grads {
		if _, dup := c.gradVars[gr]; !dup {
			c.gradVars[gr] = vars[i]
		}
	}
	c.gradCalls = append(c.gradCalls, gradCall{grads: grads, vars: vars})
	return grads
}

// VariablesOf returns the variables that the gradients in grads (as returned
// by Gradients, possibly a subset) belong to, aligned with grads.
func (c *ReplicaContext) VariablesOf(grads []*graph.Node) ([]*graph.Variable, error) {
	// The slice handed back unchanged: exact, even when two gradients are the
	// same node (a shared zero).
	for _, call := range c.gradCalls {
		if len(call.grads) == len(grads) && len(grads) > 0 && &call.grads[0] == &grads[0] {
			return call.vars, nil
		}
	}
	vars := make([]*graph.Variable, len(grads))
	for i, gr := range grads {
		v, ok := c.gradVars[gr]
		if !ok {
			return nil, usageError("gradient %d (%v) did not come from ReplicaContext.Gradients; pass the gradients it returned", i, gr)
		}
		vars[i] = v
	}
	return vars, nil
}

// ApplyUpdate registers an optimizer update for this step. Every replica
// registers the same updates in the same order while tracing; at each Run the
// strategy sums u.Grads across replicas (loops.AllReduceSum, replica order)
// and calls u.Update.Apply once, after every replica succeeded, or, for a
// Split, has the replicas sum and apply it in parts. An update may have no
// variables: Apply then simply runs once per step (nn.Dropout advances its
// random stream's counter so). Layers also use it for statistics, handing
// values whose cross-replica sum they want (batch norm's moving averages).
// It panics with an error wrapping ErrScope if a variable was not created
// under the strategy, and with ErrUsage if the gradients do not match the
// variables or u.Update is nil.
func (c *ReplicaContext) ApplyUpdate(u Registration) {
	if len(u.Vars) != len(u.Grads) {
		panic(usageError("ApplyUpdate %s: want one gradient per variable, got %d variables and %d gradients", u.Name, len(u.Vars), len(u.Grads)))
	}
	if u.Update == nil {
		panic(usageError("ApplyUpdate %s: want an Update, got nil", u.Name))
	}
	for i, v := range u.Vars {
		if err := c.s.checkVariable(v); err != nil {
			panic(err)
		}
		gr := u.Grads[i]
		if gr == nil || gr.Graph() != c.g {
			panic(usageError("ApplyUpdate %s: gradient of %q is not a node of replica %d's graph", u.Name, v.Name(), c.ReplicaID()))
		}
		if gr.Len() != v.Len() {
			panic(usageError("ApplyUpdate %s: gradient of %q: want %d values %v, got %v", u.Name, v.Name(), v.Len(), v.Shape(), gr.Shape()))
		}
	}
	c.updates = append(c.updates, u)
}

// AllReduce returns a node holding op (Sum or Mean) of n over all replicas,
// of every worker, the same bits on every replica. Each replica's step
// pauses at the reduction, in the middle of its run, until every replica has
// computed n. On several workers the local replicas' sum, in replica order,
// is then summed across workers through the Cluster, so the result's bits
// differ from one process's by rounding only.
//
// The reduction is differentiable: the gradient of a cross-replica sum with
// respect to each replica's n is the cross-replica sum of the gradients of
// the result, which the backward pass computes with another all-reduction.
// So a loss may depend on it (synchronized batch statistics): gradients
// summed over replicas, as optimizers get them, are exact.
func (c *ReplicaContext) AllReduce(op ReduceOp, n *graph.Node) *graph.Node {
	if op != Sum && op != Mean {
		panic(usageError("AllReduce: unknown reduce op %v", op))
	}
	if n == nil || n.Graph() != c.g {
		panic(usageError("AllReduce: want a node of replica %d's graph, got %v", c.ReplicaID(), n))
	}
	scale := 1.0
	if op == Mean {
		scale = 1 / float64(c.NumReplicasInSync())
	}
	return graph.AllReduce(n, c.coll, scale)
}
