// Package data is gotrain's input pipeline: it turns host tensors and files
// into batches that a training loop reads one step at a time.
//
// A Tensor is a row-major float64 array with a shape. A Dataset describes a
// sequence of elements, each element a []Tensor (for example features and
// labels), and is built from tensors (FromTensorSlices, FromFunc) and then
// transformed (Batch, Shuffle, Repeat, Take, Skip, Shard, Map, Prefetch).
// An Iterator reads one pass over a Dataset. Readers load MNIST's IDX
// files, CSV and NumPy's NPY into tensors, and UTF-8 text (LoadText) for a
// character-level language model: a CharVocab numbers its characters,
// TrainValSplit keeps its end for validation, and TextWindows makes a
// seeded dataset of (input, next-character target) windows.
//
// # Conventions
//
// Datasets are immutable descriptions: every transformation returns a new
// Dataset and leaves its receiver usable, and a Dataset may be iterated any
// number of times, also concurrently. The one piece of state a Dataset keeps
// is Shuffle's count of how often it has been opened, which picks the seed
// for that pass (see Shuffle).
//
// Buffers: NewTensor takes ownership of its data slice; Row and Reshape
// return views that share their receiver's data. Datasets never write to
// the tensors they were built from, and the caller must not change them
// while an iterator reads them. The tensors that Iterator.Value returns
// belong to the iterator and stay valid only until the next call of Next or
// Close: batching reuses one buffer per component so that a training loop
// does not allocate per step. Copy a value (Tensor.Clone) to keep it longer.
//
// Panics and errors: misuse (a shape that does not match its data, a
// negative size, tensors whose first dimensions differ) panics with an error
// that wraps ErrShape or ErrArgument. Trouble that depends on the data read
// (a malformed file, elements of different shapes in one batch, a panic in a
// Prefetch producer) is returned as an error: readers return it directly,
// iterators through Err. Parse errors are *FormatError values that wrap
// ErrFormat and name the file, the offset and what was expected.
//
// Concurrency: a Tensor's methods only read it, so a tensor may be shared
// by goroutines that do not write its Data. Datasets are safe for
// concurrent use; an Iterator is not.
//
// Interrupts: Iterator.Next is a safe point (see internal/safepoint). When
// the kernel has raised an interrupt, Next closes the iterator, which stops
// and joins its prefetch goroutines, and panics with
// safepoint.ErrInterrupted so the notebook cell unwinds between steps.
package data

// BUG(data): ElementSpec is conservative: Take or Skip after a Batch whose
// last batch is partial keeps the batch dimension at -1 even when the
// partial batch is cut off.

// BUG(data): Shuffle counts passes over all iterators of one dataset, so
// when several iterate it concurrently, which seed a pass gets depends on
// the order in which they start.
