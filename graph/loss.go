package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/gotrain/gotrain/internal/loops"
)

// The cross-entropy losses and their gradients.
var (
	opSparseXent      = newOp()
	opSoftmaxXent     = newOp()
	opSigmoidXent     = newOp()
	opSparseXentGrad  = newOp() // dlogits from labels, logits, dloss
	opSoftmaxXentGrad = newOp() // dlogits from labels, logits, dloss
	opXentLabelGrad   = newOp() // dlabels from logits, dloss
	opSigmoidXentGrad = newOp() // dlogits from labels, logits, dloss
)

func init() {
	defineOps(map[opKind]opDef{
		opSparseXent:      {name: "sparse_softmax_cross_entropy", cpu: cpu(sparseXentKernel, sparseXentKernel), grad: sparseXentOpGrad},
		opSoftmaxXent:     {name: "softmax_cross_entropy", cpu: cpu(softmaxXentKernel, softmaxXentKernel), grad: softmaxXentOpGrad},
		opSigmoidXent:     {name: "sigmoid_cross_entropy", cpu: cpu(sigmoidXentKernel, sigmoidXentKernel), grad: sigmoidXentOpGrad},
		opSparseXentGrad:  {name: "sparse_softmax_cross_entropy_grad", cpu: cpu(sparseXentGradKernel, sparseXentGradKernel), backward: true},
		opSoftmaxXentGrad: {name: "softmax_cross_entropy_grad", cpu: cpu(softmaxXentGradKernel, softmaxXentGradKernel), backward: true},
		opXentLabelGrad:   {name: "softmax_cross_entropy_label_grad", cpu: cpu(xentLabelGradKernel, xentLabelGradKernel), backward: true},
		opSigmoidXentGrad: {name: "sigmoid_cross_entropy_grad", cpu: cpu(sigmoidXentGradKernel, sigmoidXentGradKernel), backward: true},
	})
}

