//go:build !noasm

#include "textflag.h"

// The vector loops compute exactly the operations of the Go loop in adam,
// in the same order and without fused multiply-adds, so their results are
// bit-identical to the pure-Go build (-tags noasm). Keep in sync with adam.

// func adamAVX32(w, g, m, v []float32, k *adamConsts[float32])
TEXT ·adamAVX32(SB), NOSPLIT, $0-104
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), R8
	MOVQ v_base+72(FP), R9
	MOVQ k+96(FP), AX
	VBROADCASTSS 0(AX), Y0  // b1
	VBROADCASTSS 4(AX), Y1  // 1-b1
	VBROADCASTSS 8(AX), Y2  // b2
	VBROADCASTSS 12(AX), Y3 // 1-b2
	VBROADCASTSS 16(AX), Y4 // alpha
	VBROADCASTSS 20(AX), Y5 // epsHat
	VBROADCASTSS 24(AX), Y6 // decay
	SHRQ $3, CX
	JZ   done32

loop32:
	VMOVUPS (SI), Y7         // g
	VMULPS  (R8), Y0, Y8     // b1*m
	VMULPS  Y7, Y1, Y9       // (1-b1)*g
	VADDPS  Y9, Y8, Y8       // m' = b1*m + (1-b1)*g
	VMOVUPS Y8, (R8)
	VMULPS  (R9), Y2, Y10    // b2*v
	VMULPS  Y7, Y3, Y11      // (1-b2)*g
	VMULPS  Y7, Y11, Y11     // (1-b2)*g*g
	VADDPS  Y11, Y10, Y10    // v'
	VMOVUPS Y10, (R9)
	VSQRTPS Y10, Y10
	VADDPS  Y5, Y10, Y10     // sqrt(v') + epsHat
	VMULPS  Y8, Y4, Y8       // alpha*m'
	VDIVPS  Y10, Y8, Y8      // alpha*m' / (sqrt(v') + epsHat)
	VMULPS  (DI), Y6, Y12    // decay*w
	VSUBPS  Y8, Y12, Y12
	VMOVUPS Y12, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNZ     loop32

done32:
	VZEROUPPER
	RET

// func adamAVX64(w, g, m, v []float64, k *adamConsts[float64])
TEXT ·adamAVX64(SB), NOSPLIT, $0-104
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), R8
	MOVQ v_base+72(FP), R9
	MOVQ k+96(FP), AX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	VBROADCASTSD 32(AX), Y4
	VBROADCASTSD 40(AX), Y5
	VBROADCASTSD 48(AX), Y6
	SHRQ $2, CX
	JZ   done64

loop64:
	VMOVUPD (SI), Y7
	VMULPD  (R8), Y0, Y8
	VMULPD  Y7, Y1, Y9
	VADDPD  Y9, Y8, Y8
	VMOVUPD Y8, (R8)
	VMULPD  (R9), Y2, Y10
	VMULPD  Y7, Y3, Y11
	VMULPD  Y7, Y11, Y11
	VADDPD  Y11, Y10, Y10
	VMOVUPD Y10, (R9)
	VSQRTPD Y10, Y10
	VADDPD  Y5, Y10, Y10
	VMULPD  Y8, Y4, Y8
	VDIVPD  Y10, Y8, Y8
	VMULPD  (DI), Y6, Y12
	VSUBPD  Y8, Y12, Y12
	VMOVUPD Y12, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNZ     loop64

done64:
	VZEROUPPER
	RET

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET
