package nn_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// stModel is a model built under a strategy of the given dtype, replica
// count and seed, with its outputs on fixed inputs.
type stModel struct {
	s     *strategy.Mirrored
	model *nn.Sequential
}

func newSTModel(t *testing.T, dt graph.DType, replicas int, seed uint64) *stModel {
	t.Helper()
	m := &stModel{s: newStrategy(t, strategy.WithDType(dt), strategy.WithReplicas(replicas), strategy.WithSeed(seed))}
	m.s.Scope(func() {
		m.model = nn.NewSequential(nn.Dense(8, nn.GELU, nn.Named("up")), nn.LayerNormalization(nn.Named("norm")), nn.Dense(3, nn.Named("out")))
		m.model.Build([]int{1, 5})
	})
	return m
}

func (m *stModel) predict() []float64 {
	var out data.Tensor
	m.s.Scope(func() { out = m.model.Predict(data.RandomNormal(3, 7, 5)) })
	return out.Data
}

func sameBits(a, b []float64) bool {
	return len(a) == len(b) && firstBitDifference(a, b) < 0
}

func firstBitDifference(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestSafetensorsRoundTrip saves a model, loads it into a fresh one made
// with another seed, and wants the same outputs bit for bit, for float32
// and float64 models on 1 and 2 replicas (loaded under the other count).
func TestSafetensorsRoundTrip(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		for _, replicas := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/%d_replicas", dt, replicas), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "model.safetensors")
				src := newSTModel(t, dt, replicas, 1)
				want := src.predict()
				if err := nn.SaveSafetensors(path, src.model); err != nil {
					t.Fatal(err)
				}
				dst := newSTModel(t, dt, 3-replicas, 2)
				if before := dst.predict(); sameBits(before, want) {
					t.Fatal("the fresh model already predicts as the saved one: the test cannot fail")
				}
				if err := nn.LoadSafetensors(path, dst.model); err != nil {
					t.Fatal(err)
				}
				if got := dst.predict(); !sameBits(got, want) {
					i := firstBitDifference(got, want)
					t.Fatalf("after the round trip output %d is %v, want %v", i, got[i], want[i])
				}
				entries, meta, err := nn.ReadSafetensors(path)
				if err != nil {
					t.Fatal(err)
				}
				wantDType := map[graph.DType]string{graph.Float32: "F32", graph.Float64: "F64"}[dt]
				for _, e := range entries {
					if e.DType != wantDType {
						t.Errorf("tensor %q is %s, want %s", e.Name, e.DType, wantDType)
					}
				}
				if meta["gotrain.format_version"] != "1" || meta["gotrain.dtype"] != dt.String() {
					t.Errorf("__metadata__ = %v, want gotrain.format_version 1 and gotrain.dtype %v", meta, dt)
				}
			})
		}
	}
}

// TestSafetensorsStrategy saves and loads every variable of a strategy
// after a training step: weights, Adam's slots and its step counter.
func TestSafetensorsStrategy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "all.safetensors")
	first := newCkptRun(t, 2, false)
	first.train(t, 0, 3)
	if err := nn.SaveSafetensors(path, first.s); err != nil {
		t.Fatal(err)
	}
	second := newCkptRun(t, 1, false)
	second.build()
	if err := nn.LoadSafetensors(path, second.s); err != nil {
		t.Fatal(err)
	}
	want, got := values(first.s.Variables()), values(second.s.Variables())
	for name, w := range want {
		if !sameBits(got[name], w) {
			t.Errorf("variable %q after loading = %v, want %v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d variables after loading, want %d", len(got), len(want))
	}
}

// readSafetensorsByHand reads a safetensors file as the format's
// description says, without gotrain's reader: an 8-byte little-endian
// header length, a JSON header of dtype, shape and data_offsets per name,
// then the data.
func readSafetensorsByHand(t *testing.T, path string) map[string][]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	buf := b[8+n:]
	out := make(map[string][]float64)
	var ends []int
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			DType   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		count := 1
		for _, d := range e.Shape {
			count *= d
		}
		chunk := buf[e.Offsets[0]:e.Offsets[1]]
		vals := make([]float64, count)
		switch e.DType {
		case "F32":
			for i := range vals {
				vals[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(chunk[4*i:])))
			}
		case "F64":
			for i := range vals {
				vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(chunk[8*i:]))
			}
		default:
			t.Fatalf("tensor %q has dtype %s", name, e.DType)
		}
		if len(chunk) != count*map[string]int{"F32": 4, "F64": 8}[e.DType] {
			t.Fatalf("tensor %q: %d bytes for shape %v", name, len(chunk), e.Shape)
		}
		out[name] = vals
		ends = append(ends, e.Offsets[1])
	}
	sort.Ints(ends)
	if len(ends) > 0 && ends[len(ends)-1] != len(buf) {
		t.Fatalf("the data is %d bytes, the last tensor ends at %d", len(buf), ends[len(ends)-1])
	}
	return out
}

