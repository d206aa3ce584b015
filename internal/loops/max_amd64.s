//go:build !noasm

#include "textflag.h"

// The lane maxima of max.go's max32. VMAXPS gives its second source where
// either source is a NaN, so with x first and the lanes second each lane
// becomes x > lane ? x : lane, the Go loop's rule. Keep in sync with max.go.

DATA negInf<>+0(SB)/4, $0xff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $4

// func maxAVX32(x []float32, acc *[8]float32)
// The lanes start at -Inf; acc is only written, so that no load of it
// waits on the caller's stores.
TEXT ·maxAVX32(SB), NOSPLIT, $0-32
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	MOVQ         acc+24(FP), DI
	VBROADCASTSS negInf<>(SB), Y0
	SHRQ         $3, CX
	JZ      done

loop:
	VMOVUPS (SI), Y1
	VMAXPS  Y0, Y1, Y0
	ADDQ    $32, SI
	DECQ    CX
	JNZ     loop

done:
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET
