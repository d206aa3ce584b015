//go:build !noasm

#include "textflag.h"

// ScaleTo's float32 loop, 8 lanes a step: one IEEE product per element, as
// in the Go loop, so the results are the same bits. Keep in sync with
// reduce.go.

// func scaleAVX32(dst []float32, a float32, x []float32)
TEXT ·scaleAVX32(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	VBROADCASTSS a+24(FP), Y1
	MOVQ         x_base+32(FP), SI
	MOVQ         x_len+40(FP), CX
	SHRQ         $3, CX
	JZ           done

loop:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET
