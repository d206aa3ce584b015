//go:build !noasm

#include "textflag.h"

// The batch norm loops of batchnorm.go on float32 pixels whose channel
// count c is a multiple of 8 (of 4 for bnSumsAVX32): per pixel, the
// channels 8 at a time against the per-channel vectors at the same
// offset. Each gives the bits of its Go loop (bnNormAVX32 up to the sign
// of a zero); keep in sync with batchnorm.go.

// func bnNormAVX32(dst, x, res, mean, a, beta []float32, floor float32)
// dst = max(((x - mean)·a + beta) + res, floor) + 0, res left out when
// empty; floor is 0 for a ReLU, -Inf for none. VMAXPS with floor first
// passes a NaN, and adding +0 turns -0 into +0 as Go's max does.
TEXT ·bnNormAVX32(SB), NOSPLIT, $0-148
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         res_base+48(FP), DX
	MOVQ         res_len+56(FP), BX
	MOVQ         mean_base+72(FP), R8
	MOVQ         mean_len+80(FP), R13
	MOVQ         a_base+96(FP), R9
	MOVQ         beta_base+120(FP), R10
	VBROADCASTSS floor+144(FP), Y2
	VXORPS       Y1, Y1, Y1
	SHLQ         $2, R13
	LEAQ         (SI)(CX*4), R14
	TESTQ        BX, BX
	JZ           nouter

router:
	CMPQ SI, R14
	JAE  ndone
	XORQ R12, R12

rinner:
	VMOVUPS (SI), Y0
	VSUBPS  (R8)(R12*1), Y0, Y0
	VMULPS  (R9)(R12*1), Y0, Y0
	VADDPS  (R10)(R12*1), Y0, Y0
	VADDPS  (DX), Y0, Y0
	VMAXPS  Y0, Y2, Y0
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	ADDQ    $32, R12
	CMPQ    R12, R13
	JB      rinner
	JMP     router

nouter:
	CMPQ SI, R14
	JAE  ndone
	XORQ R12, R12

ninner:
	VMOVUPS (SI), Y0
	VSUBPS  (R8)(R12*1), Y0, Y0
	VMULPS  (R9)(R12*1), Y0, Y0
	VADDPS  (R10)(R12*1), Y0, Y0
	VMAXPS  Y0, Y2, Y0
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R12
	CMPQ    R12, R13
	JB      ninner
	JMP     nouter

ndone:
	VZEROUPPER
	RET

// func bnGradSumsAVX32(sdz, sdzx []float64, x, dy, y, mean []float32)
// sdz += dz, sdzx += dz·(x - mean) in float64, dz = dy masked to y > 0
// (y's bits as an int32, as ReLUGrad) unless y is empty.
TEXT ·bnGradSumsAVX32(SB), NOSPLIT, $0-144
	MOVQ  sdz_base+0(FP), R10
	MOVQ  sdzx_base+24(FP), R11
	MOVQ  x_base+48(FP), SI
	MOVQ  x_len+56(FP), CX
	MOVQ  dy_base+72(FP), DX
	MOVQ  y_base+96(FP), BX
	MOVQ  y_len+104(FP), AX
	MOVQ  mean_base+120(FP), R8
	MOVQ  mean_len+128(FP), R13
	VPXOR Y1, Y1, Y1
	SHLQ  $2, R13
	LEAQ  (SI)(CX*4), R14

souter:
	CMPQ SI, R14
	JAE  sdone
	XORQ R12, R12

sinner:
	VMOVUPS (DX), Y3
	TESTQ   AX, AX
	JZ      snomask
	VMOVDQU (BX), Y4
	VPCMPGTD Y1, Y4, Y4
	VPAND   Y4, Y3, Y3
	ADDQ    $32, BX

