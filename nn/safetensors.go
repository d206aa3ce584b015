package nn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/errkind"
)

// ErrSafetensors is wrapped by every error of SaveSafetensors,
// LoadSafetensors and ReadSafetensors about the file, its contents or how
// they match the variables: errors.Is(err, nn.ErrSafetensors).
var ErrSafetensors = errors.New("nn: safetensors")

// The safetensors format (github.com/huggingface/safetensors), which
// PyTorch, JAX, Candle and the model hubs exchange weights in:
//
//	N        uint64, little-endian: the header's length in bytes
//	header   N bytes of UTF-8 JSON, an object: for each tensor name
//	         {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//	         and optionally "__metadata__": an object of string values;
//	         it may end in spaces (padding)
//	data     the tensors' bytes, little-endian, row-major; offsets count
//	         from the data's first byte, and the tensors cover it exactly,
//	         without gaps or overlaps
//
// gotrain writes its own metadata (safetensorsVersionKey, safetensorsDTypeKey)
// and pads the header so the data starts at a multiple of 8.
const (
	// safetensorsMaxHeader bounds the header as the reference reader does
	// (100 MB), so a corrupt length cannot make us allocate the file's worth.
	safetensorsMaxHeader = 100 << 20
	safetensorsMaxRank   = 32
	// safetensorsVersionKey and safetensorsDTypeKey are gotrain's entries in
	// __metadata__: the version of what gotrain writes (its names, its
	// layouts) and the variables' dtype ("float32", "float64" or "mixed").
	safetensorsVersionKey = "gotrain.format_version"
	safetensorsDTypeKey   = "gotrain.dtype"
	safetensorsVersion    = "1"
)

// safetensorsDTypes are the element types the reader knows and their sizes
// in bytes. Every one converts to float64 (SafetensorsEntry.Values); the
// 8-bit floats and the sub-byte types are refused by name.
var safetensorsDTypes = map[string]int{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2,
	"I64": 8, "I32": 4, "I16": 2, "I8": 1,
	"U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
}

// SafetensorsEntry is one tensor of a safetensors file.
type SafetensorsEntry struct {
	Name  string
	DType string // as the file spells it: "F32", "F64", "F16", "BF16", "I64", ...
	Shape []int
	data  []byte // raw little-endian values
}

// Len returns the number of values, the product of Shape.
func (e SafetensorsEntry) Len() int { return len(e.data) / safetensorsDTypes[e.DType] }

// Values returns the entry's values converted to float64: half-precision
// (F16, BF16) and float32 values exactly, integers exactly up to 2⁵³, BOOL
// as 0 or 1.
func (e SafetensorsEntry) Values() []float64 {
	le := binary.LittleEndian
	out := make([]float64, e.Len())
	b := e.data
	for i := range out {
		switch e.DType {
		case "F64":
			out[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		case "F32":
			out[i] = float64(math.Float32frombits(le.Uint32(b[4*i:])))
		case "F16":
			out[i] = float64(halfToFloat32(le.Uint16(b[2*i:])))
		case "BF16":
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16))
		case "I64":
			out[i] = float64(int64(le.Uint64(b[8*i:])))
		case "I32":
			out[i] = float64(int32(le.Uint32(b[4*i:])))
		case "I16":
			out[i] = float64(int16(le.Uint16(b[2*i:])))
		case "I8":
			out[i] = float64(int8(b[i]))
		case "U64":
			out[i] = float64(le.Uint64(b[8*i:]))
		case "U32":
			out[i] = float64(le.Uint32(b[4*i:]))
		case "U16":
			out[i] = float64(le.Uint16(b[2*i:]))
		case "U8", "BOOL":
			out[i] = float64(b[i])
		}
	}
	return out
}

// halfToFloat32 converts IEEE 754 binary16 bits to a float32, exactly
// (subnormals, infinities and NaN included).
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac·2⁻²⁴
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

func safetensorsError(path, format string, args ...any) error {
	return errkind.New(ErrSafetensors, fmt.Sprintf("nn: safetensors %s: ", path), format, args...)
}

func safetensorsIOError(path, doing string, err error) error {
	return &wrapError{msg: fmt.Sprintf("nn: safetensors %s: %s: %v", path, doing, err), errs: []error{ErrSafetensors, err}}
}

