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

// ROWS defines func NAME(dst, a, v []T) over whole rows of len(v), a
// multiple of the lanes (the Go caller checks): dst[r,j] = P1[..] OP P2[..]
// with SI walking a's rows and R9 walking v once per row; P1 and P2 say
// which is the left operand (SI for RowsOpTo, R9 for OpRowsTo). BX counts
// the vectors left in a, CX those left in the row.
#define ROWS(NAME, OP, MOV, SHIFT, P1, P2) \
TEXT NAME(SB), NOSPLIT, $0-72 \
	MOVQ dst_base+0(FP), DI \
	MOVQ a_base+24(FP), SI \
	MOVQ a_len+32(FP), BX \
	MOVQ v_base+48(FP), DX \
	MOVQ v_len+56(FP), R8 \
	SHRQ $SHIFT, R8 \
	JZ   16(PC) \
	SHRQ $SHIFT, BX \
	JZ   14(PC) \
	MOVQ DX, R9 \
	MOVQ R8, CX \
	MOV  (P1), Y0 \
	OP   (P2), Y0, Y0 \
	MOV  Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, R9 \
	ADDQ $32, DI \
	DECQ BX \
	DECQ CX \
	JNZ  -8(PC) \
	TESTQ BX, BX \
	JNZ  -12(PC) \
	VZEROUPPER \
	RET

ROWS(·addRowsAVX32, VADDPS, VMOVUPS, 3, SI, R9)
ROWS(·subRowsAVX32, VSUBPS, VMOVUPS, 3, SI, R9)
ROWS(·mulRowsAVX32, VMULPS, VMOVUPS, 3, SI, R9)
ROWS(·divRowsAVX32, VDIVPS, VMOVUPS, 3, SI, R9)
ROWS(·rowsAddAVX32, VADDPS, VMOVUPS, 3, R9, SI)
ROWS(·rowsSubAVX32, VSUBPS, VMOVUPS, 3, R9, SI)
ROWS(·rowsMulAVX32, VMULPS, VMOVUPS, 3, R9, SI)
ROWS(·rowsDivAVX32, VDIVPS, VMOVUPS, 3, R9, SI)

// func sumRowsAVX32(dst, x []float32): dst[j] += x[r,j] for each row r of
// len(dst), a multiple of 8, in increasing r: AddTo(dst, dst, row) per row.
TEXT ·sumRowsAVX32(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DX
	MOVQ dst_len+8(FP), R8
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), BX
	SHRQ $3, R8
	JZ   sumdone
	SHRQ $3, BX
	JZ   sumdone

sumrow:
	MOVQ DX, DI
	MOVQ R8, CX

sumvec:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    BX
	DECQ    CX
	JNZ     sumvec
	TESTQ   BX, BX
	JNZ     sumrow

sumdone:
	VZEROUPPER
	RET

// func accRowsAVX32(acc []float64, f float64, x []float32): acc[j] +=
// f·float64(x[r,j]) for each row r of len(acc), a multiple of 4, in
// increasing r: 4 float32 widened to 4 float64 lanes a step, as AccRowsTo's
// Go loop.
TEXT ·accRowsAVX32(SB), NOSPLIT, $0-56
	MOVQ         acc_base+0(FP), DX
	MOVQ         acc_len+8(FP), R8
	VBROADCASTSD f+24(FP), Y2
	MOVQ         x_base+32(FP), SI
	MOVQ         x_len+40(FP), BX
	SHRQ         $2, R8
	JZ           accdone
	SHRQ         $2, BX
	JZ           accdone

accrow:
	MOVQ DX, DI
	MOVQ R8, CX

accvec:
	VCVTPS2PD (SI), Y0
	VMULPD    Y2, Y0, Y0
	VMOVUPD   (DI), Y1
	VADDPD    Y0, Y1, Y1
	VMOVUPD   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      BX
	DECQ      CX
	JNZ       accvec
	TESTQ     BX, BX
	JNZ       accrow

accdone:
	VZEROUPPER
	RET
