//go:build cuda

package graph

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/gotrain/gotrain/gpu"
)

// cudaKernel is an op's kernel on an NVIDIA device, the slot opDef.cuda
// holds: plan builds, once at compile time, the launches that compute node
// n from its inputs' device buffers, as a CPU kernelFunc builds its loop.
type cudaKernel struct {
	plan func(b *devBuilder, n *Node) (func() error, error)
	// aux asks for one int64 of index state per output element, which the
	// op's gradient reads through devBuilder.auxOf (max-pool's argmax).
	aux bool
	// words, if set, is how many parameter words plan puts in n's slot
	// when that can exceed slotWords (batched gemm's pointer arrays).
	words func(n *Node) int
}

// cudaSources holds each family's CUDA C source by family name, as its
// _cuda.go twin adds it (addCUDASource). A device compiles them as one
// module per dtype, after cudaHeader (kernels_cuda.go), at its first
// kernel: one NVRTC call, however many families a program uses.
var cudaSources = map[string]string{}

// addCUDASource adds a family's CUDA C source to the module.
// It panics if the family has one already.
func addCUDASource(family, text string) {
	if _, ok := cudaSources[family]; ok {
		panic("graph: two CUDA sources for " + family)
	}
	cudaSources[family] = text
}

// cudaModule is every family's source, in the order of their names, read
// once the package's init functions have added them.
var cudaModule = sync.OnceValue(func() string {
	var b strings.Builder
	for _, f := range slices.Sorted(maps.Keys(cudaSources)) {
		b.WriteString(cudaSources[f])
	}
	return b.String()
})

// defineCUDA attaches the CUDA kernels of a family's ops to their entries
// in ops.
// It panics if an op gets two.
func defineCUDA(ks map[opKind]*cudaKernel) {
	for op, k := range ks {
		if ops[op].cuda != nil {
			panic(fmt.Sprintf("graph: op %d (%s) has two CUDA kernels", op, ops[op].name))
		}
		ops[op].cuda = k
	}
}

// devBuilder is what a cudaKernel's plan builds node n's step from: its
// buffers, its parameter slot and flag in the arena, and its kernels.
type devBuilder struct {
	d     *devProgram
	n     *Node
	step  int       // index of n's step
	words []float64 // n's parameter slot on the host, uploaded after planning
	slot  gpu.Ptr   // the slot on the device
	used  int       // words of the slot used
	flag  gpu.Ptr   // n's label flag
}

func (b *devBuilder) in(i int) gpu.Ptr { return b.d.bufs[b.n.in[i].id] }
func (b *devBuilder) out() gpu.Ptr     { return b.d.bufs[b.n.id] }

// auxOf returns the index state of node m (a forward node of n's).
func (b *devBuilder) auxOf(m *Node) gpu.Ptr { return b.d.aux[m.id] }

// doubles puts vals in n's parameter slot and returns their address:
// kernels take float scalars through a device buffer.
func (b *devBuilder) doubles(vals ...float64) gpu.Ptr {
	p := b.slot.Add(b.used * 8)
	copy(b.words[b.used:], vals)
	b.used += len(vals)
	return p
}

// ints puts vals in n's parameter slot as int64s and returns their address.
func (b *devBuilder) ints(vals ...int) gpu.Ptr {
	p := b.slot.Add(b.used * 8)
	for i, v := range vals {
		b.words[b.used+i] = math.Float64frombits(uint64(int64(v)))
	}
	b.used += len(vals)
	return p
}

// check returns n's flag and registers it with Run: its kernel checks the
// labels or ids in ids against bound.
func (b *devBuilder) check(ids *Node, bound int, label bool) gpu.Ptr {
	b.d.checks = append(b.d.checks, devCheck{step: b.step, ids: ids, bound: bound, label: label})
	return b.flag
}

// kernel returns a launch of kernel name over threads threads (none when
// threads is 0) with args, compiling the module of cudaModule on first use.
func (b *devBuilder) kernel(name string, threads int, args ...any) (func() error, error) {
	if threads == 0 {
		return func() error { return nil }, nil
	}
	mod, err := loadModule(b.d.dev, b.d.p.dt, "ops", cudaModule())
	if err != nil {
		return nil, err
	}
	f, err := mod.Function(name)
	if err != nil {
		return nil, err
	}
	grid, blk := gpu.Linear(threads, 256)
	s := b.d.s
	return func() error { return f.Launch(s, grid, blk, args...) }, nil
}

// seq runs fs in order, stopping at the first error.
func seq(fs ...func() error) func() error {
	return func() error {
		for _, f := range fs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}
