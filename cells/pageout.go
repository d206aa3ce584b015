//go:build cgo && linux

package cells

/*
#define _GNU_SOURCE
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

struct gt_pageout {
	const char *path;
	long bytes;
};

static int gt_pageout_object(struct dl_phdr_info *info, size_t size, void *data) {
	struct gt_pageout *p = data;
	if (info->dlpi_name == NULL || strcmp(info->dlpi_name, p->path) != 0) {
		return 0;
	}
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) != 0) {
			continue;
		}
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (madvise((void *)start, end - start, MADV_PAGEOUT) == 0) {
			p->bytes += end - start;
		}
	}
	return 1;
}

// gt_pageout asks the kernel to free the resident pages of the read-only
// segments of the loaded object at path (as dlopen was given it, which Go's plugin
// package resolves with realpath). It returns the bytes advised.
static long gt_pageout(const char *path) {
	char real[PATH_MAX];
	if (realpath(path, real) == NULL) {
		return 0;
	}
	struct gt_pageout p = { real, 0 };
	dl_iterate_phdr(gt_pageout_object, &p);
	return p.bytes;
}
*/
import "C"

import "unsafe"

// pageOut gives back the memory a just-loaded plugin's read-only segments
// hold: its code and read-only data, most of it the plugin's own copy of
// the runtime and of every package it links, which the process never runs
// (calls go to the host's) and which loading read once, to check and to
// match its types with the host's. They are pages of the plugin's file:
// the kernel frees those it can at once (MADV_PAGEOUT, Linux 5.4), and
// reads back any touched again, as a later plugin's load does for the
// dynamic loader's symbol tables. Pages the linker has just written, not
// yet written back, stay. Through a kernel, 200 distinct cells `cN := N`
// kept 0.10 MiB of file-backed memory each with it, and 0.97 before;
// cells that also call fmt.Sprint, 0.44.
func pageOut(so string) {
	p := C.CString(so)
	defer C.free(unsafe.Pointer(p))
	C.gt_pageout(p)
}
