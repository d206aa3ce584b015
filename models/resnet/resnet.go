package resnet

import (
	"fmt"

	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// Config is a ResNet's shape.
type Config struct {
	Classes       int     // logits
	Widths        []int   // channels of each stage; a stage after the first halves the image
	Blocks        int     // basic blocks per stage
	StemStride    int     // the stem convolution's stride: 2 quarters the work of what follows
	SyncBatchNorm bool    // batch statistics over every replica (nn.SyncBatchStats)
	Momentum      float64 // of the batch norms' moving averages; 0 means Keras's 0.99
}

// Small is the network: 3 stages of 2 blocks, 16, 32 and 64 wide,
// a stem of stride 1, synchronized batch norm.
func Small(classes int) Config {
	return Config{Classes: classes, Widths: []int{16, 32, 64}, Blocks: 2, StemStride: 1, SyncBatchNorm: true}
}

// Validate reports what is wrong with c, naming the fields.
func (c Config) Validate() error {
	switch {
	case c.Classes < 1 || c.Blocks < 1 || c.StemStride < 1:
		return fmt.Errorf("resnet: want Classes, Blocks and StemStride ≥ 1, got %d, %d and %d", c.Classes, c.Blocks, c.StemStride)
	case len(c.Widths) == 0:
		return fmt.Errorf("resnet: want at least one stage in Widths, got none")
	case !(c.Momentum >= 0 && c.Momentum <= 1):
		return fmt.Errorf("resnet: want Momentum in [0, 1], got %v", c.Momentum)
	}
	for i, w := range c.Widths {
		if w < 1 {
			return fmt.Errorf("resnet: want Widths ≥ 1, got %d for stage %d", w, i)
		}
	}
	return nil
}

// Block is a basic residual block: relu(shortcut(x) + bn2(conv2(relu(bn1(conv1(x)))))),
// the shortcut x itself, or a 1x1 convolution and batch norm where the
// block changes the shape.
type Block struct {
	conv1, conv2 *nn.Conv2DLayer
	bn1, bn2     *nn.BatchNormalizationLayer
	proj         *nn.Conv2DLayer             // nil when the shapes agree
	projBN       *nn.BatchNormalizationLayer // nil when the shapes agree
}

// Call implements nn.Model. The ReLUs and the join run in the batch norms'
// normalizing passes (nn.BatchNormalizationLayer.CallAct).
func (b *Block) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	h := b.bn1.CallAct(ctx, b.conv1.Call(ctx, x, training), nil, nn.ReLU, training)
	shortcut := x
	if b.proj != nil {
		shortcut = b.projBN.Call(ctx, b.proj.Call(ctx, x, training), training)
	}
	return b.bn2.CallAct(ctx, b.conv2.Call(ctx, h, training), shortcut, nn.ReLU, training)
}

// Variables implements nn.Model.
func (b *Block) Variables() []*nn.Variable {
	parts := []nn.VariableSource{b.conv1, b.bn1, b.conv2, b.bn2}
	if b.proj != nil {
		parts = append(parts, b.proj, b.projBN)
	}
	return nn.VariablesOf(parts...)
}

// ResNet is the model: Call maps NHWC images [batch, h, w, channels] to
// logits [batch, classes].
type ResNet struct {
	cfg    Config
	stem   *nn.Conv2DLayer
	stemBN *nn.BatchNormalizationLayer
	blocks []*Block
	pool   *nn.GlobalAveragePooling2DLayer
	head   *nn.DenseLayer
}

// New returns a ResNet of configuration c, its variables made at its first
// Call: create it inside a strategy's Scope. Its variables are named
// name/stem/kernel, name/stage_1/block_0/conv_1/kernel,
// name/stage_1/block_0/proj/kernel, name/head/kernel, and so on. It returns
// the error of c.Validate.
func New(name string, c Config) (*ResNet, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.Widths = append([]int(nil), c.Widths...)
	bn := func(path string) *nn.BatchNormalizationLayer {
		opts := []nn.LayerOption{nn.Named(path)}
		if c.SyncBatchNorm {
			opts = append(opts, nn.SyncBatchStats())
		}
		if c.Momentum > 0 {
			opts = append(opts, nn.BatchNormMomentum(c.Momentum))
		}
		return nn.BatchNormalization(opts...)
	}
	conv := func(path string, width, size, stride int) *nn.Conv2DLayer {
		return nn.Conv2D(width, size, nn.Named(path), nn.WithStrides(stride, stride), nn.WithPadding(nn.Same), nn.WithoutBias())
	}
	m := &ResNet{
		cfg:    c,
		stem:   conv(name+"/stem", c.Widths[0], 3, c.StemStride),
		stemBN: bn(name + "/stem_bn"),
		pool:   nn.GlobalAveragePooling2D(nn.Named(name + "/pool")),
		head:   nn.Dense(c.Classes, nn.Named(name+"/head")),
	}
	in := c.Widths[0]
	for s, w := range c.Widths {
		for i := range c.Blocks {
			p := fmt.Sprintf("%s/stage_%d/block_%d/", name, s, i)
			stride := 1
			if s > 0 && i == 0 {
				stride = 2
			}
			b := &Block{
				conv1: conv(p+"conv_1", w, 3, stride),
				bn1:   bn(p + "bn_1"),
				conv2: conv(p+"conv_2", w, 3, 1),
				bn2:   bn(p + "bn_2"),
			}
			if stride != 1 || in != w {
				b.proj, b.projBN = conv(p+"proj", w, 1, stride), bn(p+"proj_bn")
			}
			m.blocks = append(m.blocks, b)
			in = w
		}
	}
	return m, nil
}

// Config returns the model's configuration.
func (m *ResNet) Config() Config { return m.cfg }

// Call returns the logits [batch, classes] of images x [batch, h, w,
// channels]. It panics with an error wrapping nn.ErrShape if x is not an
// NHWC batch (the stem names its shape).
func (m *ResNet) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	h := m.stemBN.CallAct(ctx, m.stem.Call(ctx, x, training), nil, nn.ReLU, training)
	for _, b := range m.blocks {
		h = b.Call(ctx, h, training)
	}
	return m.head.Call(ctx, m.pool.Call(ctx, h, training), training)
}

// Variables implements nn.Model.
func (m *ResNet) Variables() []*nn.Variable {
	parts := []nn.VariableSource{m.stem, m.stemBN}
	for _, b := range m.blocks {
		parts = append(parts, b)
	}
	return nn.VariablesOf(append(parts, m.pool, m.head)...)
}
