/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-ctx.c - the static scheduler's contexts (model/sched-int.h):
 * the machine after a predecessor's code, kept for every block it leads
 * to, so that the code runs once for all of them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- contexts: the machine after one, for each block it precedes ---------------- */

/*
 * A block scheduled after a predecessor's code (PRED) runs that code
 * first, and so does every other block the predecessor leads to.  The
 * machine after the context's instructions but its last (whether that
 * one is a taken branch depends on the block) is kept for the last two
 * contexts, and a block after one of them starts from it.
 */

struct ctx_snap {
	uint32_t idx[CTX_SNAP_MAX];
	size_t n;                   /* the context idx[0..n) */
	struct sim sim;             /* the machine after its first n - 1 (pointers unused) */
	struct elem e[CTX_SNAP_MAX];/* those elements */
	uint64_t *busy;             /* the ring's cycles [sim.floor, sim.hi) */
	int *holder;
	size_t cycles_alloc;
};

struct ctx_snap *sched_ctx_find(const struct sim_buffers *b, const uint32_t *idx, size_t n)
{
	for (unsigned k = 0; k < ARRAY_SIZE(b->ctx); k++) {
		struct ctx_snap *c = b->ctx[k];

		if (c && c->n == n && !memcmp(c->idx, idx, n * sizeof(*idx)))
			return c;
	}
	return NULL;
}

void sched_ctx_save(struct sim_buffers *b, const struct sim *s, const uint32_t *idx, size_t n)
{
	struct ctx_snap *c;
	size_t cycles = (size_t)(s->hi - s->floor);

	if (!b->ctx[b->ctx_next])
		b->ctx[b->ctx_next] = xcalloc(1, sizeof(*c));
	c = b->ctx[b->ctx_next];
	b->ctx_next = (b->ctx_next + 1) % ARRAY_SIZE(b->ctx);
	memcpy(c->idx, idx, n * sizeof(*idx));
	c->n = n;
	c->sim = *s;
	memcpy(c->e, s->e, (n - 1) * sizeof(*c->e));
	if (cycles > c->cycles_alloc) {
		c->cycles_alloc = cycles;
		c->busy = xreallocarray(c->busy, cycles, sizeof(*c->busy));
		c->holder = xreallocarray(c->holder, cycles * b->stride, sizeof(*c->holder));
	}
	for (size_t k = 0; k < cycles; k++) {
		size_t slot = (size_t)(s->floor + (int)k) & (b->cap - 1);

		c->busy[k] = b->busy[slot];
		memcpy(&c->holder[k * b->stride], &b->holder[slot * b->stride],
		       b->stride * sizeof(*c->holder));
	}
}

void sched_ctx_restore(struct sim *s, const struct ctx_snap *c)
{
	struct sim_buffers *b = s->buf;
	struct elem *e = s->e;
	const struct slot *slots = s->slots;
	size_t n = s->n, n_ctx = s->n_ctx, n_body = s->n_body;
	size_t cycles = (size_t)(c->sim.hi - c->sim.floor);

	*s = c->sim;
	s->buf = b;
	s->e = e;
	s->slots = slots;
	s->n = n;
	s->n_ctx = n_ctx;
	s->n_body = n_body;
	memcpy(e, c->e, (c->n - 1) * sizeof(*e));
	s->hi = s->floor;
	sched_ring_reach(s, c->sim.hi);
	for (size_t k = 0; k < cycles; k++) {
		size_t slot = (size_t)(s->floor + (int)k) & (b->cap - 1);

		b->busy[slot] = c->busy[k];
		memcpy(&b->holder[slot * b->stride], &c->holder[k * b->stride],
		       b->stride * sizeof(*c->holder));
	}
}

void sched_ctx_free(struct ctx_snap *c)
{
	if (!c)
		return;
	free(c->busy);
	free(c->holder);
	free(c);
}
