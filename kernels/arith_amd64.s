//go:build !noasm

#include "textflag.h"

// Element-wise differences, products and quotients, 32 bytes a step: one
// IEEE operation per element, as in the Go loops (SubTo, MulTo, DivTo), so
// the results are the same bits. Keep in sync with kernels/arith.go.

// ARITH defines func NAME(dst, a, b []T): dst[i] = a[i] OP b[i],
// over whole 32-byte vectors of a: SHIFT is log2 of the lanes in one, MOV
// the unaligned move. The jumps count instructions, as a macro cannot
// hold labels.
#define ARITH(NAME, OP, MOV, SHIFT) \
TEXT NAME(SB), NOSPLIT, $0-72 \
	MOVQ dst_base+0(FP), DI \
	MOVQ a_base+24(FP), SI \
	MOVQ a_len+32(FP), CX \
	MOVQ b_base+48(FP), DX \
	SHRQ $SHIFT, CX \
	JZ   9(PC) \
	MOV  (SI), Y0 \
	OP   (DX), Y0, Y0 \
	MOV  Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, DI \
	DECQ CX \
	JNZ  -7(PC) \
	VZEROUPPER \
	RET

ARITH(·subAVX32, VSUBPS, VMOVUPS, 3)
ARITH(·subAVX64, VSUBPD, VMOVUPD, 2)
ARITH(·mulAVX32, VMULPS, VMOVUPS, 3)
ARITH(·mulAVX64, VMULPD, VMOVUPD, 2)
ARITH(·divAVX32, VDIVPS, VMOVUPS, 3)
ARITH(·divAVX64, VDIVPD, VMOVUPD, 2)
