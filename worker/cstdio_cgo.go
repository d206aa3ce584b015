//go:build cgo

package worker

/*
#include <stdio.h>

static void gotrain_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
static void gotrain_fflush(void) { fflush(NULL); }
*/
import "C"

// lineBufferC makes C's stdout line-buffered. C buffers a pipe fully, so
// without this a printf from a cell would show only when the buffer fills.
func lineBufferC() { C.gotrain_line_buffered() }

// flushC flushes every C stdio stream, so that output a cell's C code left
// in a buffer (a printf without a newline) belongs to that cell.
func flushC() { C.gotrain_fflush() }
