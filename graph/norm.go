package graph

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/internal/loops"
)

// The layer and RMS norm ops.
var (
	opNormStats     = newOp() // per row of the last axis: mean (0 for RMS) and 1/σ
	opNorm          = newOp() // (x-mean)·(1/σ)·γ + β per row, from x and its stats
	opNormGrad      = newOp() // dx of a norm from x, its stats, dy and γ
	opNormGammaGrad = newOp() // dγ = Σ_rows dy·(x-mean)·(1/σ)
)

func init() {
	defineOps(map[opKind]opDef{
		opNormStats:     {name: "norm_stats", cpu: cpu(normStatsKernel, normStatsKernel), stopsGradient: true},
		opNorm:          {name: "norm", cpu: cpu(normKernel, normKernel), grad: normGrad},
		opNormGrad:      {name: "norm_grad", cpu: cpu(normGradKernel, normGradKernel), backward: true},
		opNormGammaGrad: {name: "norm_gamma_grad", cpu: cpu(normGammaGradKernel, normGammaGradKernel), backward: true},
	})
}

// normDef defines a LayerNorm or RMSNorm node, its statistics and its
// gradients, which share it. Immutable.
type normDef struct {
	eps         float64 // added to the variance (mean square for RMS)
	rms         bool    // RMSNorm: no mean is subtracted
	gamma, beta bool    // the norm node's inputs after x and its statistics: γ, then β
}

// LayerNorm returns x normalised over its last axis, per row, then scaled
// by gamma and shifted by beta:
//
//	y = (x - mean)/√(var + eps)·γ + β
//
// with the mean and the (biased) variance of the row, accumulated in
// float64. gamma and beta have shape [c] for a last axis of c; either may
// be nil (no scale, no shift). The forward pass keeps each row's mean and
// 1/σ in a statistics node, which the backward pass reads: dx comes from
// one kernel per row, dγ from one pass over the rows, dβ is Σ dy.
// It panics with an error wrapping ErrShape if x is a scalar, gamma or beta
// is not [c], or eps is negative or NaN.
func LayerNorm(x, gamma, beta *Node, eps float64) *Node {
	return norm("layer_norm", x, gamma, beta, eps, false)
}

// RMSNorm returns x divided by its root mean square over the last axis,
// per row, then scaled by gamma:
//
//	y = x/√(mean(x²) + eps)·γ
//
// gamma has shape [c] for a last axis of c, or is nil. The statistics and
// gradients are LayerNorm's, without the mean.
// It panics with an error wrapping ErrShape if x is a scalar, gamma is not
// [c], or eps is negative or NaN.
func RMSNorm(x, gamma *Node, eps float64) *Node {
	return norm("rms_norm", x, gamma, nil, eps, true)
}

func norm(op string, x, gamma, beta *Node, eps float64, rms bool) *Node {
	ns := []*Node{x}
	for _, p := range []*Node{gamma, beta} {
		if p != nil {
			ns = append(ns, p)
		}
	}
	g := graphOf(op, ns...)
	r := len(x.shape)
	if r == 0 {
		panic(shapeErr(g, op, "want at least one axis, got a scalar"))
	}
	c := x.shape[r-1]
	for _, p := range []struct {
		name string
		n    *Node
	}{{"gamma", gamma}, {"beta", beta}} {
		if p.n != nil && (len(p.n.shape) != 1 || p.n.shape[0] != c) {
			panic(shapeErr(g, op, fmt.Sprintf("want %s of shape [%d] for x %v, got %v", p.name, c, x.shape, p.n.shape)))
		}
	}
	if !(eps >= 0) {
		panic(shapeErr(g, op, fmt.Sprintf("want eps ≥ 0, got %v", eps)))
	}
	def := &normDef{eps: eps, rms: rms, gamma: gamma != nil, beta: beta != nil}
	stats := g.add(opNormStats, []int{sizeOf(x.shape[:r-1]), 3}, x)
	stats.norm = def
	out := g.add(opNorm, x.shape, append([]*Node{x, stats}, ns[1:]...)...)
	out.norm = def
	return out
}

// normGrad gives x the full gradient, through the statistics too, so the
// statistics node stops gradients.
func normGrad(n, dy *Node) []*Node {
	g, x, stats, def := n.g, n.in[0], n.in[1], n.norm
	in := []*Node{x, stats, dy}
	if def.gamma {
		in = append(in, n.in[2])
	}
	dx := g.add(opNormGrad, x.shape, in...)
	dx.norm = def
	out := []*Node{dx, nil}
	c := x.shape[len(x.shape)-1]
	if def.gamma {
		dg := g.add(opNormGammaGrad, []int{c}, x, stats, dy)
		dg.norm = def
		out = append(out, dg)
	}
	if def.beta {
		out = append(out, SumAxis(Reshape(dy, stats.shape[0], c), 0))
	}
	return out
}

