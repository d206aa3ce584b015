//go:build !noasm

#include "textflag.h"

// Element-wise sums, 32 bytes a step: one IEEE addition per element, as in
// the Go loop, so the results are the same bits.

// func addAVX32(dst, a, b []float32)
TEXT ·addAVX32(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ a_base+24(FP), SI
	MOVQ a_len+32(FP), CX
	MOVQ b_base+48(FP), DX
	SHRQ $3, CX
	JZ   done32

loop32:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop32

done32:
	VZEROUPPER
	RET

// func addAVX64(dst, a, b []float64)
TEXT ·addAVX64(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ a_base+24(FP), SI
	MOVQ a_len+32(FP), CX
	MOVQ b_base+48(FP), DX
	SHRQ $2, CX
	JZ   done64

loop64:
	VMOVUPD (SI), Y0
	VADDPD  (DX), Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop64

done64:
	VZEROUPPER
	RET