snomask:
	VMOVUPS      (SI), Y0
	VSUBPS       (R8)(R12*1), Y0, Y0 // x - mean, in float32
	VCVTPS2PD    X3, Y5
	VCVTPS2PD    X0, Y6
	VMULPD       Y5, Y6, Y6
	VADDPD       (R10)(R12*2), Y5, Y5
	VMOVUPD      Y5, (R10)(R12*2)
	VADDPD       (R11)(R12*2), Y6, Y6
	VMOVUPD      Y6, (R11)(R12*2)
	VEXTRACTF128 $1, Y3, X3
	VEXTRACTF128 $1, Y0, X0
	VCVTPS2PD    X3, Y5
	VCVTPS2PD    X0, Y6
	VMULPD       Y5, Y6, Y6
	VADDPD       32(R10)(R12*2), Y5, Y5
	VMOVUPD      Y5, 32(R10)(R12*2)
	VADDPD       32(R11)(R12*2), Y6, Y6
	VMOVUPD      Y6, 32(R11)(R12*2)
	ADDQ         $32, SI
	ADDQ         $32, DX
	ADDQ         $32, R12
	CMPQ         R12, R13
	JB           sinner
	JMP          souter

sdone:
	VZEROUPPER
	RET

// func bnGradAVX32(dst, x, dy, y, mean, k, ka, kb []float32, w float32)
// dst = k·dz - w·(ka + kb·(x - mean)), dz as in bnGradSumsAVX32.
TEXT ·bnGradAVX32(SB), NOSPLIT, $0-196
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         dy_base+48(FP), DX
	MOVQ         y_base+72(FP), BX
	MOVQ         y_len+80(FP), AX
	MOVQ         mean_base+96(FP), R8
	MOVQ         mean_len+104(FP), R13
	MOVQ         k_base+120(FP), R9
	MOVQ         ka_base+144(FP), R10
	MOVQ         kb_base+168(FP), R11
	VBROADCASTSS w+192(FP), Y2
	VPXOR        Y1, Y1, Y1
	SHLQ         $2, R13
	LEAQ         (SI)(CX*4), R14

gouter:
	CMPQ SI, R14
	JAE  gdone
	XORQ R12, R12

ginner:
	VMOVUPS (DX), Y3
	TESTQ   AX, AX
	JZ      gnomask
	VMOVDQU (BX), Y4
	VPCMPGTD Y1, Y4, Y4
	VPAND   Y4, Y3, Y3
	ADDQ    $32, BX

gnomask:
	VMOVUPS (SI), Y0
	VSUBPS  (R8)(R12*1), Y0, Y0
	VMULPS  (R11)(R12*1), Y0, Y0
	VADDPS  (R10)(R12*1), Y0, Y0
	VMULPS  Y2, Y0, Y0
	VMULPS  (R9)(R12*1), Y3, Y3
	VSUBPS  Y0, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	ADDQ    $32, R12
	CMPQ    R12, R13
	JB      ginner
	JMP     gouter

gdone:
	VZEROUPPER
	RET

// func bnSumsAVX32(sum, sq []float64, w float64, x []float32)
// sum += w·f, sq += (w·f)·f for f = float64(x), c = len(sum) a multiple of 4.
TEXT ·bnSumsAVX32(SB), NOSPLIT, $0-80
	MOVQ         sum_base+0(FP), R10
	MOVQ         sum_len+8(FP), R13
	MOVQ         sq_base+24(FP), R11
	VBROADCASTSD w+48(FP), Y2
	MOVQ         x_base+56(FP), SI
	MOVQ         x_len+64(FP), CX
	SHLQ         $2, R13
	LEAQ         (SI)(CX*4), R14

mouter:
	CMPQ SI, R14
	JAE  mdone
	XORQ R12, R12

minner:
	VCVTPS2PD (SI), Y0
	VMULPD    Y2, Y0, Y3
	VMULPD    Y0, Y3, Y4
	VADDPD    (R10)(R12*2), Y3, Y3
	VMOVUPD   Y3, (R10)(R12*2)
	VADDPD    (R11)(R12*2), Y4, Y4
	VMOVUPD   Y4, (R11)(R12*2)
	ADDQ      $16, SI
	ADDQ      $16, R12
	CMPQ      R12, R13
	JB        minner
	JMP       mouter

mdone:
	VZEROUPPER
	RET
