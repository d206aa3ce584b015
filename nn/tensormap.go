package nn

import (
	"fmt"
	"slices"
)

// TensorRule says where one variable's values are in a file written by
// another tool, and how to lay them out: the tensor Tensor, optionally cut
// along its first axis into Parts equal slices of which the variable takes
// slice Part (a fused projection), then its axes reordered by Permute.
//
// Common rules, from PyTorch:
//
//	Linear.weight [out, in] into a Dense kernel [in, out]: Permute {1, 0}
//	Conv2d.weight [out, in, kh, kw] into a Conv2D kernel [kh, kw, in, out]: Permute {2, 3, 1, 0}
//	nanoGPT's c_attn.weight [3·width, width] into attention's value kernel: Parts 3, Part 2, Permute {1, 0}
//	a tied output layer (lm_head.weight): a second rule onto the embedding
//
// A rule with an empty Variable names a tensor to skip on purpose (a
// BatchNorm's num_batches_tracked), so that it does not count as extra.
type TensorRule struct {
	Tensor   string // the tensor's name in the file: "transformer.h.0.attn.c_attn.weight"
	Variable string // the variable's name: "gpt/block_0/attn/query/kernel"; empty: skip the tensor
	Parts    int    // 0 or 1: the whole tensor; n: the first axis holds n equal slices
	Part     int    // the slice this variable is, 0 ≤ Part < Parts
	Permute  []int  // axis i of the variable is axis Permute[i] of the (sliced) tensor; nil: as is
}

// TensorMap maps a file's tensors onto variables, for LoadSafetensors and
// SaveSafetensors (WithTensorMap). A variable no rule names is matched by
// its own name. Several rules may name one variable (a tied weight): on
// load the tensors must agree, on save each is written. Several rules may
// take Parts of one tensor: on save they are joined back into it.
type TensorMap []TensorRule

// check returns an error naming the rule if it is malformed.
func (r TensorRule) check() error {
	if r.Tensor == "" {
		return fmt.Errorf("rule for variable %q has no tensor name", r.Variable)
	}
	if r.Parts < 0 || (r.Parts > 1 && (r.Part < 0 || r.Part >= r.Parts)) || (r.Parts <= 1 && r.Part != 0) {
		return fmt.Errorf("rule %q → %q: want 0 ≤ Part < Parts, got Part %d of %d", r.Tensor, r.Variable, r.Part, r.Parts)
	}
	if r.Permute != nil {
		seen := make([]bool, len(r.Permute))
		for _, a := range r.Permute {
			if a < 0 || a >= len(r.Permute) || seen[a] {
				return fmt.Errorf("rule %q → %q: Permute %v is not a permutation of 0..%d", r.Tensor, r.Variable, r.Permute, len(r.Permute)-1)
			}
			seen[a] = true
		}
	}
	return nil
}

// forward turns a tensor's values into the variable's layout: the slice,
// then the permutation. It returns an error (naming the shapes) if the
// tensor cannot be cut or permuted as the rule says.
func (r TensorRule) forward(shape []int, vals []float64) ([]int, []float64, error) {
	if r.Parts > 1 {
		if len(shape) == 0 || shape[0]%r.Parts != 0 {
			return nil, nil, fmt.Errorf("want a first axis divisible into %d parts, got shape %v", r.Parts, shape)
		}
		n := len(vals) / r.Parts
		shape = append([]int{shape[0] / r.Parts}, shape[1:]...)
		vals = vals[r.Part*n : (r.Part+1)*n]
	}
	if r.Permute != nil {
		if len(r.Permute) != len(shape) {
			return nil, nil, fmt.Errorf("Permute %v wants rank %d, got shape %v", r.Permute, len(r.Permute), shape)
		}
		shape, vals = permute(shape, vals, r.Permute)
	}
	return shape, vals, nil
}

// inverse turns a variable's values back into the tensor's layout: the
// inverse permutation; the caller places a Part into the whole tensor.
func (r TensorRule) inverse(shape []int, vals []float64) ([]int, []float64) {
	if r.Permute == nil {
		return shape, vals
	}
	inv := make([]int, len(r.Permute))
	for i, a := range r.Permute {
		inv[a] = i
	}
	return permute(shape, vals, inv)
}

// permute returns vals, of the given shape, with its axes reordered: axis
// i of the result is axis perm[i] of the input (numpy's transpose).
func permute(shape []int, vals []float64, perm []int) ([]int, []float64) {
	rank := len(shape)
	out := make([]float64, len(vals))
	outShape := make([]int, rank)
	inStride := make([]int, rank)
	s := 1
	for d := rank - 1; d >= 0; d-- {
		inStride[d] = s
		s *= shape[d]
	}
	stride := make([]int, rank) // the input stride of each output axis
	for i, a := range perm {
		outShape[i] = shape[a]
		stride[i] = inStride[a]
	}
	if len(vals) == 0 {
		return outShape, out
	}
	idx := make([]int, rank)
	src := 0
	for k := range out {
		out[k] = vals[src]
		// Advance the output index like an odometer, moving src with it.
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			src += stride[d]
			if idx[d] < outShape[d] {
				break
			}
			src -= stride[d] * outShape[d]
			idx[d] = 0
		}
	}
	return outShape, out
}

// rulesByVariable indexes the rules that name a variable, in map order,
// after checking each.
func (m TensorMap) rulesByVariable() (map[string][]TensorRule, error) {
	out := make(map[string][]TensorRule)
	type key struct {
		tensor string
		part   int
	}
	seen := make(map[key]string)
	for _, r := range m {
		if err := r.check(); err != nil {
			return nil, err
		}
		if r.Variable == "" {
			continue
		}
		k := key{r.Tensor, r.Part}
		if v, ok := seen[k]; ok && v != r.Variable {
			return nil, fmt.Errorf("tensor %q (part %d) is mapped to two variables, %q and %q", r.Tensor, r.Part, v, r.Variable)
		}
		seen[k] = r.Variable
		if !slices.ContainsFunc(out[r.Variable], func(o TensorRule) bool { return o.Tensor == r.Tensor && o.Part == r.Part }) {
			out[r.Variable] = append(out[r.Variable], r)
		}
	}
	return out, nil
}