// TestSafetensorsIndependentReader reads what SaveSafetensors wrote with a
// reader written from the format's description, for both dtypes.
func TestSafetensorsIndependentReader(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.safetensors")
			m := newSTModel(t, dt, 1, 5)
			if err := nn.SaveSafetensors(path, m.model); err != nil {
				t.Fatal(err)
			}
			got := readSafetensorsByHand(t, path)
			want := values(m.model.Variables())
			if len(got) != len(want) {
				t.Errorf("the file holds %d tensors, want %d", len(got), len(want))
			}
			for name, w := range want {
				if !sameBits(got[name], w) {
					t.Errorf("tensor %q = %v, want %v", name, got[name], w)
				}
			}
		})
	}
}

// stFile assembles a safetensors file from a header and data.
func stFile(header string, data []byte) []byte {
	return append(append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...), data...)
}

func f32Bytes(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestSafetensorsBadFiles loads broken files into [2]-shaped variables "a"
// and "b" and wants an error naming the file and what is wrong, and both
// variables unchanged.
func TestSafetensorsBadFiles(t *testing.T) {
	good := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`
	data := f32Bytes(1, 2, 3, 4)
	cases := []struct {
		name string
		file []byte
		opts []nn.SafetensorsOption
		want []string // in the error, beside the file's name
	}{
		{"empty", nil, nil, []string{"truncated", "header length"}},
		{"truncated header", stFile(good, data)[:20], nil, []string{"truncated", "the header is"}},
		{"truncated data", stFile(good, data)[:len(stFile(good, data))-3], nil, []string{`tensor "b"`, "reach past the data"}},
		{"not json", stFile(`{"a":`, nil), nil, []string{"header"}},
		{"not an object", stFile(`[1, 2]`, nil), nil, []string{"want a JSON object"}},
		{"name twice", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data), nil, []string{`"a" is listed twice`}},
		{"offsets past the end", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}}`, data), nil, []string{`tensor "b"`, "reach past"}},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, data[:12]), nil, []string{`tensor "b"`, `overlap tensor "a"`}},
		{"gap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}}`, append(data, 0, 0, 0, 0)), nil, []string{`tensor "b"`, "to no tensor"}},
		{"trailing bytes", stFile(good, append(data, 9)), nil, []string{"1 bytes after the last tensor"}},
		{"size disagrees with shape", stFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data), nil, []string{`tensor "a"`, "F32 [3] is 12 bytes"}},
		{"begin after end", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`, data[:8]), nil, []string{`tensor "a"`, "end before they begin"}},
		{"unknown dtype", stFile(`{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data), nil, []string{`tensor "a"`, `unknown dtype "Q4"`}},
		{"negative dimension", stFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, data[:8]), nil, []string{`tensor "a"`, "negative"}},
		{"huge dimension", stFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, data[:8]), nil, []string{`tensor "a"`, "bytes, data_offsets"}},
		{"bad metadata", stFile(`{"__metadata__":{"x":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data[:8]), nil, []string{"__metadata__"}},
		{"shape mismatch", stFile(`{"a":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data), nil, []string{`tensor "a" F32[1 2]`, `want shape [2] for variable "a"`}},
		{"missing", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data[:8]), nil, []string{`1 variables have no tensor`, `"b"`, "KeepMissingVariables"}},
		{"extra", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"c":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},"d":{"dtype":"F32","shape":[0],"data_offsets":[20,20]}}`, append(data, 0, 0, 0, 0)), nil, []string{`2 tensors of the file match no variable: "c" F32[1], "d" F32[0]`, "IgnoreExtraTensors"}},
		{"extra still refused when missing is allowed", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"c":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data), []nn.SafetensorsOption{nn.KeepMissingVariables()}, []string{`"c" F32[2]`}},
		{"tied tensors differ", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a2":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, data),
			[]nn.SafetensorsOption{nn.KeepMissingVariables(), nn.WithTensorMap(nn.TensorMap{{Tensor: "a", Variable: "a"}, {Tensor: "a2", Variable: "a"}})}, []string{`tensors "a" and "a2" both map to variable "a"`, "differ at value 0: 1 and 3"}},
		{"bad rule", stFile(good, data), []nn.SafetensorsOption{nn.WithTensorMap(nn.TensorMap{{Tensor: "a", Variable: "a", Permute: []int{0, 0}}})}, []string{`rule "a" → "a"`, "not a permutation"}},
		{"rule of the wrong rank", stFile(good, data), []nn.SafetensorsOption{nn.WithTensorMap(nn.TensorMap{{Tensor: "a", Variable: "a", Permute: []int{1, 0}}})}, []string{`tensor "a" F32[2] for variable "a"`, "wants rank 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			if err := os.WriteFile(path, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			a := graph.NewVariable("a", []int{2}, graph.Float32, []float64{-1, -2})
			b := graph.NewVariable("b", []int{2}, graph.Float64, []float64{-3, -4})
			err := nn.LoadSafetensors(path, nn.VariableList{a, b}, c.opts...)
			if err == nil {
				t.Fatalf("LoadSafetensors = nil, want an error with %q", c.want)
			}
			if !errors.Is(err, nn.ErrSafetensors) {
				t.Errorf("error %v does not wrap ErrSafetensors", err)
			}
			for _, w := range append([]string{path}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := append(a.Value(), b.Value()...); !slices.Equal(got, []float64{-1, -2, -3, -4}) {
				t.Errorf("after a failed load the variables are %v, want them unchanged", got)
			}
		})
	}
}

// TestSafetensorsOptions loads what it may with KeepMissingVariables and
// IgnoreExtraTensors, and refuses a missing file naming it.
func TestSafetensorsOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.safetensors")
	file := stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"c":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, f32Bytes(1, 2, 3, 4))
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	a := graph.NewVariable("a", []int{2}, graph.Float64, nil)
	b := graph.NewVariable("b", []int{2}, graph.Float64, []float64{7, 8})
	if err := nn.LoadSafetensors(path, nn.VariableList{a, b}, nn.KeepMissingVariables(), nn.IgnoreExtraTensors()); err != nil {
		t.Fatal(err)
	}
	if got := append(a.Value(), b.Value()...); !slices.Equal(got, []float64{1, 2, 7, 8}) {
		t.Errorf("variables = %v, want [1 2 7 8]", got)
	}
	missing := filepath.Join(t.TempDir(), "none.safetensors")
	err := nn.LoadSafetensors(missing, nn.VariableList{a})
	if !errors.Is(err, nn.ErrSafetensors) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("loading a missing file: %v, want an error naming it that wraps ErrSafetensors and os.ErrNotExist", err)
	}
}

// TestSafetensorsHalfPrecision reads F16 and BF16 (most published weights)
// into float32 and float64 variables, exactly.
func TestSafetensorsHalfPrecision(t *testing.T) {
	f16 := []uint16{0x3c00, 0xc000, 0x7bff, 0x0001, 0x8400, 0x7c00, 0x3555, 0x0000}
	f16Want := []float64{1, -2, 65504, math.Ldexp(1, -24), -math.Ldexp(1, -14), math.Inf(1), 0.333251953125, 0}
	bf16 := []uint16{0x3f80, 0x4049, 0xc2f7, 0x0000, 0xff80, 0x0001, 0x8000, 0x3e80}
	bf16Want := []float64{1, 3.140625, -123.5, 0, math.Inf(-1), float64(math.Float32frombits(0x10000)), 0, 0.25}
	var raw []byte
	for _, h := range append(f16, bf16...) {
		raw = binary.LittleEndian.AppendUint16(raw, h)
	}
	header := `{"h":{"dtype":"F16","shape":[2,4],"data_offsets":[0,16]},"bf":{"dtype":"BF16","shape":[8],"data_offsets":[16,32]}}`
	path := filepath.Join(t.TempDir(), "half.safetensors")
	if err := os.WriteFile(path, stFile(header, raw), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		h := graph.NewVariable("h", []int{2, 4}, dt, nil)
		bf := graph.NewVariable("bf", []int{8}, dt, nil)
		if err := nn.LoadSafetensors(path, nn.VariableList{h, bf}); err != nil {
			t.Fatal(err)
		}
		if got := h.Value(); !sameBits(got, f16Want) {
			t.Errorf("%v: F16 %04x read as %v, want %v", dt, f16, got, f16Want)
		}
		got := bf.Value()
		got[6] = math.Abs(got[6]) // -0
		if !sameBits(got, bf16Want) {
			t.Errorf("%v: BF16 %04x read as %v, want %v", dt, bf16, got, bf16Want)
		}
	}
}

// TestSafetensorsTensorMap writes a PyTorch-style file by hand (a
// Linear.weight [out, in], a fused [3·n, in] projection, a Conv2d.weight
// [out, in, kh, kw], a tied copy), loads it through a TensorMap, and saves
// it back through the same map to the same bytes.
func TestSafetensorsTensorMap(t *testing.T) {
	seq := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(i) + 0.5
		}
		return out
	}
	lin, fused, conv := seq(6), seq(3*2*2), seq(2*3*2*2)
	header := `{"lin.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},` +
		`"attn.weight":{"dtype":"F32","shape":[6,2],"data_offsets":[24,72]},` +
		`"conv.weight":{"dtype":"F32","shape":[2,3,2,2],"data_offsets":[72,168]},` +
		`"head.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[168,192]},` +
		`"bn.num_batches_tracked":{"dtype":"I64","shape":[],"data_offsets":[192,200]}}`
	raw := slices.Concat(f32Bytes(lin...), f32Bytes(fused...), f32Bytes(conv...), f32Bytes(lin...), binary.LittleEndian.AppendUint64(nil, 12))
	dir := t.TempDir()
	path := filepath.Join(dir, "torch.safetensors")
	if err := os.WriteFile(path, stFile(header, raw), 0o644); err != nil {
		t.Fatal(err)
	}
	names := nn.TensorMap{
		{Tensor: "lin.weight", Variable: "dense/kernel", Permute: []int{1, 0}},
		{Tensor: "head.weight", Variable: "dense/kernel", Permute: []int{1, 0}},
		{Tensor: "attn.weight", Variable: "q", Parts: 3, Part: 0, Permute: []int{1, 0}},
		{Tensor: "attn.weight", Variable: "k", Parts: 3, Part: 1, Permute: []int{1, 0}},
		{Tensor: "attn.weight", Variable: "v", Parts: 3, Part: 2, Permute: []int{1, 0}},
		{Tensor: "conv.weight", Variable: "conv/kernel", Permute: []int{2, 3, 1, 0}},
		{Tensor: "bn.num_batches_tracked"},
	}
	dense := graph.NewVariable("dense/kernel", []int{2, 3}, graph.Float32, nil)
	q := graph.NewVariable("q", []int{2, 2}, graph.Float32, nil)
	k := graph.NewVariable("k", []int{2, 2}, graph.Float64, nil)
	v := graph.NewVariable("v", []int{2, 2}, graph.Float32, nil)
	kernel := graph.NewVariable("conv/kernel", []int{2, 2, 3, 2}, graph.Float32, nil)
	vars := nn.VariableList{dense, q, k, v, kernel}
	if err := nn.LoadSafetensors(path, vars, nn.WithTensorMap(names)); err != nil {
		t.Fatal(err)
	}
	// lin [out 3, in 2] = [[0.5 1.5] [2.5 3.5] [4.5 5.5]]; the kernel is its transpose.
	checks := []struct {
		v    *nn.Variable
		want []float64
	}{
		{dense, []float64{0.5, 2.5, 4.5, 1.5, 3.5, 5.5}},
		{q, []float64{0.5, 2.5, 1.5, 3.5}},
		{k, []float64{4.5, 6.5, 5.5, 7.5}},
		{v, []float64{8.5, 10.5, 9.5, 11.5}},
	}
	for _, c := range checks {
		if got := c.v.Value(); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.v.Name(), got, c.want)
		}
	}
	// conv [o, i, kh, kw] → kernel [kh, kw, i, o]: kernel[y][x][i][o] = conv[o][i][y][x].
	got := kernel.Value()
	for y := range 2 {
		for x := range 2 {
			for i := range 3 {
				for o := range 2 {
					if w, g := float64(conv[((o*3+i)*2+y)*2+x]), got[((y*2+x)*3+i)*2+o]; g != w {
						t.Fatalf("conv/kernel[%d][%d][%d][%d] = %v, want %v", y, x, i, o, g, w)
					}
				}
			}
		}
	}

	back := filepath.Join(dir, "back.safetensors")
	if err := nn.SaveSafetensors(back, vars, nn.WithTensorMap(names)); err != nil {
		t.Fatal(err)
	}
	entries, _, err := nn.ReadSafetensors(back)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"lin.weight": lin, "head.weight": lin, "attn.weight": fused, "conv.weight": conv}
	for _, e := range entries {
		w, ok := want[e.Name]
		if !ok {
			t.Errorf("saved an unexpected tensor %q", e.Name)
			continue
		}
		delete(want, e.Name)
		wantDType := "F32"
		if e.Name == "attn.weight" {
			wantDType = "F64" // k is float64
		}
		if e.DType != wantDType {
			t.Errorf("tensor %q saved as %s, want %s", e.Name, e.DType, wantDType)
		}
		if gotVals := e.Values(); !slices.Equal(gotVals, f64s(w)) {
			t.Errorf("tensor %q saved as %v, want %v", e.Name, gotVals, w)
		}
	}
	for name := range want {
		t.Errorf("tensor %q was not saved", name)
	}

	// A fused tensor with a part no variable gives is refused on save.
	err = nn.SaveSafetensors(filepath.Join(dir, "half.safetensors"), nn.VariableList{q, k}, nn.WithTensorMap(names))
	if err == nil || !strings.Contains(err.Error(), `tensor "attn.weight": part 2 of 3 comes from no variable`) {
		t.Errorf("saving two of three parts: %v, want an error naming the tensor and the part", err)
	}
}

