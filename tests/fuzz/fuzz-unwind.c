/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: what the unwinding path reads.  The first byte picks:
 *   0  an ELF file: unwind tables (unwind/elfcfi.h, cfi.h, utable.h), and
 *      the encode -> decode round trip of the table
 *   1  an encoded table from the worker (utable_decode), as the root
 *      collector receives it
 *   2  a stack walk (unwind/unwind.h) over a table and a stack copy made
 *      of the input
 *   3  a sample record's call chain, registers and stack (collect/perfsample.h) */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/perf.h"
#include "collect/perfsample.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "unwind/unwind.h"
#include "unwind/utable.h"

#include <stdlib.h>
#include <string.h>

static void elf(const uint8_t *data, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	struct utable t, u;
	const char *why;

	if (utable_build(data, size, &t, &why))
		return;
	for (size_t i = 1; i < t.n; i++)
		if (t.rows[i].start <= t.rows[i - 1].start)
			abort();
	utable_encode(&t, &sb);
	if (utable_decode((const uint8_t *)sb.buf, sb.len, &u, &why) || u.n != t.n)
		abort();
	utable_release(&u);
	utable_release(&t);
	strbuf_release(&sb);
}

struct walk_ctx {
	const struct utable *t;
};

static const struct utable *find(void *ctx, uint64_t pc, uint64_t *offset, bool *mapped)
{
	struct walk_ctx *w = ctx;

	*mapped = pc < 0x100000;
	*offset = pc;
	return *mapped ? w->t : NULL;
}

/* A table (decoded from the front of the input) and a stack (the rest). */
static void walk(const uint8_t *data, size_t size)
{
	struct unwind_result *res;
	struct unwind_regs regs;
	struct unwind_stack stk;
	struct walk_ctx w;
	struct utable t;
	const char *why;
	size_t tlen;

	if (size < 26)
		return;
	regs.ip = get_le32(data) & 0xfffff;
	regs.sp = 0x7ff000000000ull + (get_le16(data + 4) & ~7u);
	regs.bp = regs.sp + get_le16(data + 6);
	/* the other registers point into the stack copy, for CFAs kept in them */
	for (unsigned i = 0; i < 16; i++)
		regs.gpr[i] = regs.sp + 8 * (data[i & 7] & 63);
	regs.known = (uint16_t)~(get_le32(data) >> 20);
	tlen = get_le16(data + 8);
	data += 10;
	size -= 10;
	if (tlen > size || utable_decode(data, tlen, &t, &why))
		return;
	w.t = &t;
	stk.base = regs.sp;
	stk.data = data + tlen;
	stk.size = size - tlen;
	res = malloc(sizeof(*res));
	unwind_stack(&regs, &stk, find, &w, data[0] & 1, res);
	if (res->n > UNWIND_MAX_FRAMES || res->end >= UNWIND__COUNT)
		abort();
	free(res);
	utable_release(&t);
}

static void sample(const uint8_t *data, size_t size)
{
	uint64_t type = PERF_COLLECT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	struct perf_sample_ext x;
	uint64_t mask;

	if (size < 8)
		return;
	mask = get_le64(data);
	if (perf_sample_ext_parse(data + 8, size - 8, type, mask, &x))
		return;
	if (x.stack && (x.stack < data || x.stack + x.stack_size > data + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] & 3) {
	case 0: elf(data + 1, size - 1); break;
	case 1: {
		struct utable t;
		const char *why;

		if (!utable_decode(data + 1, size - 1, &t, &why))
			utable_release(&t);
		break;
	}
	case 2: walk(data + 1, size - 1); break;
	case 3: sample(data + 1, size - 1); break;
	}
	return 0;
}
