//go:build cuda

package loops_test

import (
	"fmt"
	"runtime"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/internal/loops"
)

// onDevice0 runs fn with device 0, a stream on it and a launch site's
// DeviceParams, printing any error.
func onDevice0(fn func(d *gpu.Device, s *gpu.Stream, p *loops.DeviceParams) error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, err := gpu.Open(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	s, err := d.NewStream()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	p, err := loops.NewDeviceParams(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Free()
	if err := fn(d, s, p); err != nil {
		fmt.Println(err)
	}
}

// One Adam step on device 0 gives the bits of ExampleAdamUpdate's CPU step;
// the launch site's hyperparameters travel in a DeviceParams made once.
func ExampleAdamUpdateDevice() {
	onDevice0(func(d *gpu.Device, s *gpu.Stream, p *loops.DeviceParams) error {
		// w, g, m, v: one float64 each, m and v starting at zero.
		buf, err := d.Alloc(4 * 8)
		if err != nil {
			return err
		}
		defer d.Free(buf)
		w, g, m, v := buf, buf.Add(8), buf.Add(16), buf.Add(24)
		gpu.CopyHtoD(s, buf, []float64{1, 0.5, 0, 0})
		if err := loops.AdamUpdateDevice[float64](s, p, w, g, m, v, 1, 0.1, 0.9, 0.999, 1e-8, 1); err != nil {
			return err
		}
		out := make([]float64, 4)
		gpu.CopyDtoH(s, out, buf)
		fmt.Printf("w=%.4f m=%.4f v=%.6f\n", out[0], out[2], out[3])
		return nil
	})
	// Output: w=0.9000 m=0.0500 v=0.000250
}

// SGD with momentum on device 0, two steps, as ExampleSGDUpdate on the CPU.
func ExampleSGDUpdateDevice() {
	onDevice0(func(d *gpu.Device, s *gpu.Stream, p *loops.DeviceParams) error {
		buf, err := d.Alloc(3 * 4)
		if err != nil {
			return err
		}
		defer d.Free(buf)
		w, g, vel := buf, buf.Add(4), buf.Add(8)
		gpu.CopyHtoD(s, buf, []float32{1, 1, 0})
		for range 2 {
			if err := loops.SGDUpdateDevice[float32](s, p, w, g, vel, 1, 0.1, 0.9, false); err != nil {
				return err
			}
		}
		out := make([]float32, 3)
		gpu.CopyDtoH(s, out, buf)
		fmt.Printf("w=%.3f vel=%.3f\n", out[0], out[2])
		return nil
	})
	// Output: w=0.710 vel=1.900
}
