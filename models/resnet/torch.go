package resnet

import (
	"fmt"

	"github.com/gotrain/gotrain/nn"
)

// TorchNames maps the state_dict of the PyTorch ResNet that
// shared/bench/torch_resnet.py and scripts/torch_safetensors.py write (stem.0
// the stem convolution, stem.1 its batch norm, body.N.c1, b1, c2, b2 and
// short.0, short.1 for the blocks in order, head) onto a ResNet of
// configuration c made by New(name, c), for nn.LoadSafetensors and
// nn.SaveSafetensors (nn.WithTensorMap).
//
// Conv2d weights are [out, in, kh, kw], Conv2D kernels [kh, kw, in, out]
// (Permute {2, 3, 1, 0}); the head's Linear weight is transposed; a batch
// norm's weight, bias, running_mean and running_var are gamma, beta,
// moving_mean and moving_variance, and its num_batches_tracked is skipped.
//
// The PyTorch module pads every 3x3 convolution by 1 on each side; gotrain's
// "same" padding agrees with it except for a stride-2 convolution of an
// even size, which it pads by 0 before and 1 after, as TensorFlow does. So
// the two compute the same only where each stage after the first gets an
// odd size (images of 9x9, 5x5, 25x25 for three stages).
func TorchNames(name string, c Config) nn.TensorMap {
	var m nn.TensorMap
	conv := func(torch, ours string) {
		m = append(m, nn.TensorRule{Tensor: torch + ".weight", Variable: ours + "/kernel", Permute: []int{2, 3, 1, 0}})
	}
	bn := func(torch, ours string) {
		m = append(m,
			nn.TensorRule{Tensor: torch + ".weight", Variable: ours + "/gamma"},
			nn.TensorRule{Tensor: torch + ".bias", Variable: ours + "/beta"},
			nn.TensorRule{Tensor: torch + ".running_mean", Variable: ours + "/moving_mean"},
			nn.TensorRule{Tensor: torch + ".running_var", Variable: ours + "/moving_variance"},
			nn.TensorRule{Tensor: torch + ".num_batches_tracked"})
	}
	conv("stem.0", name+"/stem")
	bn("stem.1", name+"/stem_bn")
	in, n := c.Widths[0], 0
	for s, w := range c.Widths {
		for i := range c.Blocks {
			torch, ours := fmt.Sprintf("body.%d.", n), fmt.Sprintf("%s/stage_%d/block_%d/", name, s, i)
			conv(torch+"c1", ours+"conv_1")
			bn(torch+"b1", ours+"bn_1")
			conv(torch+"c2", ours+"conv_2")
			bn(torch+"b2", ours+"bn_2")
			if (s > 0 && i == 0) || in != w { // New's rule for a projected shortcut
				conv(torch+"short.0", ours+"proj")
				bn(torch+"short.1", ours+"proj_bn")
			}
			in, n = w, n+1
		}
	}
	m = append(m,
		nn.TensorRule{Tensor: "head.weight", Variable: name + "/head/kernel", Permute: []int{1, 0}},
		nn.TensorRule{Tensor: "head.bias", Variable: name + "/head/bias"})
	return m
}