// ReadSafetensors reads and verifies the safetensors file at path and
// returns its tensors in the order of their data, and the header's
// __metadata__ (nil if it has none). Errors wrap ErrSafetensors and name
// the file and the tensor at fault.
func ReadSafetensors(path string) ([]SafetensorsEntry, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, safetensorsIOError(path, "read", err)
	}
	return parseSafetensors(path, b)
}

// safetensorsHeaderEntry is one tensor as the header describes it.
type safetensorsHeaderEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// parseSafetensors parses and checks a whole file held in b: the header's
// structure, each tensor's dtype, shape and offsets against the data that
// follows, and that the tensors tile the data exactly. The entries share
// b's memory.
func parseSafetensors(path string, b []byte) ([]SafetensorsEntry, map[string]string, error) {
	size := len(b)
	if size < 8 {
		return nil, nil, safetensorsError(path, "truncated: file ends at byte %d, inside the header length (8 bytes)", size)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > safetensorsMaxHeader {
		return nil, nil, safetensorsError(path, "header length %d is over the limit of %d bytes (not a safetensors file?)", n, safetensorsMaxHeader)
	}
	if n > uint64(size-8) {
		return nil, nil, safetensorsError(path, "truncated: the header is %d bytes, the file has %d after the header length", n, size-8)
	}
	header, data := b[8:8+n], b[8+n:]
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, safetensorsError(path, "header: want a JSON object, got %q", clip(header, 16))
	}
	names, raw, err := splitHeader(header)
	if err != nil {
		return nil, nil, safetensorsError(path, "header: %v", err)
	}
	var meta map[string]string
	entries := make([]SafetensorsEntry, 0, len(names))
	type span struct {
		begin, end uint64
		i          int
	}
	spans := make([]span, 0, len(names))
	for k, name := range names {
		if name == "__metadata__" {
			if err := json.Unmarshal(raw[k], &meta); err != nil {
				return nil, nil, safetensorsError(path, "header: __metadata__: want an object of strings: %v", err)
			}
			continue
		}
		var h safetensorsHeaderEntry
		dec := json.NewDecoder(bytes.NewReader(raw[k]))
		if err := dec.Decode(&h); err != nil {
			return nil, nil, safetensorsError(path, "tensor %q: header entry: %v", name, err)
		}
		elem, ok := safetensorsDTypes[h.DType]
		if !ok {
			return nil, nil, safetensorsError(path, "tensor %q: unknown dtype %q, want one of F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL", name, h.DType)
		}
		if h.Shape == nil {
			return nil, nil, safetensorsError(path, "tensor %q: header entry has no shape", name)
		}
		if len(h.Shape) > safetensorsMaxRank {
			return nil, nil, safetensorsError(path, "tensor %q: rank %d, want at most %d", name, len(h.Shape), safetensorsMaxRank)
		}
		if len(h.DataOffsets) != 2 {
			return nil, nil, safetensorsError(path, "tensor %q: want data_offsets [begin, end], got %v", name, h.DataOffsets)
		}
		shape := make([]int, len(h.Shape))
		count := uint64(1)
		for d, dim := range h.Shape {
			if dim < 0 {
				return nil, nil, safetensorsError(path, "tensor %q: shape %v has a negative dimension", name, h.Shape)
			}
			shape[d] = int(min(dim, int64(size)+1))
			// A product past the file's size cannot be there, and bounding
			// it keeps it from overflowing.
			if hi, lo := bits.Mul64(count, uint64(shape[d])); hi != 0 || lo > uint64(size) {
				count = uint64(size) + 1
			} else {
				count = lo
			}
		}
		begin, end := h.DataOffsets[0], h.DataOffsets[1]
		switch {
		case begin > end:
			return nil, nil, safetensorsError(path, "tensor %q: data_offsets [%d, %d] end before they begin", name, begin, end)
		case end > uint64(len(data)):
			return nil, nil, safetensorsError(path, "tensor %q: data_offsets [%d, %d] reach past the data's %d bytes (truncated file?)", name, begin, end, len(data))
		case count*uint64(elem) != end-begin:
			return nil, nil, safetensorsError(path, "tensor %q: %s %v is %d bytes, data_offsets [%d, %d] hold %d", name, h.DType, h.Shape, count*uint64(elem), begin, end, end-begin)
		}
		spans = append(spans, span{begin, end, len(entries)})
		entries = append(entries, SafetensorsEntry{Name: name, DType: h.DType, Shape: shape, data: data[begin:end]})
	}
	// The tensors must tile the data: sorted by offset, each begins where
	// the one before ends, and the last ends at the end of the file.
	slices.SortStableFunc(spans, func(a, b span) int {
		if a.begin != b.begin {
			return cmpU64(a.begin, b.begin)
		}
		return cmpU64(a.end, b.end)
	})
	at, prev := uint64(0), ""
	for _, s := range spans {
		name := entries[s.i].Name
		switch {
		case s.begin < at:
			return nil, nil, safetensorsError(path, "tensor %q: data_offsets [%d, %d] overlap tensor %q, which ends at %d", name, s.begin, s.end, prev, at)
		case s.begin > at:
			return nil, nil, safetensorsError(path, "tensor %q: data_offsets begin at %d, leaving bytes %d to %d of the data to no tensor", name, s.begin, at, s.begin)
		}
		at, prev = s.end, name
	}
	if at != uint64(len(data)) {
		return nil, nil, safetensorsError(path, "%d bytes after the last tensor's data (at %d of %d)", uint64(len(data))-at, at, len(data))
	}
	sorted := make([]SafetensorsEntry, len(spans))
	for i, s := range spans {
		sorted[i] = entries[s.i]
	}
	return sorted, meta, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// splitHeader returns the top-level keys of the JSON object in header, in
// order, and each one's raw value; it refuses a key given twice (which
// encoding/json would silently resolve to the last) and anything after the
// object but spaces.
func splitHeader(header []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(header))
	if _, err := dec.Token(); err != nil { // '{', checked by the caller
		return nil, nil, err
	}
	var names []string
	var raws []json.RawMessage
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("want a tensor name, got %v", tok)
		}
		if seen[name] {
			return nil, nil, fmt.Errorf("tensor %q is listed twice", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %v", name, err)
		}
		names, raws = append(names, name), append(raws, raw)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, nil, err
	}
	rest := header[dec.InputOffset():]
	if len(bytes.Trim(rest, " \t\r\n")) != 0 {
		return nil, nil, fmt.Errorf("unexpected %q after the header's object", clip(rest, 16))
	}
	return names, raws, nil
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// safetensorsTensor is a tensor to write: its name, dtype and values.
type safetensorsTensor struct {
	name  string
	dt    graph.DType
	shape []int
	vals  []float64
}

