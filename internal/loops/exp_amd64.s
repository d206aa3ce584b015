//go:build !noasm

#include "textflag.h"

// The float32 loops of exp.go and gelu.go: the operations of expNeg32 and
// normCDF32, in the same order and without fused multiply-adds, so they
// give the Go loops' bits. Both branches of normCDF32 are computed and each
// lane picks its own. Keep in sync with exp.go and gelu.go; the offsets
// are polyConsts'.

// EXP sets Y7 = expNeg32(Y4), with AX the constants; it uses Y5, Y6, Y9.
#define EXP \
	VCMPPS $1, 160(AX), Y4, Y9; \
	VMULPS 192(AX), Y4, Y5; \
	VROUNDPS $0, Y5, Y5; \
	VMULPS 224(AX), Y5, Y6; \
	VSUBPS Y6, Y4, Y6; \
	VMULPS 256(AX), Y5, Y7; \
	VSUBPS Y7, Y6, Y6; \
	VMOVUPS 288(AX), Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 320(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 352(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 384(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 416(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 448(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 480(AX), Y7, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS 512(AX), Y7, Y7; \
	VCVTPS2DQ Y5, Y5; \
	VPADDD 544(AX), Y5, Y5; \
	VPSLLD $23, Y5, Y5; \
	VMULPS Y5, Y7, Y7; \
	VANDNPS Y7, Y9, Y7

// ALLCORE sets the flags for JNE to jump unless every lane of x in Y0 has
// |x| < 2 (a NaN does not), with AX the constants; it uses Y6, Y9 and BX.
#define ALLCORE \
	VANDPS 0(AX), Y0, Y6; \
	VCMPPS $1, 128(AX), Y6, Y9; \
	VMOVMSKPS Y9, BX; \
	CMPQ BX, $0xff

// CORE sets Y5 = normCDF32's |x| < 2 branch, ½ + x·P(x²), for x in Y0
// and x² in Y3, with AX the constants.
#define CORE \
	VMOVUPS 608(AX), Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 640(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 672(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 704(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 736(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 768(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 800(AX), Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS 832(AX), Y5, Y5; \
	VMULPS Y5, Y0, Y5; \
	VADDPS 32(AX), Y5, Y5

// PDFCORE sets Y3 = x², Y2 = φ(x) and Y5 = CORE for x in Y0, with AX the
// constants; it uses Y4-Y7 and Y9.
#define PDFCORE \
	VMULPS Y0, Y0, Y3; \
	VMULPS 64(AX), Y3, Y4; \
	EXP; \
	VMULPS 576(AX), Y7, Y2; \
	CORE

// CDF sets Y1 = Φ(x) and Y2 = φ(x) for x in Y0, with AX the constants;
// it uses Y3-Y9.
#define CDF \
	PDFCORE; \
	VANDPS 0(AX), Y0, Y6; \
	VMULPS 32(AX), Y6, Y7; \
	VADDPS 96(AX), Y7, Y7; \
	VMOVUPS 96(AX), Y8; \
	VDIVPS Y7, Y8, Y7; \
	VMOVUPS 864(AX), Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 896(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 928(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 960(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 992(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 1024(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 1056(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 1088(AX), Y8, Y8; \
	VMULPS Y7, Y8, Y8; \
	VADDPS 1120(AX), Y8, Y8; \
	VMULPS Y7, Y2, Y7; \
	VMULPS Y8, Y7, Y8; \
	VMOVUPS 96(AX), Y7; \
	VSUBPS Y8, Y7, Y7; \
	VXORPS Y4, Y4, Y4; \
	VCMPPS $13, Y4, Y0, Y9; \
	VBLENDVPS Y9, Y7, Y8, Y8; \
	VCMPPS $1, 128(AX), Y6, Y9; \
	VBLENDVPS Y9, Y5, Y8, Y1

// func expSubAVX32(dst, x []float32, shift float32, acc *[8]float32, k *polyConsts)
TEXT ·expSubAVX32(SB), NOSPLIT, $0-72
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	VBROADCASTSS shift+48(FP), Y10
	MOVQ         acc+56(FP), R8
	MOVQ         k+64(FP), AX
	VXORPS       Y11, Y11, Y11
	SHRQ         $3, CX
	JZ           edone

eloop:
	VMOVUPS (SI), Y4
	VSUBPS  Y10, Y4, Y4
	EXP
	VMOVUPS Y7, (DI)
	VADDPS  Y7, Y11, Y11
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     eloop

edone:
	VMOVUPS Y11, (R8)
	VZEROUPPER
	RET

// func geluAVX32(out, x []float32, k *polyConsts)
TEXT ·geluAVX32(SB), NOSPLIT, $0-56
	MOVQ out_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ k+48(FP), AX
	SHRQ $3, CX
	JZ   fdone

floop:
	VMOVUPS (SI), Y0
	ALLCORE
	JNE     fboth
	VMULPS  Y0, Y0, Y3
	CORE
	VMULPS  Y5, Y0, Y1
	JMP     fstore

fboth:
	CDF
	VMULPS Y1, Y0, Y1

fstore:
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     floop

fdone:
	VZEROUPPER
	RET

// func geluGradAVX32(out, x, dy []float32, k *polyConsts)
TEXT ·geluGradAVX32(SB), NOSPLIT, $0-80
	MOVQ out_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ dy_base+48(FP), DX
	MOVQ k+72(FP), AX
	SHRQ $3, CX
	JZ   gdone

gloop:
	VMOVUPS (SI), Y0
	ALLCORE
	JNE     gboth
	PDFCORE
	VMOVUPS Y5, Y1
	JMP     gsum

gboth:
	CDF

gsum:
	VMULPS  Y2, Y0, Y3
	VADDPS  Y3, Y1, Y3
	VMULPS  (DX), Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     gloop

gdone:
	VZEROUPPER
	RET
