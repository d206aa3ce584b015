package nn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/errkind"
	"github.com/gotrain/gotrain/strategy"
)

// ErrCheckpoint is wrapped by every error of SaveCheckpoint,
// RestoreCheckpoint and ReadCheckpointIndex about the file or its contents:
// errors.Is(err, nn.ErrCheckpoint).
var ErrCheckpoint = errors.New("nn: checkpoint")

// VariableSource is anything that lists variables to checkpoint: a
// *strategy.Mirrored (every variable created under it: model weights,
// optimizer slots, step counters, random-state variables), a model (a
// Sequential, a layer, any Model: its Variables lists a shared weight once,
// see VariablesOf), or a VariableList.
type VariableSource interface {
	Variables() []*Variable
}

// VariableList is a VariableSource of the listed variables.
type VariableList []*Variable

// Variables returns the list itself.
func (l VariableList) Variables() []*Variable { return l }

// Checkpoint file format, version 1 (CHECKPOINT.md next to this file has
// the same table). All integers are little-endian.
//
//	magic    8 bytes  "GOTRCKPT"
//	version  uint32   1
//	count    uint32   number of variables
//	count times:
//	  nameLen uint32, name (UTF-8, unique in the file)
//	  dtype   uint8    0 float32, 1 float64
//	  rank    uint32, then rank × uint64 dimensions
//	  data    product(dims) values, IEEE 754, 4 or 8 bytes each
//	crc      uint32   CRC-32C (Castagnoli) of every byte before it
const (
	checkpointMagic   = "GOTRCKPT"
	checkpointVersion = 1
	checkpointHeader  = len(checkpointMagic) + 4 + 4
	maxCheckpointRank = 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checkpointError(path, format string, args ...any) error {
	return errkind.New(ErrCheckpoint, fmt.Sprintf("nn: checkpoint %s: ", path), format, args...)
}

func checkpointIOError(path, doing string, err error) error {
	return &wrapError{msg: fmt.Sprintf("nn: checkpoint %s: %s: %v", path, doing, err), errs: []error{ErrCheckpoint, err}}
}

// SaveCheckpoint writes the values of src's variables, by name, to path, in
// the versioned format documented above and in CHECKPOINT.md. The save is
// atomic: it writes a temporary file in path's folder, syncs it, renames it
// over path and syncs the folder, so a failed or interrupted save leaves any
// previous file at path intact. Variables belong to a strategy, not to a
// replica, so the file can be restored under another replica count.
//
// It must not run concurrently with strategy.Run on the same variables (call
// it between steps). It returns an error wrapping ErrCheckpoint for
// duplicate or empty variable names and for any I/O failure.
//
// On a multi-worker strategy (the variables' owner has several workers)
// worker 0 writes the file and every worker returns its outcome.
func SaveCheckpoint(path string, src VariableSource) (err error) {
	if src == nil {
		return checkpointError(path, "want a strategy, model or VariableList to save, got nil")
	}
	if s := workersOf(src.Variables()); s != nil {
		return onChief(s, func() error { return saveCheckpoint(path, src.Variables()) },
			func(doing string, err error) error { return checkpointIOError(path, doing, err) },
			func(msg string) error { return checkpointError(path, "worker 0 could not save it: %s", msg) })
	}
	return saveCheckpoint(path, src.Variables())
}

// workersOf returns the strategy of vars when it has several workers, else
// nil.
func workersOf(vars []*Variable) *strategy.Mirrored {
	if len(vars) == 0 || vars[0] == nil {
		return nil
	}
	if s := strategy.OwnerOf(vars[0]); s != nil && s.NumWorkers() > 1 {
		return s
	}
	return nil
}

func saveCheckpoint(path string, vars []*Variable) error {
	seen := make(map[string]bool, len(vars))
	for i, v := range vars {
		if v == nil {
			return checkpointError(path, "variable %d is nil", i)
		}
		if v.Name() == "" {
			return checkpointError(path, "variable %d (%v) has an empty name", i, v)
		}
		if seen[v.Name()] {
			return checkpointError(path, "two variables are named %q; names must be unique to be restored", v.Name())
		}
		seen[v.Name()] = true
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		crc := crc32.New(castagnoli)
		bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
		if err := writeCheckpoint(bw, vars); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
		return err
	}, checkpointIOError)
}

