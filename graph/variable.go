package graph

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// DType is the element type of a graph's buffers.
type DType int

// The element types a graph can compute in.
const (
	Float32 DType = iota
	Float64
)

// String returns "float32" or "float64".
func (dt DType) String() string {
	switch dt {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", int(dt))
}

// size is the bytes of one value.
func (dt DType) size() int {
	if dt == Float32 {
		return 4
	}
	return 8
}

func (dt DType) check(where string) {
	if dt != Float32 && dt != Float64 {
		panic(&Error{Op: where, Msg: fmt.Sprintf("want dtype float32 or float64, got %v", dt), Err: ErrDType})
	}
}

// Variable is storage that outlives graphs: model weights and optimizer slots.
//
// A graph reads a Variable's storage directly while a Program runs, without a
// copy, so writers (the optimizer, Assign) must not run while any Program that
// reads it runs. Concurrent reads, including concurrent Runs of Programs on
// different replicas, are safe.
type Variable struct {
	name      string
	shape     []int // immutable
	dt        DType // immutable
	f32       []float32
	f64       []float64
	trainable atomic.Bool

	// mirrors are the variable's copies on devices (mirror.go); any is set
	// once the first is made, so that host reads and writes without mirrors
	// cost one atomic load.
	mirrors struct {
		sync.Mutex
		list      []*mirror
		any       atomic.Bool
		hostStale bool // a device copy is newer (SetDeviceNewer)
	}
}

// NewVariable returns a trainable variable of the given shape and dtype,
// holding init converted to dt, or zeros if init is nil.
// It panics with an error wrapping ErrShape if a dimension is negative or
// len(init) is not the product of shape.
func NewVariable(name string, shape []int, dt DType, init []float64) *Variable {
	dt.check("variable " + name)
	n := checkDims("variable "+name, shape)
	if init != nil && len(init) != n {
		panic(&Error{Op: "variable " + quote(name), Msg: fmt.Sprintf("want %d initial values for shape %v, got %d", n, shape, len(init)), Err: ErrShape})
	}
	v := &Variable{name: name, shape: append([]int(nil), shape...), dt: dt}
	v.trainable.Store(true)
	if dt == Float32 {
		v.f32 = make([]float32, n)
	} else {
		v.f64 = make([]float64, n)
	}
	if init != nil {
		v.Assign(init)
	}
	return v
}

// Name returns the name given to NewVariable.
func (v *Variable) Name() string { return v.name }

// Shape returns a copy of the variable's shape.
func (v *Variable) Shape() []int { return append([]int(nil), v.shape...) }

// DType returns the variable's element type.
func (v *Variable) DType() DType { return v.dt }

// Len returns the number of elements, the product of Shape.
func (v *Variable) Len() int {
	if v.dt == Float32 {
		return len(v.f32)
	}
	return len(v.f64)
}

// Trainable reports whether optimizers should update the variable.
// New variables are trainable.
func (v *Variable) Trainable() bool { return v.trainable.Load() }

// SetTrainable marks the variable as trainable or frozen.
func (v *Variable) SetTrainable(t bool) { v.trainable.Store(t) }

// Value returns a copy of the variable's values as float64, first copied
// to the host from a device whose copy is newer (SetDeviceNewer).
func (v *Variable) Value() []float64 {
	v.hostRead()
	if v.dt == Float64 {
		return append([]float64(nil), v.f64...)
	}
	out := make([]float64, len(v.f32))
	for i, x := range v.f32 {
		out[i] = float64(x)
	}
	return out
}

// Assign copies vals into the variable, converting to its dtype, and marks
// its device mirrors stale.
// It panics with an error wrapping ErrShape if len(vals) != v.Len().
func (v *Variable) Assign(vals []float64) {
	if len(vals) != v.Len() {
		panic(&Error{Op: "assign " + quote(v.name), Msg: fmt.Sprintf("want %d values, got %d", v.Len(), len(vals)), Err: ErrShape})
	}
	v.hostAssign()
	if v.dt == Float64 {
		copy(v.f64, vals)
		return
	}
	for i, x := range vals {
		v.f32[i] = float32(x)
	}
}

// F32 returns the variable's storage itself if its dtype is Float32, else nil,
// first copied to the host from a device whose copy is newer. Writes
// through it change the variable. Since they cannot be seen, F32 marks the
// device mirrors stale; a caller that keeps the slice and writes it later
// calls Invalidate after writing.
func (v *Variable) F32() []float32 { v.hostWrite(); return v.f32 }

// F64 is F32 for Float64 variables.
func (v *Variable) F64() []float64 { v.hostWrite(); return v.f64 }

func (v *Variable) String() string {
	return fmt.Sprintf("%s%v %v", v.name, v.shape, v.dt)
}
