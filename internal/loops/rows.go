package loops

// Op is an element-wise arithmetic operation of OpTo and the row kernels
// (RowsOpTo, OpRowsTo); the kernels panic on any other value.
type Op uint8

const (
	OpAdd Op = iota // a + b
	OpSub           // a - b
	OpMul           // a * b
	OpDiv           // a / b
)

// RowsOpTo is:
//
//	for i, x := range a {
//		dst[i] = x op v[i%len(v)]
//	}
//
// a vector applied to every row of a, as a bias add or a batch norm's
// per-channel scale is. On amd64 with AVX, float32 rows whose length is a
// multiple of 8 run in one assembly loop, with the same bits; other rows
// go through AddTo, SubTo, MulTo or DivTo one at a time. It panics if a
// is not whole rows of len(v).
func RowsOpTo[T Float](op Op, dst, a, v []T) { rowsTo("RowsOpTo", op, dst, a, v, false) }

// OpRowsTo is:
//
//	for i, x := range b {
//		dst[i] = v[i%len(v)] op x
//	}
//
// RowsOpTo with the vector on the left. It panics if b is not whole rows of
// len(v).
func OpRowsTo[T Float](op Op, dst, v, b []T) { rowsTo("OpRowsTo", op, dst, b, v, true) }

// rowsTo is RowsOpTo, or OpRowsTo with left: x's rows op v, or v op x's
// rows.
func rowsTo[T Float](fn string, op Op, dst, x, v []T, left bool) {
	checkRows(fn, len(x), len(v))
	if len(x) == 0 {
		return
	}
	dst = dst[:len(x)]
	if useVector && hasAVX && len(v)%8 == 0 {
		if xs, ok := any(x).([]float32); ok {
			rowsAVX32(op, any(dst).([]float32), xs, any(v).([]float32), left)
			return
		}
	}
	for r := 0; r < len(x); r += len(v) {
		if left {
			OpTo(op, dst[r:r+len(v)], v, x[r:r+len(v)])
		} else {
			OpTo(op, dst[r:r+len(v)], x[r:r+len(v)], v)
		}
	}
}

// SumRowsTo is:
//
//	for i, x := range x {
//		dst[i%len(dst)] += x
//	}
//
// the rows of x added into dst in increasing order, as AddTo(dst, dst, row)
// would one row at a time: a bias's or a batch norm's gradient sums its
// output's gradient so. On amd64 with AVX, float32 rows whose length is a
// multiple of 8 run in one assembly loop. It panics if x is not whole rows
// of len(dst).
func SumRowsTo[T Float](dst, x []T) {
	checkRows("SumRowsTo", len(x), len(dst))
	if len(x) == 0 {
		return
	}
	if useVector && hasAVX && len(dst)%8 == 0 {
		if xs, ok := any(x).([]float32); ok {
			sumRowsAVX32(any(dst).([]float32), xs)
			return
		}
	}
	for r := 0; r < len(x); r += len(dst) {
		AddTo(dst, dst, x[r:r+len(dst)])
	}
}

// AccRowsTo is:
//
//	for i, v := range x {
//		acc[i%len(acc)] += f * float64(v)
//	}
//
// the rows of x, weighted by f, summed into acc in float64 in increasing
// order: a batch norm's masked sums per channel. On amd64 with
// AVX, float32 rows whose length is a multiple of 4 run in one assembly
// loop, 4 float64 lanes at a time, with the same bits. It panics if x is
// not whole rows of len(acc).
func AccRowsTo[T Float](acc []float64, f float64, x []T) {
	checkRows("AccRowsTo", len(x), len(acc))
	if len(x) == 0 {
		return
	}
	if useVector && hasAVX && len(acc)%4 == 0 {
		if xs, ok := any(x).([]float32); ok {
			accRowsAVX32(acc, f, xs)
			return
		}
	}
	for r := 0; r < len(x); r += len(acc) {
		for j, v := range x[r : r+len(acc)] {
			acc[j] += f * float64(v)
		}
	}
}

// checkRows panics unless n elements are whole rows of row elements; no
// elements are whole rows of any length.
func checkRows(fn string, n, row int) {
	if n != 0 && (row == 0 || n%row != 0) {
		panic("kernels: " + fn + ": want whole rows of the vector's length")
	}
}

// OpTo is AddTo, SubTo, MulTo or DivTo as op says. It panics on an
// unknown op.
func OpTo[T Float](op Op, dst, a, b []T) {
	switch op {
	case OpAdd:
		AddTo(dst, a, b)
	case OpSub:
		SubTo(dst, a, b)
	case OpMul:
		MulTo(dst, a, b)
	case OpDiv:
		DivTo(dst, a, b)
	default:
		panic("kernels: unknown Op")
	}
}
