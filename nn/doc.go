// Package nn is the training toolkit users write models with: layers,
// sequential models, losses and optimizers that build nodes in a replica's
// graph while a strategy traces a step function.
//
// A model is built inside a strategy's scope and called from the step
// function given to strategy.Run:
//
//	s.Scope(func() {
//		model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
//		opt = nn.NewAdam(0.001)
//	})
//	trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
//		logits := model.Call(ctx, x, true)
//		loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
//		opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
//		return loss
//	}
//
// # Conventions
//
// A Tensor is a graph node (type Tensor = graph.Node): calling a layer does not
// compute anything, it adds nodes to the replica's graph; the strategy compiles
// and runs the graph at each step. Layers create their variables lazily, on
// the first call, when the input width is known, through
// strategy.CreateVariable, so they become mirrored variables of the strategy
// running the step. Names are unique per strategy, Keras style (dense,
// dense_1, ...), and a layer's variables are named "LAYER/kernel" and
// "LAYER/bias". Initial weights come from a math/rand/v2 PCG stream seeded by
// the strategy's seed and the variable's name, so two strategies with the
// same seed build identical models whatever their replica count.
//
// Optimizers (SGD, Adam, AdamW, RMSprop) keep their slots (Adam's moments,
// SGD's velocity) in variables created under the strategy on the first
// ApplyGradients (or by BuildOptimizer), and update through
// strategy.ReplicaContext.ApplyUpdate: the update runs once per step, on the
// gradients summed over replicas, with the fused loops of package loops,
// each replica updating its part of every variable (strategy.Split).
// Their step counter is a non-trainable variable too ("NAME/iterations"), so
// a checkpoint keeps it, and learning-rate schedules (WithSchedule:
// StepDecay, ExponentialDecay, CosineDecay) are evaluated on it. Clipping by
// global norm (WithClipGlobalNorm) happens inside the update, after the
// cross-replica sum; Accumulate sums the gradients of k steps and applies
// them once. AdamW decays the variables of rank ≥ 2 only, unless told
// otherwise (WithDecayIf, WithoutDecay).
//
// # Models
//
// A Sequential chains layers. A model of one's own (a GPT, a residual
// block) is a Go struct of its parts with two methods, Call and Variables
// (see Model); its Variables lists the parts' with VariablesOf, which
// reports a weight two parts share (a tied embedding) once. A residual is
// nn.Add(x, f(x)) (models/resnet is one); a part that takes other inputs is a method with its
// own signature (EmbeddingLayer.Attend). TrainableVariables, SetTrainable,
// Summary, Predict, Evaluate and the checkpoints take any Model, nothing is
// found by reflection. Variable names are the paths given to the layers
// (Named("block_0/attn/query") makes block_0/attn/query/kernel).
//
// # Layers
//
// Dense (on the last axis of any rank), Conv2D (NHWC, Same padding for
// every stride, dilation), Conv1D (over [batch, time, channels]; Valid,
// Same or Causal padding), MaxPool2D, AveragePooling2D,
// GlobalAveragePooling2D, Flatten, Dropout, BatchNormalization, Embedding,
// PositionEmbedding and Activate take LayerOptions (Named, WithoutBias,
// WithActivation, WithStrides, WithDilation, WithPadding, WithSeed,
// SyncBatchStats, BatchNormMomentum, BatchNormEpsilon); an option a layer
// does not use panics and names the option. Add joins a residual branch to
// its shortcut and refuses two shapes, naming both. BatchNormalization with SyncBatchStats
// computes its batch moments over the real rows of every replica through a
// differentiable cross-replica sum (strategy.ReplicaContext.AllReduce), so
// N replicas train exactly like one; each channel's sum and sum of squares
// are one pass and one all-reduce, and CallAct folds a residual add and the
// ReLU after it into the normalizing pass. Its moving statistics and Dropout's
// per-replica random stream are non-trainable variables updated once per
// step, so a checkpoint restores them. SetTrainable(false) freezes a layer
// (or a whole Sequential) between cells: its variables leave
// TrainableVariables, and the next Run retraces.
//
// LSTM and GRU (Keras's meanings; GRU's reset gate after the recurrent
// product, Keras's reset_after=True and torch's convention) run over
// [batch, time, features], unrolled over the time axis with shared
// weights: traced once per sequence length, the input's product for every
// step in one gemm and the recurrent product per step. ReturnSequences,
// GoBackwards and CallWithState (a mask of real steps, initial states, the
// final states) give Keras's return_sequences, go_backwards, mask,
// initial_state and return_state; Bidirectional wraps either, merging by
// concatenation unless Merge says otherwise. A masked step keeps the
// state, so padding changes neither outputs nor gradients.
//
// Outside step functions, Predict and Evaluate (and Sequential's methods of
// those names) run a model in inference mode on its strategy, over any
// number of rows (traced once, with the results of strategy.Run and Gather).
//
// # Losses and metrics
//
// Losses (SparseCategoricalCrossentropy, CategoricalCrossentropy,
// BinaryCrossentropy, MeanSquaredError) take optional sample weights. Inside
// strategy.Run use ReductionNone and ComputeAverageLoss, and add
// regularization as ScaleRegularizationLoss(L2(λ, vars)), as in TensorFlow's
// custom training loops. Metrics (Mean, SparseCategoricalAccuracy, Precision,
// Recall, AUC) run on the host over Run's outputs, padding rows dropped.
//
// # Checkpoints
//
// SaveCheckpoint and RestoreCheckpoint write and read every variable of a
// strategy by name, atomically, in the versioned, checksummed format that
// CHECKPOINT.md (next to this file) documents; a checkpoint restores under
// any replica count. An InputPosition, checkpointed with the strategy (Join),
// keeps where the input stands (epoch, position, the Shuffles' passes), so
// that a restored run continues with the batches the uninterrupted run would
// have seen.
//
// # Safetensors
//
// SaveSafetensors and LoadSafetensors write and read variables as
// safetensors, the format PyTorch, JAX and the model hubs exchange weights
// in: by their names, or through a TensorMap that names another tool's
// tensors and converts their layouts (a transposed Linear.weight, a
// Conv2d.weight, a fused q/k/v projection, a tied output layer); models/gpt
// and models/resnet ship the maps for their PyTorch twins. A load checks
// everything before it changes any variable.
//
// Misuse found while tracing (an input of the wrong width, a loss reduction
// that would be wrong across replicas) panics with an error wrapping ErrShape
// or ErrUsage; the strategy turns it into the Run error that names the
// replica. Layers, models and optimizers are not safe for concurrent use, but
// the strategy traces replicas one at a time.
package nn
