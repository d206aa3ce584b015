// Package resnet is a small residual network for images, written with nn
// and graph the way a user writes one in a notebook: a Go struct of its
// parts with Call and Variables, each residual join an nn.Add. It is the
// model of gotrain bench resnet, of the equivalence tests, and the
// reference for notebooks/07-resnet.ipynb, which writes the same model in
// cells.
//
// The architecture is He et al.'s CIFAR ResNet at its smallest: a 3x3
// convolution stem (stride StemStride), len(Widths) stages of Blocks basic
// blocks (two 3x3 convolutions, each followed by batch normalization, the
// first by a ReLU), the first block of each stage after the first halving
// the image with stride 2, a 1x1 convolution projecting the shortcut where
// the block changes the shape, a ReLU after each join, global average
// pooling and a dense layer to the class logits. Convolutions before a
// batch normalization have no bias. The ReLUs and the joins run inside the
// batch normalizations' normalizing passes (BatchNormalizationLayer.CallAct).
//
// # Use
//
//	s.Scope(func() { model, err = resnet.New("resnet", resnet.Small(10)) })
//	logits := model.Call(ctx, images, true) // in a step function: [batch, classes]
//
// New refuses a configuration with no stage, a width, block count or stem
// stride below 1, naming the field. With SyncBatchNorm the batch
// statistics are taken over every replica's real rows, so N replicas train
// as one does (the equivalence test checks 1, 2 and 3 replicas).
package resnet
