/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/order.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Arenas this small keep their memory between rounds. */
#define ORDER_KEEP_BYTES ((size_t)16 << 20)
#define SWAP(a, b) do { size_t t_ = (a); (a) = (b); (b) = t_; } while (0)

void order_init(struct order_queue *q)
{
	memset(q, 0, sizeof(*q));
}

void order_release(struct order_queue *q)
{
	free(q->arena);
	free(q->spare);
	free(q->v);
	order_init(q);
}

void *order_push_space(struct order_queue *q, int cpu, uint64_t time, size_t len)
{
	struct order_item *it;

	ALLOC_GROW(q->arena, q->len + len, q->alloc);
	ALLOC_GROW(q->v, q->n + 1, q->nalloc);
	it = &q->v[q->n++];
	it->time = time;
	it->seq = q->seq++;
	it->off = q->len;
	it->len = (uint32_t)len;
	it->cpu = cpu;
	q->len += len;
	return q->arena + it->off;
}

void order_push(struct order_queue *q, int cpu, uint64_t time, const void *rec, size_t len)
{
	memcpy(order_push_space(q, cpu, time, len), rec, len);
}

static int cmp_item(const void *a, const void *b)
{
	const struct order_item *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Keeps items [from, n) and their bytes, moved to the start of the spare
 * arena, which becomes the arena.  Both arenas keep their memory (up to a
 * bound): the next rounds need as much, and fresh memory costs page faults
 * and copies when it grows (stack copies are 8 KiB a sample).
 */
static void compact(struct order_queue *q, size_t from)
{
	size_t keep = q->n - from, bytes = 0;
	unsigned char *t;

	for (size_t i = from; i < q->n; i++)
		bytes += q->v[i].len;
	if (q->spare_alloc < bytes || q->spare_alloc > ORDER_KEEP_BYTES) {
		free(q->spare);
		q->spare_alloc = bytes > q->alloc && bytes <= ORDER_KEEP_BYTES ? bytes : q->alloc;
		if (q->spare_alloc > ORDER_KEEP_BYTES || q->spare_alloc < bytes)
			q->spare_alloc = bytes;
		q->spare = q->spare_alloc ? xmalloc(q->spare_alloc) : NULL;
	}
	bytes = 0;
	for (size_t i = from; i < q->n; i++) {
		memcpy(q->spare + bytes, q->arena + q->v[i].off, q->v[i].len);
		q->v[i].off = bytes;
		bytes += q->v[i].len;
	}
	memmove(q->v, q->v + from, keep * sizeof(*q->v));
	q->n = keep;
	t = q->arena;
	q->arena = q->spare;
	q->spare = t;
	SWAP(q->alloc, q->spare_alloc);
	q->len = bytes;
	if (q->spare_alloc > ORDER_KEEP_BYTES) {
		free(q->spare);
		q->spare = NULL;
		q->spare_alloc = 0;
	}
}

size_t order_flush(struct order_queue *q, uint64_t watermark, order_fn fn, void *ctx)
{
	size_t i;

	if (!q->n)
		return 0;
	qsort(q->v, q->n, sizeof(*q->v), cmp_item);
	for (i = 0; i < q->n && (watermark == UINT64_MAX || q->v[i].time < watermark); i++) {
		const struct order_item *it = &q->v[i];

		if (it->time && it->time < q->last_time)
			q->late++;
		else if (it->time)
			q->last_time = it->time;
		fn(ctx, it->cpu, q->arena + it->off, it->len);
	}
	if (i)
		compact(q, i);
	return i;
}

size_t order_bytes(const struct order_queue *q)
{
	return q->alloc + q->spare_alloc + q->nalloc * sizeof(*q->v);
}
