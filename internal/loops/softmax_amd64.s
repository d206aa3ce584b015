//go:build !noasm

#include "textflag.h"

// The float32 loops of softmax.go, 4 elements a step widened to 4 float64
// lanes, with the Go loops' operations in their order and no fused
// multiply-add, so both give the same bits. Keep in sync with softmax.go.

// func laneDotAVX32(x, y []float32, acc *[4]float64)
TEXT ·laneDotAVX32(SB), NOSPLIT, $0-56
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	MOVQ    y_base+24(FP), DX
	MOVQ    acc+48(FP), DI
	VMOVUPD (DI), Y0
	SHRQ    $2, CX
	JZ      dotdone

dotloop:
	VCVTPS2PD (SI), Y1
	VCVTPS2PD (DX), Y2
	VMULPD    Y2, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $16, SI
	ADDQ      $16, DX
	DECQ      CX
	JNZ       dotloop

dotdone:
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET

// func softmaxGradAVX32(dst, y, dy []float32, s float64)
TEXT ·softmaxGradAVX32(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         y_base+24(FP), SI
	MOVQ         y_len+32(FP), CX
	MOVQ         dy_base+48(FP), DX
	VBROADCASTSD s+72(FP), Y3
	SHRQ         $2, CX
	JZ           sgdone

sgloop:
	VCVTPS2PD  (DX), Y1
	VSUBPD     Y3, Y1, Y1 // dy - s
	VCVTPS2PD  (SI), Y0
	VMULPD     Y1, Y0, Y0 // y·(dy - s)
	VCVTPD2PSY Y0, X0
	VMOVUPS    X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DX
	ADDQ       $16, DI
	DECQ       CX
	JNZ        sgloop

sgdone:
	VZEROUPPER
	RET
