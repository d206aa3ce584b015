//go:build !noasm

#include "textflag.h"

// The ReLU loops of the dense layers. Each gives the bits of its Go loop in
// activation.go.

// func reluGradAVX32(out, y, dy []float32)
// out[i] = dy[i] where y[i]'s bits are positive as an int32, else 0.
TEXT ·reluGradAVX32(SB), NOSPLIT, $0-72
	MOVQ    out_base+0(FP), DI
	MOVQ    y_base+24(FP), SI
	MOVQ    y_len+32(FP), CX
	MOVQ    dy_base+48(FP), DX
	VPXOR   Y1, Y1, Y1
	SHRQ    $3, CX
	JZ      gdone32

gloop32:
	VMOVDQU  (SI), Y0
	VPCMPGTD Y1, Y0, Y0 // all ones where y > 0 as an integer
	VPAND    (DX), Y0, Y0
	VMOVDQU  Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	DECQ     CX
	JNZ      gloop32

gdone32:
	VZEROUPPER
	RET

// func reluGradAVX64(out, y, dy []float64)
TEXT ·reluGradAVX64(SB), NOSPLIT, $0-72
	MOVQ    out_base+0(FP), DI
	MOVQ    y_base+24(FP), SI
	MOVQ    y_len+32(FP), CX
	MOVQ    dy_base+48(FP), DX
	VPXOR   Y1, Y1, Y1
	SHRQ    $2, CX
	JZ      gdone64

gloop64:
	VMOVDQU  (SI), Y0
	VPCMPGTQ Y1, Y0, Y0
	VPAND    (DX), Y0, Y0
	VMOVDQU  Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	DECQ     CX
	JNZ      gloop64

gdone64:
	VZEROUPPER
	RET

// func addReLUAVX32(dst, a, b []float32)
// dst[i] = max(a[i]+b[i], 0) with Go's max: a NaN stays NaN and -0 becomes
// +0. VMAXPS returns its second source when the first is not greater, so
// with zero first a NaN passes; adding +0 then turns -0 into +0 and leaves
// every other value as it is.
TEXT ·addReLUAVX32(SB), NOSPLIT, $0-72
	MOVQ   dst_base+0(FP), DI
	MOVQ   a_base+24(FP), SI
	MOVQ   a_len+32(FP), CX
	MOVQ   b_base+48(FP), DX
	VXORPS Y1, Y1, Y1
	SHRQ   $3, CX
	JZ     rdone32

rloop32:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMAXPS  Y0, Y1, Y0
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     rloop32

rdone32:
	VZEROUPPER
	RET

// func addReLUAVX64(dst, a, b []float64)
TEXT ·addReLUAVX64(SB), NOSPLIT, $0-72
	MOVQ   dst_base+0(FP), DI
	MOVQ   a_base+24(FP), SI
	MOVQ   a_len+32(FP), CX
	MOVQ   b_base+48(FP), DX
	VXORPD Y1, Y1, Y1
	SHRQ   $2, CX
	JZ     rdone64

rloop64:
	VMOVUPD (SI), Y0
	VADDPD  (DX), Y0, Y0
	VMAXPD  Y0, Y1, Y0
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     rloop64

rdone64:
	VZEROUPPER
	RET