func writeCheckpoint(w *bufio.Writer, vars []*Variable) error {
	le := binary.LittleEndian
	buf := make([]byte, 0, 1<<12)
	buf = append(buf, checkpointMagic...)
	buf = le.AppendUint32(buf, checkpointVersion)
	buf = le.AppendUint32(buf, uint32(len(vars)))
	for _, v := range vars {
		buf = le.AppendUint32(buf, uint32(len(v.Name())))
		buf = append(buf, v.Name()...)
		if v.DType() == graph.Float32 {
			buf = append(buf, 0)
		} else {
			buf = append(buf, 1)
		}
		shape := v.Shape()
		buf = le.AppendUint32(buf, uint32(len(shape)))
		for _, d := range shape {
			buf = le.AppendUint64(buf, uint64(d))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		// Values in chunks, so a large variable needs no second copy.
		const chunk = 1 << 12
		if f := v.F32(); f != nil {
			for len(f) > 0 {
				n := min(len(f), chunk)
				for _, x := range f[:n] {
					buf = le.AppendUint32(buf, math.Float32bits(x))
				}
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf, f = buf[:0], f[n:]
			}
		} else {
			f := v.F64()
			for len(f) > 0 {
				n := min(len(f), chunk)
				for _, x := range f[:n] {
					buf = le.AppendUint64(buf, math.Float64bits(x))
				}
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf, f = buf[:0], f[n:]
			}
		}
	}
	return nil
}

// CheckpointEntry describes one variable stored in a checkpoint file.
type CheckpointEntry struct {
	Name  string
	DType graph.DType
	Shape []int
	data  []byte // raw little-endian values
}

// Values returns the entry's values as float64.
func (e CheckpointEntry) Values() []float64 {
	le := binary.LittleEndian
	if e.DType == graph.Float32 {
		out := make([]float64, len(e.data)/4)
		for i := range out {
			out[i] = float64(math.Float32frombits(le.Uint32(e.data[4*i:])))
		}
		return out
	}
	out := make([]float64, len(e.data)/8)
	for i := range out {
		out[i] = math.Float64frombits(le.Uint64(e.data[8*i:]))
	}
	return out
}

// ReadCheckpointIndex reads and verifies the checkpoint at path (magic,
// version, structure, checksum) and returns its entries in file order. Its
// errors wrap ErrCheckpoint and say what is wrong.
func ReadCheckpointIndex(path string) ([]CheckpointEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, checkpointIOError(path, "read", err)
	}
	return parseCheckpoint(path, b)
}

// readCheckpointFor is ReadCheckpointIndex where worker 0 of a multi-worker
// strategy owning vars reads the file and sends its bytes to the others,
// so only worker 0 needs it (no shared file system).
func readCheckpointFor(path string, vars []*Variable) ([]CheckpointEntry, error) {
	s := workersOf(vars)
	if s == nil {
		return ReadCheckpointIndex(path)
	}
	b, err := fromChief(s, path, func(doing string, err error) error { return checkpointIOError(path, doing, err) },
		func(msg string) error { return &wrapError{msg: msg, errs: []error{ErrCheckpoint, errors.New(msg)}} })
	if err != nil {
		return nil, err
	}
	return parseCheckpoint(path, b)
}

