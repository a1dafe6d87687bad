/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/order.h - merging the records of all CPUs' ring buffers in time
 * order.
 *
 * Each ring is in its CPU's order, but the rings are not ordered with each
 * other: a child's COMM on one CPU can be read before its parent's FORK on
 * another.  Records are queued with their time and handed on in time order
 * up to a watermark: a time before which no more records can arrive (the
 * caller takes it from the clock before it reads the rings, minus a small
 * slack).  Records at or after the watermark wait for the next round.
 */
#ifndef DCPI_COLLECT_ORDER_H
#define DCPI_COLLECT_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct order_item {
	uint64_t time;
	uint64_t seq;           /* arrival order: ties keep it */
	size_t off;             /* in the arena */
	uint32_t len;
	int cpu;
};

struct order_queue {
	unsigned char *arena;
	size_t len, alloc;
	unsigned char *spare;   /* the other arena: records that wait move there, then swap */
	size_t spare_alloc;
	struct order_item *v;
	size_t n, nalloc;
	uint64_t seq;
	uint64_t last_time;     /* time of the last record handed on */
	uint64_t late;          /* records that arrived after later ones were handed on */
};

void order_init(struct order_queue *q);
void order_release(struct order_queue *q);

/* Queues a copy of a record of len bytes with its time. */
void order_push(struct order_queue *q, int cpu, uint64_t time, const void *rec, size_t len);
/*
 * Queues a record of len bytes the caller writes at the address returned
 * (valid until the next push or flush): a record rewritten on the way in.
 */
void *order_push_space(struct order_queue *q, int cpu, uint64_t time, size_t len);

typedef void (*order_fn)(void *ctx, int cpu, const void *rec, size_t len);

/*
 * Hands every queued record with time < watermark to fn in time order
 * (arrival order among equal times) and drops it from the queue.
 * UINT64_MAX hands on everything.  Returns the number handed on.
 */
size_t order_flush(struct order_queue *q, uint64_t watermark, order_fn fn, void *ctx);

/* Bytes held by the queue (for memory accounting). */
size_t order_bytes(const struct order_queue *q);

#endif
