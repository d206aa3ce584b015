// Package gorgoniamodel trains gorgonia models under a strategy.Mirrored: a model
// written as a gorgonia ExprGraph, in the way gorgonia users write one, runs
// on every replica on its shard of each global batch, and one merged update
// keeps its parameters identical, as for gotrain's own models.
//
// The user gives New a build function. At the first step for given
// input shapes it is called once per replica, with that replica's graph and
// input nodes, and returns the replica's loss:
//
//	s.Scope(func() {
//		model = gorgoniamodel.New(func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
//			w := r.Param("w", []int{784, 10}, gorgoniamodel.GlorotU(1))
//			logits := G.Must(G.Mul(x, w))
//			perExample := G.Must(G.Neg(G.Must(G.Sum(G.Must(G.HadamardProd(r.OneHot(y, 10), G.Must(G.LogSoftMax(logits)))), 1))))
//			return r.AverageLoss(perExample)
//		})
//		opt = nn.NewAdam(1e-3)
//	})
//	for it := dist.Iter(); it.Next(); {
//		loss := s.Reduce(strategy.Sum, model.Step(opt, it.Batch()))
//	}
//
// What the bridge does, and why:
//
//   - Each parameter (Replica.Param) is one variable of the strategy, created
//     by replica 0 with an initializer seeded by the strategy's seed and the
//     parameter's name (gorgonia's own initializers seed from the clock).
//     Every replica's parameter node is bound to the variable's storage
//     without copying, so checkpoints (nn.SaveCheckpoint) hold the model and
//     restore under any replica count. gorgonia's machines never write a
//     parameter's value, so the replicas may share it while they run.
//   - Each replica has its own gorgonia TapeMachine, run on the strategy's
//     replica goroutine by strategy.RunExternal; the gradients of the
//     parameters are summed over replicas in replica order and one update of
//     package nn's optimizers (nn.HostUpdate) is applied: the same bits
//     whatever the replicas' scheduling.
//   - gorgonia adds each run's gradients to the last ones (its solvers clear
//     them after use); the bridge clears them before every run.
//   - A partial last batch is padded and masked by the strategy; a loss made
//     with Replica.AverageLoss sums the real rows only and divides by the
//     global batch's count, so the replicas' losses sum to the batch mean and
//     their summed gradients are the gradient of that mean, for any replica
//     count. A loss that does not use it (a plain G.Mean) is refused: each
//     replica's mean would make the summed gradients N times too large.
//
// New makes gorgonia's matrix products use gotrain's BLAS (OpenBLAS
// unless built with the noopenblas tag) through gorgonia.Use, which is 3–4
// times faster than gonum's pure-Go BLAS gorgonia uses by default.
package gorgoniamodel