// onChief runs save on worker 0 of s and returns its outcome on every
// worker: worker 0's own error, and on the others failed's when worker 0
// failed. ioErr makes the error of a failed agreement.
func onChief(s *strategy.Mirrored, save func() error, ioErr func(doing string, err error) error, failed func(msg string) error) error {
	var err error
	if s.WorkerID() == 0 {
		err = save()
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	shared, berr := s.BroadcastFromChief([]byte(msg))
	switch {
	case berr != nil:
		return ioErr("agree on the save", berr)
	case s.WorkerID() != 0 && len(shared) > 0:
		return failed(string(shared))
	}
	return err
}

// fromChief returns the bytes of the file at path as worker 0 of s read
// them, sent to every worker. ioErr makes the error of a failed read or
// receive; the error worker 0 met reading comes back to the others through
// remote.
func fromChief(s *strategy.Mirrored, path string, ioErr func(doing string, err error) error, remote func(msg string) error) ([]byte, error) {
	// One status byte (0: the file follows; 1: worker 0's error follows).
	var msg []byte
	if s.WorkerID() == 0 {
		b, err := os.ReadFile(path)
		if err != nil {
			msg = append([]byte{1}, ioErr("read", err).Error()...)
		} else {
			msg = append([]byte{0}, b...)
		}
	}
	shared, err := s.BroadcastFromChief(msg)
	switch {
	case err != nil:
		return nil, ioErr("receive from worker 0", err)
	case len(shared) == 0:
		return nil, ioErr("receive from worker 0", errors.New("worker 0 sent nothing"))
	case shared[0] == 1:
		return nil, remote(string(shared[1:]))
	}
	return shared[1:], nil
}

// parseCheckpoint checks the structure before the checksum, so a truncated
// file is reported as truncated, at the byte where it ends.
func parseCheckpoint(path string, b []byte) ([]CheckpointEntry, error) {
	le := binary.LittleEndian
	size := len(b)
	truncated := func(what string) error {
		return checkpointError(path, "truncated: file ends at byte %d, inside %s", size, what)
	}
	if size < len(checkpointMagic) {
		if strings.HasPrefix(checkpointMagic, string(b)) {
			return nil, truncated("the magic number")
		}
		return nil, checkpointError(path, "not a gotrain checkpoint: want magic %q, got %q", checkpointMagic, b)
	}
	if string(b[:len(checkpointMagic)]) != checkpointMagic {
		return nil, checkpointError(path, "not a gotrain checkpoint: want magic %q, got %q", checkpointMagic, b[:len(checkpointMagic)])
	}
	if size < checkpointHeader {
		return nil, truncated("the header")
	}
	if v := le.Uint32(b[8:]); v != checkpointVersion {
		return nil, checkpointError(path, "format version %d, want %d (written by another gotrain?)", v, checkpointVersion)
	}
	count := int(le.Uint32(b[12:]))
	off := checkpointHeader
	need := func(n int) bool { return n >= 0 && off+n <= size }
	// Each entry takes at least 9 bytes: a bound on count before allocating.
	if count > (size-off)/9 {
		return nil, truncated(fmt.Sprintf("the variables (header says %d)", count))
	}
	entries := make([]CheckpointEntry, 0, count)
	names := make(map[string]bool, count)
	for i := range count {
		where := fmt.Sprintf("variable %d", i)
		if !need(4) {
			return nil, truncated(where + "'s name length")
		}
		nl := int(le.Uint32(b[off:]))
		off += 4
		if !need(nl) {
			return nil, truncated(where + "'s name")
		}
		e := CheckpointEntry{Name: string(b[off : off+nl])}
		off += nl
		where = fmt.Sprintf("variable %d (%q)", i, e.Name)
		if names[e.Name] {
			return nil, checkpointError(path, "corrupt: %s appears twice", where)
		}
		names[e.Name] = true
		if !need(5) {
			return nil, truncated(where + "'s dtype and rank")
		}
		elem := 0
		switch b[off] {
		case 0:
			e.DType, elem = graph.Float32, 4
		case 1:
			e.DType, elem = graph.Float64, 8
		default:
			return nil, checkpointError(path, "corrupt: %s has dtype code %d, want 0 (float32) or 1 (float64)", where, b[off])
		}
		rank := int(le.Uint32(b[off+1:]))
		off += 5
		if rank > maxCheckpointRank {
			return nil, checkpointError(path, "corrupt: %s has rank %d, want at most %d", where, rank, maxCheckpointRank)
		}
		if !need(8 * rank) {
			return nil, truncated(where + "'s shape")
		}
		n := 1
		e.Shape = make([]int, rank)
		for d := range rank {
			dim := le.Uint64(b[off:])
			off += 8
			e.Shape[d] = int(min(dim, uint64(size)+1))
			n *= e.Shape[d]
			if n > size {
				// More values than the file has bytes: cut short, or a
				// corrupt dimension; either way the data cannot be there.
				return nil, truncated(fmt.Sprintf("%s's data (shape dimension %d is %d)", where, d, dim))
			}
		}
		if !need(n * elem) {
			return nil, truncated(fmt.Sprintf("%s's data (%d bytes from byte %d)", where, n*elem, off))
		}
		e.data = b[off : off+n*elem]
		off += n * elem
		entries = append(entries, e)
	}
	switch rest := size - off; {
	case rest < 4:
		return nil, truncated("the checksum")
	case rest > 4:
		return nil, checkpointError(path, "corrupt: %d unexpected bytes after the last variable", rest-4)
	}
	stored, computed := le.Uint32(b[off:]), crc32.Checksum(b[:off], castagnoli)
	if stored != computed {
		return nil, checkpointError(path, "corrupt: checksum mismatch (stored %08x, computed %08x)", stored, computed)
	}
	return entries, nil
}

// RestoreOption configures RestoreCheckpoint.
type RestoreOption func(*restoreConfig)

type restoreConfig struct{ partial bool }

// PartialRestore lets RestoreCheckpoint skip variables the file does not
// have (they keep their values) and file entries that match no variable.
// Entries that do match must still agree in shape.
func PartialRestore() RestoreOption { return func(c *restoreConfig) { c.partial = true } }

// RestoreCheckpoint sets dst's variables from the checkpoint at path, by
// name. The file is verified first (magic, version, structure, CRC-32C), then
// every variable is matched to an entry of the same name and shape, and only
// then is anything assigned: on error no variable has changed. A float32
// entry restores into a float64 variable and the other way round, converted.
//
// Every variable of dst must have an entry and every entry a variable,
// unless PartialRestore is given. Model weights and optimizer slots are made
// lazily, so before restoring into a fresh strategy build them under its
// Scope: model.Build(inputShape) and BuildOptimizer(opt,
// model.TrainableVariables()). The replica count does not matter.
//
// It must not run concurrently with strategy.Run on the same variables.
// Errors wrap ErrCheckpoint and name the file and the variable at fault.
func RestoreCheckpoint(path string, dst VariableSource, opts ...RestoreOption) error {
	var c restoreConfig
	for _, o := range opts {
		o(&c)
	}
	if dst == nil {
		return checkpointError(path, "want a strategy, model or VariableList to restore into, got nil")
	}
	entries, err := readCheckpointFor(path, dst.Variables())
	if err != nil {
		return err
	}
	byName := make(map[string]int, len(entries))
	for i, e := range entries {
		byName[e.Name] = i
	}
	vars := dst.Variables()
	type match struct {
		v *Variable
		e int
	}
	var plan []match
	used := make([]bool, len(entries))
	for i, v := range vars {
		if v == nil {
			return checkpointError(path, "variable %d to restore is nil", i)
		}
		k, ok := byName[v.Name()]
		if !ok {
			if c.partial {
				continue
			}
			return checkpointError(path, "variable %q %v is not in the file (it holds %d variables: %s); pass nn.PartialRestore() to keep its value",
				v.Name(), v.Shape(), len(entries), entryNames(entries))
		}
		if used[k] {
			return checkpointError(path, "two variables to restore are named %q", v.Name())
		}
		if !slices.Equal(entries[k].Shape, v.Shape()) {
			return checkpointError(path, "variable %q: want shape %v, file has %v", v.Name(), v.Shape(), entries[k].Shape)
		}
		used[k] = true
		plan = append(plan, match{v, k})
	}
	if !c.partial {
		for k, u := range used {
			if !u {
				return checkpointError(path, "the file's variable %q %v matches no variable being restored; build the model and the optimizer (BuildOptimizer) under the strategy first, or pass nn.PartialRestore()",
					entries[k].Name, entries[k].Shape)
			}
		}
	}
	for _, m := range plan {
		m.v.Assign(entries[m.e].Values())
	}
	return nil
}

// entryNames lists up to 8 names, for error messages.
func entryNames(entries []CheckpointEntry) string {
	var names []string
	for i, e := range entries {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(entries)-8))
			break
		}
		names = append(names, fmt.Sprintf("%q", e.Name))
	}
	return strings.Join(names, ", ")
}

// BUG(nn): RestoreCheckpoint needs lazily made variables (layer weights,
// optimizer slots) to exist already; TensorFlow defers the restoration of
// missing ones until they are created.
