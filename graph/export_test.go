package graph

// MatMulT builds the transposed products Gradients uses, so they can be
// checked directly.
var MatMulT = matMul
