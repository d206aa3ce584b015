package nn

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/gotrain/gotrain/graph"
)

// SafetensorsOption configures SaveSafetensors and LoadSafetensors.
type SafetensorsOption func(*safetensorsConfig)

type safetensorsConfig struct {
	names       TensorMap
	ignoreExtra bool
	keepMissing bool
}

// WithTensorMap names the file's tensors and their layouts (see TensorMap):
// LoadSafetensors reads each variable from the tensor its rules name, and
// SaveSafetensors writes it there, so one map both reads a PyTorch
// state_dict and writes one.
func WithTensorMap(m TensorMap) SafetensorsOption {
	return func(c *safetensorsConfig) { c.names = append(c.names, m...) }
}

// IgnoreExtraTensors lets LoadSafetensors leave tensors of the file that
// match no variable (an optimizer's state, a head you replace) unread.
func IgnoreExtraTensors() SafetensorsOption {
	return func(c *safetensorsConfig) { c.ignoreExtra = true }
}

// KeepMissingVariables lets LoadSafetensors leave variables the file has
// no tensor for at their values (a new head to fine-tune).
func KeepMissingVariables() SafetensorsOption {
	return func(c *safetensorsConfig) { c.keepMissing = true }
}

func newSafetensorsConfig(opts []SafetensorsOption) safetensorsConfig {
	var c safetensorsConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// checkVariables refuses nil variables and names that are empty or
// repeated: a file is read and written by name.
func checkVariables(path string, vars []*Variable) error {
	seen := make(map[string]bool, len(vars))
	for i, v := range vars {
		switch {
		case v == nil:
			return safetensorsError(path, "variable %d is nil", i)
		case v.Name() == "":
			return safetensorsError(path, "variable %d (%v) has an empty name", i, v)
		case seen[v.Name()]:
			return safetensorsError(path, "two variables are named %q; names must be unique in a file", v.Name())
		}
		seen[v.Name()] = true
	}
	return nil
}

// SaveSafetensors writes src's variables to path as a safetensors file,
// each by its name (gpt/block_0/attn/query/kernel) in its own dtype (F32 or
// F64), with __metadata__ holding gotrain's format version and the
// variables' dtype. WithTensorMap writes them under another tool's names
// and layouts instead: the map that loads a PyTorch state_dict writes one
// PyTorch loads (tied tensors are written once per name; a map's skipped
// tensors are not written).
//
// The save is atomic, as SaveCheckpoint's. It must not run concurrently
// with strategy.Run on the same variables. On a multi-worker strategy
// worker 0 writes the file and every worker returns its outcome. Errors
// wrap ErrSafetensors.
func SaveSafetensors(path string, src VariableSource, opts ...SafetensorsOption) (err error) {
	if src == nil {
		return safetensorsError(path, "want a strategy, model or VariableList to save, got nil")
	}
	vars := src.Variables()
	c := newSafetensorsConfig(opts)
	s := workersOf(vars)
	if s == nil {
		return saveSafetensors(path, vars, c)
	}
	return onChief(s, func() error { return saveSafetensors(path, vars, c) },
		func(doing string, err error) error { return safetensorsIOError(path, doing, err) },
		func(msg string) error { return safetensorsError(path, "worker 0 could not save it: %s", msg) })
}

func saveSafetensors(path string, vars []*Variable, c safetensorsConfig) error {
	if err := checkVariables(path, vars); err != nil {
		return err
	}
	tensors, err := tensorsToSave(vars, c.names)
	if err != nil {
		return safetensorsError(path, "%v", err)
	}
	dtype := ""
	for _, v := range vars {
		switch {
		case dtype == "":
			dtype = v.DType().String()
		case dtype != v.DType().String():
			dtype = "mixed"
		}
	}
	meta := map[string]string{safetensorsVersionKey: safetensorsVersion}
	if dtype != "" {
		meta[safetensorsDTypeKey] = dtype
	}
	return writeFileAtomic(path, func(w io.Writer) error { return writeSafetensors(w, tensors, meta) }, safetensorsIOError)
}

// tensorsToSave lays vars out as the file's tensors: by their names, or as
// names says, joining the parts of fused tensors.
func tensorsToSave(vars []*Variable, names TensorMap) ([]safetensorsTensor, error) {
	rules, err := names.rulesByVariable()
	if err != nil {
		return nil, err
	}
	var tensors []safetensorsTensor
	at := make(map[string]int)        // tensor name → index in tensors
	filled := make(map[string][]bool) // the parts of a fused tensor written so far
	for _, v := range vars {
		rs := rules[v.Name()]
		if rs == nil {
			rs = []TensorRule{{Tensor: v.Name(), Variable: v.Name()}}
		}
		vals := v.Value()
		for _, r := range rs {
			shape, part := r.inverse(v.Shape(), vals)
			k, ok := at[r.Tensor]
			if r.Parts <= 1 {
				if ok {
					return nil, fmt.Errorf("two variables would be written as tensor %q (%q and another)", r.Tensor, v.Name())
				}
				at[r.Tensor] = len(tensors)
				tensors = append(tensors, safetensorsTensor{name: r.Tensor, dt: v.DType(), shape: shape, vals: part})
				continue
			}
			if len(shape) == 0 {
				return nil, fmt.Errorf("variable %q is a scalar, so it cannot be part %d of %d of tensor %q", v.Name(), r.Part, r.Parts, r.Tensor)
			}
			whole := append([]int{shape[0] * r.Parts}, shape[1:]...)
			if !ok {
				k = len(tensors)
				at[r.Tensor] = k
				filled[r.Tensor] = make([]bool, r.Parts)
				tensors = append(tensors, safetensorsTensor{name: r.Tensor, dt: v.DType(), shape: whole, vals: make([]float64, len(part)*r.Parts)})
			}
			t := &tensors[k]
			f := filled[r.Tensor]
			if f == nil || len(f) != r.Parts || !slices.Equal(t.shape, whole) {
				return nil, fmt.Errorf("variable %q: part %d of %d of tensor %q has shape %v, which does not fit the tensor's %v from its other parts", v.Name(), r.Part, r.Parts, r.Tensor, shape, t.shape)
			}
			if v.DType() == graph.Float64 {
				t.dt = graph.Float64 // a part in float64 keeps the whole tensor exact
			}
			copy(t.vals[r.Part*len(part):], part)
			f[r.Part] = true
		}
	}
	for name, f := range filled {
		if i := slices.Index(f, false); i >= 0 {
			return nil, fmt.Errorf("tensor %q: part %d of %d comes from no variable being saved", name, i, len(f))
		}
	}
	return tensors, nil
}

// readSafetensorsFor is ReadSafetensors where worker 0 of a multi-worker
// strategy owning vars reads the file and sends its bytes to the others,
// so only worker 0 needs it.
func readSafetensorsFor(path string, vars []*Variable) ([]SafetensorsEntry, error) {
	s := workersOf(vars)
	if s == nil {
		entries, _, err := ReadSafetensors(path)
		return entries, err
	}
	b, err := fromChief(s, path, func(doing string, err error) error { return safetensorsIOError(path, doing, err) },
		func(msg string) error { return &wrapError{msg: msg, errs: []error{ErrSafetensors, errors.New(msg)}} })
	if err != nil {
		return nil, err
	}
	entries, _, err := parseSafetensors(path, b)
	return entries, err
}

// LoadSafetensors sets dst's variables from the safetensors file at path.
// Each variable reads the tensor of its own name, or those WithTensorMap's
// rules name, converted to its layout and its dtype (F64, F32, F16 and BF16
// tensors, and integer ones, load into float32 and float64 variables).
//
// Everything is checked before any variable changes, so that on error none
// has: the file's structure; each tensor's shape against its variable's; a
// variable with no tensor (unless KeepMissingVariables); tensors that no
// variable reads, all listed (unless IgnoreExtraTensors); two tensors
// mapped to one variable (a tied weight) that differ. Layers make their
// variables at their first Call, so build the model first (Predict on a
// batch, or Build with the input shape) inside its strategy's Scope. The
// replica count does not matter: a variable belongs to the strategy, and
// its device copies are refreshed from it.
//
// It must not run concurrently with strategy.Run on the same variables. On
// a multi-worker strategy only worker 0 needs the file; it sends it to the
// others. Errors wrap ErrSafetensors and name the file and the tensor or
// variable at fault.
func LoadSafetensors(path string, dst VariableSource, opts ...SafetensorsOption) error {
	c := newSafetensorsConfig(opts)
	if dst == nil {
		return safetensorsError(path, "want a strategy, model or VariableList to load into, got nil")
	}
	vars := dst.Variables()
	if err := checkVariables(path, vars); err != nil {
		return err
	}
	rules, err := c.names.rulesByVariable()
	if err != nil {
		return safetensorsError(path, "%v", err)
	}
	entries, err := readSafetensorsFor(path, vars)
	if err != nil {
		return err
	}
	byName := make(map[string]int, len(entries))
	for i, e := range entries {
		byName[e.Name] = i
	}
	used := make([]bool, len(entries))
	values := make([][]float64, len(vars))
	var missing []string
	for i, v := range vars {
		rs := rules[v.Name()]
		if rs == nil {
			rs = []TensorRule{{Tensor: v.Name(), Variable: v.Name()}}
		}
		from := ""
		for _, r := range rs {
			k, ok := byName[r.Tensor]
			if !ok {
				continue
			}
			e := entries[k]
			used[k] = true
			shape, vals, err := r.forward(e.Shape, e.Values())
			if err != nil {
				return safetensorsError(path, "tensor %q %s%v for variable %q: %v", e.Name, e.DType, e.Shape, v.Name(), err)
			}
			if !slices.Equal(shape, v.Shape()) {
				return safetensorsError(path, "tensor %q %s%v%s: want shape %v for variable %q, got %v", e.Name, e.DType, e.Shape, r.describe(), v.Shape(), v.Name(), shape)
			}
			if values[i] == nil {
				values[i], from = vals, e.Name
				continue
			}
			if j := firstDifference(values[i], vals); j >= 0 {
				return safetensorsError(path, "tensors %q and %q both map to variable %q (a tied weight) but differ at value %d: %v and %v",
					from, e.Name, v.Name(), j, values[i][j], vals[j])
			}
		}
		if values[i] == nil {
			missing = append(missing, fmt.Sprintf("%q (from %s)", v.Name(), tensorNames(rs)))
		}
	}
	skip := make(map[string]bool)
	for _, r := range c.names {
		if r.Variable == "" {
			skip[r.Tensor] = true
		}
	}
	names := make(map[string]bool, len(vars))
	for _, v := range vars {
		names[v.Name()] = true
	}
	var extra []string
	for k, e := range entries {
		if used[k] || skip[e.Name] {
			continue
		}
		s := fmt.Sprintf("%q %s%v", e.Name, e.DType, e.Shape)
		for _, r := range c.names {
			if r.Tensor == e.Name && r.Variable != "" && !names[r.Variable] {
				s += fmt.Sprintf(" (mapped to %q, which is not among the variables)", r.Variable)
				break
			}
		}
		extra = append(extra, s)
	}
	var problems []string
	if len(missing) > 0 && !c.keepMissing {
		problems = append(problems, fmt.Sprintf("%d variables have no tensor in the file: %s (pass nn.KeepMissingVariables() to keep their values)",
			len(missing), strings.Join(missing, ", ")))
	}
	if len(extra) > 0 && !c.ignoreExtra {
		problems = append(problems, fmt.Sprintf("%d tensors of the file match no variable: %s (pass nn.IgnoreExtraTensors() to leave them)",
			len(extra), strings.Join(extra, ", ")))
	}
	if len(problems) > 0 {
		return safetensorsError(path, "%s", strings.Join(problems, "; "))
	}
	for i, v := range vars {
		if values[i] != nil {
			v.Assign(values[i])
		}
	}
	return nil
}

// describe says what a rule did to a tensor, for shape errors.
func (r TensorRule) describe() string {
	var s string
	if r.Parts > 1 {
		s += fmt.Sprintf(", part %d of %d", r.Part, r.Parts)
	}
	if r.Permute != nil {
		s += fmt.Sprintf(", permuted %v", r.Permute)
	}
	if s != "" {
		s = " (" + s[2:] + ")"
	}
	return s
}

func tensorNames(rs []TensorRule) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%q", r.Tensor))
	}
	return strings.Join(out, " or ")
}

// firstDifference returns the first index where a and b differ (NaN equal
// to NaN), or -1.
func firstDifference(a, b []float64) int {
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return i
		}
	}
	return -1
}
