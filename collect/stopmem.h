/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/stopmem.h - the memory a burst will read first, copied while its
 * thread is stopped (docs/collect.md, "Emulated bursts").
 *
 * The thread is let go as soon as its registers are read: the emulation
 * runs afterwards, while the thread runs on and rewrites its memory.  What
 * the burst reads first is copied before the thread goes: the stack from
 * below the red zone up, the pages the general registers point into, and
 * the pages the last burst of the same address space read from the live
 * process (its working set: the next burst of the same code reads them
 * again).  At most STOPMEM_MAX_PAGES pages, read with process_vm_readv
 * (one call for the lot, again after a page that cannot be read): tens of
 * microseconds.  Nothing is parsed; a page that cannot be read is left
 * out.
 */
#ifndef DCPI_COLLECT_STOPMEM_H
#define DCPI_COLLECT_STOPMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/emu-proto.h"

#define STOPMEM_MAX_PAGES EMU_MAX_SNAP
/* Pages of stack copied from the stack pointer's up (and the one below for the red zone). */
#define STOPMEM_STACK_PAGES 4

struct stopmem {
	size_t n;                               /* pages copied (readable) */
	struct emu_page page[STOPMEM_MAX_PAGES];        /* in order of address, distinct */
	uint8_t *data;                          /* STOPMEM_MAX_PAGES pages */
	uint64_t asked;                         /* pages tried */
};

void stopmem_init(struct stopmem *m);
void stopmem_release(struct stopmem *m);

/*
 * Copies, from process pid (its thread stopped with state st), the stack,
 * the pages st's general registers point into, and hint[0..n_hint) (the
 * last burst's working set), in that order of preference, up to
 * STOPMEM_MAX_PAGES.  Returns the pages copied (m->n).
 */
size_t stopmem_take(struct stopmem *m, pid_t pid, const struct emu_state *st, const uint64_t *hint,
		    size_t n_hint);

#endif
