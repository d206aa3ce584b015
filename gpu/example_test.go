//go:build cuda

package gpu_test

import (
	"fmt"
	"runtime"

	"github.com/gotrain/gotrain/gpu"
)

// A kernel compiled at run time scales a vector on device 0; cuBLAS then
// multiplies two matrices.
func Example() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, err := gpu.Open(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	if err := d.Bind(); err != nil {
		fmt.Println(err)
		return
	}
	s, err := d.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()

	const src = `
KERNEL void scale_f32(float *y, const float *a, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = a[0] * y[i];
}
`
	ptx, err := d.Compile("scale.cu", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := d.Load(ptx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Unload()
	scale, err := m.Function("scale_f32")
	if err != nil {
		fmt.Println(err)
		return
	}

	x := []float32{1, 2, 3, 4, 5, 6}
	y, _ := d.Alloc(4 * len(x))
	defer d.Free(y)
	a, _ := d.Alloc(4) // the scalar travels in device memory
	defer d.Free(a)
	gpu.CopyHtoD(s, y, x)
	gpu.CopyHtoD(s, a, []float32{0.5})
	grid, block := gpu.Linear(len(x), 256)
	if err := scale.Launch(s, grid, block, y, a, len(x)); err != nil {
		fmt.Println(err)
		return
	}
	gpu.CopyDtoH(s, x, y)
	fmt.Printf("scaled: %.1f\n", x)

	// Row-major C (2×2) = A (2×3) · B (3×2), with A the scaled vector.
	h, err := gpu.NewHandle(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Destroy()
	b, _ := d.Alloc(4 * 6)
	defer d.Free(b)
	c, _ := d.Alloc(4 * 4)
	defer d.Free(c)
	gpu.CopyHtoD(s, b, []float32{1, 0, 0, 1, 1, 1})
	if err := h.Gemm32(false, false, 2, 2, 3, 1, y, 3, b, 2, 0, c, 2); err != nil {
		fmt.Println(err)
		return
	}
	out := make([]float32, 4)
	gpu.CopyDtoH(s, out, c)
	fmt.Printf("product: %.1f\n", out)
	// Output:
	// scaled: [0.5 1.0 1.5 2.0 2.5 3.0]
	// product: [2.0 2.5 5.0 5.5]
}