// The CPU kernels of the norm ops; each is a kernelFunc. Keep in sync with
// normSrc (norm_cuda.go).

func normStatsKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c, def := in[0], n.in[0].shape[len(n.in[0].shape)-1], *n.norm
	return func() { normStats(out, x, c, def.eps, def.rms) }
}

// normStats is, per row of c: the mean (0 for RMS) as out[3r] + out[3r+1]
// and out[3r+2] = 1/√(Σ(x-mean)²/c + eps), the sums taken by
// loops.Sum and loops.SumSqDev in float64. The mean is kept as
// two T: a float32 mean of 1000 would otherwise be off by 3e-5, a large
// error in x - mean when the row's spread is small.
func normStats[T Float](out, x []T, c int, eps float64, rms bool) {
	for r := 0; r < len(out)/3; r++ {
		row := x[r*c : (r+1)*c]
		var mean float64
		if !rms {
			mean = loops.Sum(row) / float64(c)
		}
		ss := loops.SumSqDev(row, mean)
		hi := T(mean)
		out[3*r], out[3*r+1] = hi, T(mean-float64(hi))
		out[3*r+2] = T(1 / math.Sqrt(ss/float64(c)+eps))
	}
}

// rowStats returns row r's mean and 1/σ from its statistics.
func rowStats[T Float](st []T, r int) (mean, rstd float64) {
	return float64(st[3*r]) + float64(st[3*r+1]), float64(st[3*r+2])
}

func normKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, st, c := in[0], in[1], n.shape[len(n.shape)-1]
	var gamma, beta []T
	if n.norm.gamma {
		gamma = in[2]
	}
	if n.norm.beta {
		beta = in[len(in)-1]
	}
	return func() { normRows(out, x, st, gamma, beta, c) }
}

// normRows is loops.NormTo per row: y = ((x - mean)·rstd)·γ + β, γ and
// β left out where nil, in float64.
func normRows[T Float](out, x, st, gamma, beta []T, c int) {
	for r := 0; r < len(st)/3; r++ {
		mean, rstd := rowStats(st, r)
		loops.NormTo(out[r*c:(r+1)*c], x[r*c:(r+1)*c], gamma, beta, mean, rstd)
	}
}

func normGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, st, dy, c, rms := in[0], in[1], in[2], n.shape[len(n.shape)-1], n.norm.rms
	var gamma []T
	if n.norm.gamma {
		gamma = in[3]
	}
	return func() { normGradRows(out, x, st, dy, gamma, c, rms) }
}

// normGradRows is, per row, with x̂ = (x - mean)·rstd and g = dy·γ:
//
//	dx = rstd·(g - mean(g) - x̂·mean(g·x̂))
//
// without the mean(g) term for RMS: the sums from loops.NormGradSums,
// dx from loops.NormGradTo, in float64.
func normGradRows[T Float](out, x, st, dy, gamma []T, c int, rms bool) {
	for r := 0; r < len(st)/3; r++ {
		mean, rstd := rowStats(st, r)
		row, dr := x[r*c:(r+1)*c], dy[r*c:(r+1)*c]
		sg, sgx := loops.NormGradSums(row, dr, gamma, mean, rstd)
		mg, mgx := sg/float64(c), sgx/float64(c)
		if rms {
			mg = 0
		}
		loops.NormGradTo(out[r*c:(r+1)*c], row, dr, gamma, mean, rstd, mg, mgx)
	}
}

func normGammaGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, st, dy := in[0], in[1], in[2]
	acc := make([]float64, n.size)
	return func() { normGammaGrad(out, x, st, dy, acc) }
}

// normGammaGrad is: out[j] = Σ_r dy[r,j]·((x[r,j] - mean_r)·rstd_r), summed
// over the rows in order in float64 (acc, scratch of len(out)) by
// loops.NormGammaGradAdd.
func normGammaGrad[T Float](out, x, st, dy []T, acc []float64) {
	c := len(out)
	clear(acc)
	for r := 0; r < len(st)/3; r++ {
		mean, rstd := rowStats(st, r)
		loops.NormGammaGradAdd(acc, x[r*c:(r+1)*c], dy[r*c:(r+1)*c], mean, rstd)
	}
	for j, v := range acc {
		out[j] = T(v)
	}
}
