package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// IDX element types, from the format's description on Yann LeCun's MNIST
// page: the third byte of the magic number.
var idxTypes = map[byte]struct {
	size   int
	decode decoder
}{
	0x08: {1, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = float64(src[i])
		}
	}},
	0x09: {1, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = float64(int8(src[i]))
		}
	}},
	0x0B: {2, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = float64(int16(binary.BigEndian.Uint16(src[2*i:])))
		}
	}},
	0x0C: {4, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = float64(int32(binary.BigEndian.Uint32(src[4*i:])))
		}
	}},
	0x0D: {4, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = float64(math.Float32frombits(binary.BigEndian.Uint32(src[4*i:])))
		}
	}},
	0x0E: {8, func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = math.Float64frombits(binary.BigEndian.Uint64(src[8*i:]))
		}
	}},
}

// ReadIDX reads one array in the IDX format that MNIST is distributed in,
// decompressing it first if it starts with gzip's magic bytes. Values keep
// their stored magnitude (image bytes are 0..255); use Tensor.Scale to
// normalize. The tensor's shape is the file's dimensions.
//
// Malformed input gives a *FormatError; the reader must hold exactly one
// array.
func ReadIDX(r io.Reader) (Tensor, error) { return readIDX(r, "") }

// LoadIDX reads the IDX file at path, gzip-compressed or not; see ReadIDX.
func LoadIDX(path string) (Tensor, error) { return loadFile(path, "idx", readIDX) }

func readIDX(r io.Reader, name string) (Tensor, error) {
	bad := formatErrorAt("idx", name)
	avail := sizeOf(r)
	br := bufio.NewReader(r)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		avail = -1 // the decompressed size is not known up front
		gz, err := gzip.NewReader(br)
		if err != nil {
			return bad(0, "a gzip header", "a malformed one", err)
		}
		defer gz.Close()
		src = gz
	}
	cr := &countingReader{r: src}

	var head [4]byte
	if k, err := io.ReadFull(cr, head[:]); err != nil {
		return bad(0, "a 4-byte magic number", gotBytes(k, err), readErr(err))
	}
	if head[0] != 0 || head[1] != 0 {
		return bad(0, "magic number starting 0x0000", fmt.Sprintf("0x%02x%02x", head[0], head[1]), nil)
	}
	typ, ok := idxTypes[head[2]]
	if !ok {
		return bad(2, "element type 0x08, 0x09, 0x0b, 0x0c, 0x0d or 0x0e", fmt.Sprintf("0x%02x", head[2]), nil)
	}
	rank := int(head[3])
	shape := make([]int, rank)
	n := int64(1)
	for i := range shape {
		off := cr.n
		var dim [4]byte
		if k, err := io.ReadFull(cr, dim[:]); err != nil {
			return bad(off, fmt.Sprintf("dimension %d of %d", i+1, rank), gotBytes(k, err), readErr(err))
		}
		d := int64(binary.BigEndian.Uint32(dim[:]))
		if d > math.MaxInt32 || (d != 0 && n > math.MaxInt64/int64(typ.size)/d) {
			return bad(off, "a size that fits in memory", fmt.Sprintf("dimension %d of %d", i+1, d), nil)
		}
		n *= d
		shape[i] = int(d)
	}
	return readArray(cr, avail, shape, n, typ.size, typ.decode,
		fmt.Sprintf("%d bytes of data for shape %v", n*int64(typ.size), shape), bad)
}
