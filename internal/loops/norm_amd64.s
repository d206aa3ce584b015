//go:build !noasm

#include "textflag.h"

// The float32 row loops of norm.go, 4 elements a step widened to 4 float64
// lanes (VCVTPS2PD), with the Go loops' operations in their order and no
// fused multiply-add, so both give the same bits. Keep in sync with norm.go.

// func laneSumAVX32(x []float32, acc *[4]float64)
TEXT ·laneSumAVX32(SB), NOSPLIT, $0-32
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	MOVQ    acc+24(FP), DI
	VMOVUPD (DI), Y0
	SHRQ    $2, CX
	JZ      sumdone

sumloop:
	VCVTPS2PD (SI), Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $16, SI
	DECQ      CX
	JNZ       sumloop

sumdone:
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET

// func laneSumSqDevAVX32(x []float32, mean float64, acc *[4]float64)
TEXT ·laneSumSqDevAVX32(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSD mean+24(FP), Y2
	MOVQ         acc+32(FP), DI
	VMOVUPD      (DI), Y0
	SHRQ         $2, CX
	JZ           sqdone

sqloop:
	VCVTPS2PD (SI), Y1
	VSUBPD    Y2, Y1, Y1 // d = x - mean
	VMULPD    Y1, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $16, SI
	DECQ      CX
	JNZ       sqloop

sqdone:
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET

// func normGradSumsAVX32(x, dy, gamma []float32, mean, rstd float64, acc *[8]float64)
TEXT ·normGradSumsAVX32(SB), NOSPLIT, $0-96
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	MOVQ         dy_base+24(FP), DX
	MOVQ         gamma_base+48(FP), R8
	VBROADCASTSD mean+72(FP), Y4
	VBROADCASTSD rstd+80(FP), Y5
	MOVQ         acc+88(FP), DI
	VMOVUPD      (DI), Y0   // Σ g
	VMOVUPD      32(DI), Y1 // Σ g·x̂
	SHRQ         $2, CX
	JZ           gsdone

gsloop:
	VCVTPS2PD (SI), Y2
	VSUBPD    Y4, Y2, Y2
	VMULPD    Y5, Y2, Y2 // x̂ = (x - mean)·rstd
	VCVTPS2PD (DX), Y3
	VCVTPS2PD (R8), Y6
	VMULPD    Y6, Y3, Y3 // g = dy·γ
	VADDPD    Y3, Y0, Y0
	VMULPD    Y2, Y3, Y3
	VADDPD    Y3, Y1, Y1
	ADDQ      $16, SI
	ADDQ      $16, DX
	ADDQ      $16, R8
	DECQ      CX
	JNZ       gsloop

gsdone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VZEROUPPER
	RET

// func normAVX32(dst, x, gamma, beta []float32, mean, rstd float64)
// beta is nil where the norm has no β.
TEXT ·normAVX32(SB), NOSPLIT, $0-112
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         gamma_base+48(FP), R8
	MOVQ         beta_base+72(FP), R9
	VBROADCASTSD mean+96(FP), Y4
	VBROADCASTSD rstd+104(FP), Y5
	SHRQ         $2, CX
	JZ           ndone
	TESTQ        R9, R9
	JZ           nloopnobeta

nloop:
	VCVTPS2PD  (SI), Y0
	VSUBPD     Y4, Y0, Y0
	VMULPD     Y5, Y0, Y0 // (x - mean)·rstd
	VCVTPS2PD  (R8), Y1
	VMULPD     Y1, Y0, Y0 // ·γ
	VCVTPS2PD  (R9), Y1
	VADDPD     Y1, Y0, Y0 // + β
	VCVTPD2PSY Y0, X0
	VMOVUPS    X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, R8
	ADDQ       $16, R9
	ADDQ       $16, DI
	DECQ       CX
	JNZ        nloop
	JMP        ndone

nloopnobeta:
	VCVTPS2PD  (SI), Y0
	VSUBPD     Y4, Y0, Y0
	VMULPD     Y5, Y0, Y0 // (x - mean)·rstd
	VCVTPS2PD  (R8), Y1
	VMULPD     Y1, Y0, Y0 // ·γ
	VCVTPD2PSY Y0, X0
	VMOVUPS    X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, R8
	ADDQ       $16, DI
	DECQ       CX
	JNZ        nloopnobeta

ndone:
	VZEROUPPER
	RET

// func normGradAVX32(dst, x, dy, gamma []float32, mean, rstd, mg, mgx float64)
TEXT ·normGradAVX32(SB), NOSPLIT, $0-128
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         dy_base+48(FP), DX
	MOVQ         gamma_base+72(FP), R8
	VBROADCASTSD mean+96(FP), Y4
	VBROADCASTSD rstd+104(FP), Y5
	VBROADCASTSD mg+112(FP), Y6
	VBROADCASTSD mgx+120(FP), Y7
	SHRQ         $2, CX
	JZ           gdone

gloop:
	VCVTPS2PD  (SI), Y0
	VSUBPD     Y4, Y0, Y0
	VMULPD     Y5, Y0, Y0 // x̂
	VMULPD     Y7, Y0, Y0 // x̂·mgx
	VCVTPS2PD  (DX), Y1
	VCVTPS2PD  (R8), Y2
	VMULPD     Y2, Y1, Y1 // g = dy·γ
	VSUBPD     Y6, Y1, Y1 // g - mg
	VSUBPD     Y0, Y1, Y1 // - x̂·mgx
	VMULPD     Y1, Y5, Y1 // rstd·(...)
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DX
	ADDQ       $16, R8
	ADDQ       $16, DI
	DECQ       CX
	JNZ        gloop

gdone:
	VZEROUPPER
	RET

// func normGammaGradAVX32(acc []float64, x, dy []float32, mean, rstd float64)
TEXT ·normGammaGradAVX32(SB), NOSPLIT, $0-88
	MOVQ         acc_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         dy_base+48(FP), DX
	VBROADCASTSD mean+72(FP), Y4
	VBROADCASTSD rstd+80(FP), Y5
	SHRQ         $2, CX
	JZ           ggdone

ggloop:
	VCVTPS2PD (SI), Y0
	VSUBPD    Y4, Y0, Y0
	VMULPD    Y5, Y0, Y0 // x̂ = (x - mean)·rstd
	VCVTPS2PD (DX), Y1
	VMULPD    Y0, Y1, Y1 // dy·x̂
	VADDPD    (DI), Y1, Y1
	VMOVUPD   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $16, DX
	ADDQ      $32, DI
	DECQ      CX
	JNZ       ggloop

ggdone:
	VZEROUPPER
	RET
