// Package cfault gives the worker's tests C code to run: output through C's
// stdio and fatal signals raised in C, which only a separate process can
// survive. Test files cannot use cgo themselves, hence this package; nothing
// outside tests imports it.
package cfault

/*
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>

static void cfault_printf(const char *s) { printf("%s", s); }
static void cfault_abort(void) { abort(); }
static void cfault_segv(void) { raise(SIGSEGV); }
*/
import "C"

import "unsafe"

// Printf writes s with C's printf, into C's stdout buffer.
func Printf(s string) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	C.cfault_printf(cs)
}

// Abort calls C's abort: SIGABRT in C code.
func Abort() { C.cfault_abort() }

// Segv raises SIGSEGV from C code.
func Segv() { C.cfault_segv() }
