/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/kallsyms.h - the part of the kernel's symbol table an epoch needs.
 *
 * /proc/kallsyms is 5 MB here; an epoch needs only the symbols holding its
 * sampled kernel addresses.  The subset keeps, for each sampled address,
 * the text symbol with the greatest address at or below it and the next
 * one above (which bounds its size), as complete lines in /proc/kallsyms
 * order and format, so a reader that names addresses from the subset gets
 * the same answer as from the whole file.  Text, never parsed as anything
 * but "ADDRESS TYPE NAME [MODULE]" lines.
 *
 * The file is read once, in one pass through a 128 KiB buffer: the core
 * kernel's part, sorted by address, is picked from as it goes by; what
 * follows out of order (modules, BPF) is kept and sorted at the end.  When
 * an out-of-order symbol comes nearer to an address than the sorted part's,
 * the sorted part's lines stay in the subset too (a reader still names the
 * address by the nearer one).
 */
#ifndef DCPI_COLLECT_KALLSYMS_H
#define DCPI_COLLECT_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* [start, end): from a text symbol to the next one. */
struct kallsyms_range {
	uint64_t start, end;
};

/*
 * Appends to out the lines of the kallsyms file at path needed for the
 * sorted addresses addrs[0..n).  Returns 0; 1 if the file hides addresses
 * (all zero: kptr_restrict, or not root); -1 if it cannot be read
 * (reported).  out is as it was unless 0 is returned.  If ranges is not
 * NULL, it receives (caller frees; NULL unless 0 is returned) the
 * symbol ranges the subset names, sorted and without duplicates: an
 * address inside one of them needs no new subset.
 */
int kallsyms_subset(const char *path, const uint64_t *addrs, size_t n, struct strbuf *out,
		    struct kallsyms_range **ranges, size_t *nranges);

/* The same from an open file (read from where it is; not closed). */
int kallsyms_subset_fd(int fd, const uint64_t *addrs, size_t n, struct strbuf *out,
		       struct kallsyms_range **ranges, size_t *nranges);

/* True if addr lies in one of the sorted ranges. */
bool kallsyms_covered(const struct kallsyms_range *r, size_t n, uint64_t addr);

#endif
