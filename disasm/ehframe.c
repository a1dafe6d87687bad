/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/ehframe.c - procedure boundaries from the FDEs of .eh_frame,
 * walked by unwind/cfi.h.
 */
#include "config.h"

#include "disasm/ehframe.h"

#include "core/xalloc.h"
#include "unwind/cfi.h"

struct ranges {
	struct fde_range **v;
	size_t *n, *alloc;
};

static int add_range(void *ctx, const struct cfi_fde *f)
{
	struct ranges *r = ctx;

	ALLOC_GROW(*r->v, *r->n + 1, *r->alloc);
	(*r->v)[*r->n].start = f->start;
	(*r->v)[*r->n].end = f->end;
	(*r->n)++;
	return 0;
}

int ehframe_parse(const uint8_t *buf, size_t len, uint64_t sec_addr, bool is64, bool little,
		  struct fde_range **v, size_t *n, size_t *alloc)
{
	struct cfi_section s = { buf, len, sec_addr, is64, little, false };
	struct ranges r = { v, n, alloc };

	return cfi_walk(&s, add_range, &r);
}
