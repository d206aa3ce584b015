package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// InputPosition keeps where a training loop's input stands in a checkpoint,
// so that a run restored from it continues with exactly the batches the
// uninterrupted run would have seen: the epoch (the pass of the distributed
// dataset), the position in it, and the pass counters that decide each
// Shuffle's order (strategy.InputState). It is a VariableSource of one
// float64 variable, NAME, that Record fills and RestoreCheckpoint restores;
// give it to SaveCheckpoint and RestoreCheckpoint with the strategy through
// Join:
//
//	pos := nn.NewInputPosition("input")
//	pos.Record(it) // the iterator of the current epoch, after its last step
//	nn.SaveCheckpoint(path, nn.Join(s, pos))
//	...
//	nn.RestoreCheckpoint(path, nn.Join(s, pos))
//	it, err := pos.Resume(dist) // continues that epoch; pos.Epoch() is its number
type InputPosition struct {
	v *Variable // [pass, rows, position, shuffles, their pass counters...]
}

// maxShuffles is how many Shuffles an input pipeline kept by an
// InputPosition may have; the variable has a fixed shape so that any
// checkpoint restores into a new InputPosition.
const maxShuffles = 12

// NewInputPosition returns an InputPosition kept in checkpoints as the
// variable name. It panics with an error wrapping ErrUsage if name is empty.
func NewInputPosition(name string) *InputPosition {
	if name == "" {
		panic(usageError("NewInputPosition: want a variable name, got none"))
	}
	return &InputPosition{v: graph.NewVariable(name, []int{4 + maxShuffles}, graph.Float64, nil)}
}

// Variables returns the variable that holds the position.
func (p *InputPosition) Variables() []*Variable { return []*Variable{p.v} }

// Record stores where it stands. It panics with an error wrapping ErrUsage
// if the dataset's pipeline has more Shuffles than an InputPosition keeps.
func (p *InputPosition) Record(it *strategy.DistributedIterator) {
	st := it.State()
	if len(st.Input.Passes) > maxShuffles {
		panic(usageError("InputPosition.Record: the input pipeline has %d Shuffles; at most %d are kept", len(st.Input.Passes), maxShuffles))
	}
	vals := make([]float64, 4+maxShuffles)
	vals[0], vals[1], vals[2], vals[3] = float64(st.Pass), float64(st.Rows), float64(st.Input.Position), float64(len(st.Input.Passes))
	for i, k := range st.Input.Passes {
		vals[4+i] = float64(k)
	}
	p.v.Assign(vals)
}

// State returns the recorded (or restored) position.
func (p *InputPosition) State() strategy.InputState {
	v := p.v.F64()
	return strategy.InputState{Pass: int(v[0]), Rows: int(v[1]), Input: dataState(int(v[2]), v[4:4+min(int(v[3]), maxShuffles)])}
}

// Epoch returns the recorded pass of the distributed dataset, counting from
// 0: the epoch Resume continues.
func (p *InputPosition) Epoch() int { return int(p.v.F64()[0]) }

// Resume returns an iterator of d that continues at the recorded position
// (strategy.DistributedDataset.IterAt); d must be built as the recorded
// iterator's dataset was. It returns that method's error, naming the
// variable.
func (p *InputPosition) Resume(d *strategy.DistributedDataset) (*strategy.DistributedIterator, error) {
	it, err := d.IterAt(p.State())
	if err != nil {
		return nil, fmt.Errorf("nn: input position %q: %w", p.v.Name(), err)
	}
	return it, nil
}

// String describes the position, e.g. "input: epoch 2, element 10".
func (p *InputPosition) String() string {
	st := p.State()
	return fmt.Sprintf("%s: epoch %d, element %d", p.v.Name(), st.Pass, st.Input.Position)
}

// Join lists the variables of every source, in order, as one
// VariableSource: a strategy and an InputPosition, say.
func Join(sources ...VariableSource) VariableSource {
	var vs VariableList
	for _, s := range sources {
		vs = append(vs, s.Variables()...)
	}
	return vs
}

func dataState(position int, passes []float64) data.IteratorState {
	st := data.IteratorState{Position: position, Passes: make([]uint64, len(passes))}
	for i, k := range passes {
		st.Passes[i] = uint64(k)
	}
	return st
}
