//go:build !cuda

package nn

import "github.com/gotrain/gotrain/gpu"

// deviceParams stands for loops.DeviceParams, which needs -tags cuda.
type deviceParams struct{}

func (o *optimizer) paramsOn(*gpu.Device) (*deviceParams, error) { return nil, gpu.ErrNotBuilt }

// Without -tags cuda no optimizer has a device rule.

func sgdRule(*SGD) deviceRule         { return nil }
func adamRule(*Adam) deviceRule       { return nil }
func adamWRule(*AdamW) deviceRule     { return nil }
func rmspropRule(*RMSprop) deviceRule { return nil }