func f64s(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// TestSafetensorsSaveRefuses names the problem: duplicate names, two
// variables written as one tensor.
func TestSafetensorsSaveRefuses(t *testing.T) {
	dir := t.TempDir()
	a := graph.NewVariable("a", []int{1}, graph.Float32, nil)
	a2 := graph.NewVariable("a", []int{1}, graph.Float32, nil)
	b := graph.NewVariable("b", []int{1}, graph.Float32, nil)
	cases := []struct {
		name string
		src  nn.VariableSource
		opts []nn.SafetensorsOption
		want string
	}{
		{"nil", nil, nil, "got nil"},
		{"two named a", nn.VariableList{a, a2}, nil, `two variables are named "a"`},
		{"one tensor for two", nn.VariableList{a, b}, []nn.SafetensorsOption{nn.WithTensorMap(nn.TensorMap{{Tensor: "a", Variable: "b"}})}, `would be written as tensor "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			err := nn.SaveSafetensors(path, c.src, c.opts...)
			if err == nil || !errors.Is(err, nn.ErrSafetensors) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("SaveSafetensors = %v, want an ErrSafetensors naming %s and saying %q", err, path, c.want)
			}
			if _, serr := os.Stat(path); serr == nil {
				t.Errorf("a failed save left %s", path)
			}
		})
	}
}

// FuzzParseSafetensors feeds the header parser arbitrary bytes: it must
// return entries or an error, never panic, and the entries it returns must
// hold the values their shapes promise.
func FuzzParseSafetensors(f *testing.F) {
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]}}`, make([]byte, 12)))
	f.Add(stFile(`{"__metadata__":{"format":"pt"},"x":{"dtype":"F16","shape":[],"data_offsets":[0,2]}}  `, make([]byte, 2)))
	f.Add(stFile(`{"a":{"dtype":"I64","shape":[0,3],"data_offsets":[0,0]}}`, nil))
	var buf bytes.Buffer
	buf.Write(stFile(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, _, err := nn.ParseSafetensors("fuzz", b)
		if err != nil {
			if !errors.Is(err, nn.ErrSafetensors) {
				t.Fatalf("error %v does not wrap ErrSafetensors", err)
			}
			return
		}
		for _, e := range entries {
			n := 1
			for _, d := range e.Shape {
				n *= d
			}
			if got := len(e.Values()); got != n {
				t.Fatalf("tensor %q %v: %d values, want %d", e.Name, e.Shape, got, n)
			}
		}
	})
}

// TestSafetensorsTruncatedAnywhere cuts a saved file at every length and
// wants each cut refused, naming the file.
func TestSafetensorsTruncatedAnywhere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.safetensors")
	m := newSTModel(t, graph.Float32, 1, 1)
	if err := nn.SaveSafetensors(path, m.model); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(whole) {
		if _, _, err := nn.ParseSafetensors("cut", whole[:n]); err == nil || !strings.Contains(err.Error(), "cut") {
			t.Fatalf("the file cut to %d of %d bytes: %v, want an error naming it", n, len(whole), err)
		}
	}
}