// encodeSafetensorsHeader returns the length-prefixed header for tensors
// written in order, padded with spaces so the data starts at a multiple
// of 8 bytes.
func encodeSafetensorsHeader(tensors []safetensorsTensor, meta map[string]string) []byte {
	var h strings.Builder
	h.WriteString("{")
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		h.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				h.WriteString(",")
			}
			h.WriteString(quoteJSON(k) + ":" + quoteJSON(meta[k]))
		}
		h.WriteString("}")
	}
	off := 0
	for i, t := range tensors {
		if i > 0 || len(keys) > 0 {
			h.WriteString(",")
		}
		dtype, size := "F32", 4
		if t.dt == graph.Float64 {
			dtype, size = "F64", 8
		}
		dims := make([]string, len(t.shape))
		for d, n := range t.shape {
			dims[d] = strconv.Itoa(n)
		}
		end := off + size*len(t.vals)
		fmt.Fprintf(&h, `%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}`, quoteJSON(t.name), dtype, strings.Join(dims, ","), off, end)
		off = end
	}
	h.WriteString("}")
	for (8+h.Len())%8 != 0 {
		h.WriteString(" ")
	}
	return append(binary.LittleEndian.AppendUint64(nil, uint64(h.Len())), h.String()...)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// writeSafetensors writes a whole file: header, then each tensor's values.
func writeSafetensors(w io.Writer, tensors []safetensorsTensor, meta map[string]string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.Write(encodeSafetensorsHeader(tensors, meta)); err != nil {
		return err
	}
	le := binary.LittleEndian
	var buf [8]byte
	for _, t := range tensors {
		for _, x := range t.vals {
			var err error
			if t.dt == graph.Float64 {
				le.PutUint64(buf[:], math.Float64bits(x))
				_, err = bw.Write(buf[:8])
			} else {
				le.PutUint32(buf[:], math.Float32bits(float32(x)))
				_, err = bw.Write(buf[:4])
			}
			if err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
