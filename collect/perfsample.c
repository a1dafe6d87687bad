/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/perfsample.c - decoding a sample's call chain, registers and
 * stack copy.
 */
#include "config.h"

#include "collect/perfsample.h"

#include <linux/perf_event.h>
#include <string.h>

#include "collect/perf.h"

struct cur {
	const uint8_t *p;
	size_t left;
};

static int u64(struct cur *c, uint64_t *v)
{
	if (c->left < 8)
		return -1;
	memcpy(v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return 0;
}

static int skip(struct cur *c, uint64_t n)
{
	if (n > c->left)
		return -1;
	c->p += n;
	c->left -= (size_t)n;
	return 0;
}

static int regs(struct cur *c, uint64_t mask, struct perf_sample_ext *out)
{
	if (u64(c, &out->regs_abi))
		return -1;
	if (out->regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	out->regs_mask = mask;
	for (unsigned r = 0; r < PERF_SAMPLE_MAX_REGS; r++)
		if (mask >> r & 1 && u64(c, &out->regs[r]))
			return -1;
	return 0;
}

static int stack(struct cur *c, struct perf_sample_ext *out)
{
	uint64_t size, dyn;
	const uint8_t *data;

	if (u64(c, &size))
		return -1;
	if (!size)
		return 0;
	data = c->p;
	if (skip(c, size) || u64(c, &dyn) || dyn > size)
		return -1;
	out->stack = data;
	out->stack_size = dyn;
	return 0;
}

int perf_sample_ext_parse(const void *rec, size_t len, uint64_t sample_type, uint64_t regs_mask,
			  struct perf_sample_ext *out)
{
	/* The header and the fixed fields: identifier, ip, pid/tid, time, period. */
	const size_t fixed = sizeof(struct perf_event_header) + 40;
	struct cur c = { (const uint8_t *)rec + fixed, len - fixed };
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (len < fixed || (sample_type & ~(PERF_COLLECT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN |
					    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)))
		return -1;
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (u64(&c, &n) || n > c.left / 8)
			return -1;
		out->callchain = (const uint64_t *)(const void *)c.p;
		out->n_callchain = (size_t)n;
		skip(&c, n * 8);
	}
	if ((sample_type & PERF_SAMPLE_REGS_USER) && regs(&c, regs_mask, out))
		return -1;
	if ((sample_type & PERF_SAMPLE_STACK_USER) && stack(&c, out))
		return -1;
	return 0;
}