// SparseSoftmaxCrossEntropy returns, for logits [m,c] and labels [m] holding
// class ids as values, the per-example loss [m]:
// log Σⱼ exp(logits[i,j]) - logits[i,labels[i]]. Forward and backward are
// fused and stable. Labels get no gradient. A label outside [0,c) makes Run
// return an error.
// It panics with an error wrapping ErrShape if the shapes do not fit.
func SparseSoftmaxCrossEntropy(labels, logits *Node) *Node {
	const op = "sparse_softmax_cross_entropy"
	g := graphOf(op, labels, logits)
	if len(logits.shape) != 2 || len(labels.shape) != 1 || labels.shape[0] != logits.shape[0] {
		panic(shapeErr(g, op, fmt.Sprintf("want labels [m] and logits [m,c], got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSparseXent, labels.shape, labels, logits)
}

// SoftmaxCrossEntropy returns, for logits [m,c] and labels [m,c] holding
// probabilities, the per-example loss [m]: -Σⱼ labels[i,j]·logsoftmax(logits)[i,j].
// It panics with an error wrapping ErrShape if the shapes do not fit.
func SoftmaxCrossEntropy(labels, logits *Node) *Node {
	const op = "softmax_cross_entropy"
	g := graphOf(op, labels, logits)
	if len(logits.shape) != 2 || !slices.Equal(labels.shape, logits.shape) {
		panic(shapeErr(g, op, fmt.Sprintf("want labels and logits [m,c], got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSoftmaxXent, logits.shape[:1], labels, logits)
}

// SigmoidCrossEntropy returns elementwise max(x,0) - x·z + log(1+exp(-|x|))
// for logits x and labels z of equal shape: the binary cross-entropy of
// sigmoid(x) against z, computed stably.
// It panics with an error wrapping ErrShape if the shapes differ.
func SigmoidCrossEntropy(labels, logits *Node) *Node {
	const op = "sigmoid_cross_entropy"
	g := graphOf(op, labels, logits)
	if !slices.Equal(labels.shape, logits.shape) {
		panic(shapeErr(g, op, fmt.Sprintf("want labels and logits of equal shape, got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSigmoidXent, logits.shape, labels, logits)
}

// LabelError is the error Run returns (wrapped) when a sparse label is not a
// class id of the logits.
type LabelError struct {
	Row   int
	Label float64
	Class int // the number of classes
}

func (e *LabelError) Error() string {
	return fmt.Sprintf("graph: row %d: want a label in [0,%d), got %v", e.Row, e.Class, e.Label)
}

func sparseXentOpGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{nil, n.g.add(opSparseXentGrad, in[1].shape, in[0], in[1], dy)}
}

func softmaxXentOpGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	return []*Node{
		g.add(opXentLabelGrad, in[1].shape, in[1], dy),
		g.add(opSoftmaxXentGrad, in[1].shape, in[0], in[1], dy),
	}
}

func sigmoidXentOpGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{Mul(Neg(in[1]), dy), n.g.add(opSigmoidXentGrad, in[1].shape, in[0], in[1], dy)}
}

func sparseXentKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, c := in[0], in[1], n.in[1].shape[1]
	exps := make([]T, c)
	return func() { sparseXent(out, lab, x, exps, c) }
}

func softmaxXentKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, c := in[0], in[1], n.in[1].shape[1]
	return func() { softmaxXent(out, lab, x, c) }
}

func sigmoidXentKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	z, x := in[0], in[1]
	return func() {
		for i, v := range x {
			xf := float64(v)
			out[i] = T(math.Max(xf, 0) - xf*float64(z[i]) + math.Log1p(math.Exp(-math.Abs(xf))))
		}
	}
}

func sparseXentGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, dl, c := in[0], in[1], in[2], n.shape[1]
	return func() { sparseXentGrad(out, lab, x, dl, c) }
}

func softmaxXentGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, dl, c := in[0], in[1], in[2], n.shape[1]
	return func() { softmaxXentGrad(out, lab, x, dl, c) }
}

func xentLabelGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dl, c := in[0], in[1], n.shape[1]
	return func() { xentLabelGrad(out, x, dl, c) }
}

func sigmoidXentGradKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	z, x, dl := in[0], in[1], in[2]
	return func() {
		for i, v := range x {
			out[i] = (sigmoid(v) - z[i]) * dl[i]
		}
	}
}

// rowLSE returns max and log Σ exp(row - max) + max.
func rowLSE[T Float](row []T) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(s)
}

func classOf[T Float](l T, row, c int) int {
	k := int(l)
	if T(k) != l || k < 0 || k >= c {
		panic(&LabelError{Row: row, Label: float64(l), Class: c})
	}
	return k
}

// sparseXent is: out[i] = lse(x[i,:]) - x[i,lab[i]], the exponentials
// as softmaxRows takes them (exps: scratch of c).
func sparseXent[T Float](out, lab, x, exps []T, c int) {
	for i := range out {
		row := x[i*c : (i+1)*c]
		k := classOf(lab[i], i, c)
		mx := loops.Max(row)
		lse := float64(mx) + math.Log(float64(loops.ExpSubTo(exps, row, mx)))
		out[i] = T(lse - float64(row[k]))
	}
}

// sparseXentGrad is: out[i,j] = (softmax(x[i,:])[j] - [j == lab[i]]) · dl[i],
// the softmax's exponentials as softmaxRows takes them: a float32 GPT's
// logits are [batch·steps, vocab], and math.Exp was 2-3% of its step.
// The CUDA kernel (gt_sparse_xent_grad) computes in double.
func sparseXentGrad[T Float](out, lab, x, dl []T, c int) {
	for i := range dl {
		row, o := x[i*c:(i+1)*c], out[i*c:(i+1)*c]
		k := classOf(lab[i], i, c)
		d := float64(dl[i])
		scale := d / float64(loops.ExpSubTo(o, row, loops.Max(row)))
		for j, e := range o {
			o[j] = T(float64(e) * scale)
		}
		o[k] -= T(d)
	}
}

// softmaxXent is: out[i] = Σⱼ lab[i,j] · (lse(x[i,:]) - x[i,j]).
func softmaxXent[T Float](out, lab, x []T, c int) {
	for i := range out {
		row, l := x[i*c:(i+1)*c], lab[i*c:(i+1)*c]
		lse := rowLSE(row)
		var s float64
		for j, v := range row {
			s += float64(l[j]) * (lse - float64(v))
		}
		out[i] = T(s)
	}
}

// softmaxXentGrad is: out[i,j] = (softmax(x[i,:])[j]·Σₖ lab[i,k] - lab[i,j]) · dl[i].
func softmaxXentGrad[T Float](out, lab, x, dl []T, c int) {
	for i := range dl {
		row, l, o := x[i*c:(i+1)*c], lab[i*c:(i+1)*c], out[i*c:(i+1)*c]
		lse := rowLSE(row)
		var sl float64
		for _, v := range l {
			sl += float64(v)
		}
		d := float64(dl[i])
		for j, v := range row {
			o[j] = T((math.Exp(float64(v)-lse)*sl - float64(l[j])) * d)
		}
	}
}

// xentLabelGrad is: out[i,j] = (lse(x[i,:]) - x[i,j]) · dl[i].
func xentLabelGrad[T Float](out, x, dl []T, c int) {
	for i := range dl {
		row, o := x[i*c:(i+1)*c], out[i*c:(i+1)*c]
		lse := rowLSE(row)
		d := float64(dl[i])
		for j, v := range row {
			o[j] = T((lse - float64(v)) * d)
		}
	}
}
