/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/ehframe.h - procedure boundaries from .eh_frame: every FDE (frame
 * description entry) covers one function, or one part of it (GCC's .cold
 * parts get their own FDE).  Stripped programs keep .eh_frame (on x86-64
 * every function has an FDE), so this names code that has no symbols.
 *
 * A pure parser over a byte buffer: no I/O, every length and offset is
 * bounds-checked, so it can be fuzzed directly.
 */
#ifndef DCPI_DISASM_EHFRAME_H
#define DCPI_DISASM_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t start, end;    /* [start, end) in ELF virtual addresses */
};

/*
 * Parses the .eh_frame section held in buf[0..len), loaded at address
 * sec_addr, and appends the address range of every FDE to *v (ALLOC_GROW
 * on *n, *alloc).  FDEs with encodings that cannot be resolved from the
 * section alone (indirect, text- or data-relative) and empty ranges are
 * skipped.  Returns 0, or -1 if the section is malformed; the ranges read
 * before the damage are kept either way.  Ranges come in section order.
 */
int ehframe_parse(const uint8_t *buf, size_t len, uint64_t sec_addr, bool is64, bool little,
		  struct fde_range **v, size_t *n, size_t *alloc);

#endif
