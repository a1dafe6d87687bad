/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/shash.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define LINE 64

/* DCPI's bucket: four 16-byte entries, one cache line. */
struct bucket4 {
	struct {
		uint64_t key;
		uint32_t count;
		uint32_t pad;
	} e[4];
};

/* The packed bucket: six 8-byte keys and six 16-bit counts in one line. */
struct bucket6 {
	uint64_t key[6];
	uint16_t count[6];
	uint32_t pad;
};

_Static_assert(sizeof(struct bucket4) == LINE, "bucket4 is one cache line");
_Static_assert(sizeof(struct bucket6) == LINE, "bucket6 is one cache line");

unsigned shash_ways(enum shash_kind kind)
{
	return kind == SHASH_RR4 ? 4 : 6;
}

const char *shash_kind_name(enum shash_kind kind)
{
	return kind == SHASH_RR4 ? "rr4" : "stf6";
}

int shash_kind_lookup(const char *name)
{
	if (!strcmp(name, "rr4"))
		return SHASH_RR4;
	if (!strcmp(name, "stf6"))
		return SHASH_STF6;
	return -1;
}

void shash_init(struct shash *h, enum shash_kind kind, size_t table_bytes,
		size_t overflow_entries, shash_consume_fn consume, void *ctx)
{
	size_t n = 1;

	memset(h, 0, sizeof(*h));
	while (n * 2 * LINE <= table_bytes)
		n *= 2;
	h->kind = kind;
	h->nbuckets = n;
	if (posix_memalign(&h->buckets, LINE, n * LINE))
		die("out of memory");
	memset(h->buckets, 0, n * LINE);
	if (!overflow_entries)
		overflow_entries = 1;
	for (int i = 0; i < 2; i++) {
		h->ovf[i].v = xcalloc(overflow_entries, sizeof(struct shash_entry));
		h->ovf[i].cap = overflow_entries;
	}
	h->consume = consume;
	h->ctx = ctx;
}

void shash_release(struct shash *h)
{
	free(h->buckets);
	free(h->ovf[0].v);
	free(h->ovf[1].v);
	memset(h, 0, sizeof(*h));
}

static void hand_on(struct shash *h, int i)
{
	if (h->ovf[i].n)
		h->consume(h->ctx, h->ovf[i].v, h->ovf[i].n);
	h->ovf[i].n = 0;
	h->full[i] = false;
}

/* Appends an entry to the active overflow buffer, switching when it fills. */
static void evict(struct shash *h, uint64_t key, uint64_t count)
{
	struct shash_overflow *o = &h->ovf[h->active];

	o->v[o->n].key = key;
	o->v[o->n].count = count;
	if (++o->n < o->cap)
		return;
	h->full[h->active] = true;
	h->st.overflows++;
	h->active ^= 1;
	/* Both full: the consumer has fallen behind; drain one now. */
	if (h->full[h->active])
		hand_on(h, h->active);
}

static size_t bucket_of(const struct shash *h, uint64_t key)
{
	return (size_t)hash_u64(key) & (h->nbuckets - 1);
}

static void count_rr4(struct shash *h, uint64_t key)
{
	struct bucket4 *b = (struct bucket4 *)h->buckets + bucket_of(h, key);
	unsigned v;

	for (unsigned i = 0; i < 4; i++) {
		if (b->e[i].count && b->e[i].key == key) {
			h->st.hits++;
			if (b->e[i].count == UINT32_MAX) {
				h->st.saturations++;
				evict(h, key, b->e[i].count);
				b->e[i].count = 0;
			}
			b->e[i].count++;
			return;
		}
	}
	for (unsigned i = 0; i < 4; i++) {
		if (!b->e[i].count) {
			b->e[i].key = key;
			b->e[i].count = 1;
			return;
		}
	}
	v = h->rr++ & 3;
	h->st.evictions++;
	evict(h, b->e[v].key, b->e[v].count);
	b->e[v].key = key;
	b->e[v].count = 1;
}

/* Entries of a bucket6 are packed at the front: an empty one ends the line. */
static void count_stf6(struct shash *h, uint64_t key)
{
	struct bucket6 *b = (struct bucket6 *)h->buckets + bucket_of(h, key);
	unsigned i;

	for (i = 0; i < 6 && b->count[i]; i++) {
		if (b->key[i] != key)
			continue;
		h->st.hits++;
		if (b->count[i] == UINT16_MAX) {
			h->st.saturations++;
			evict(h, key, b->count[i]);
			b->count[i] = 0;
		}
		b->count[i]++;
		if (i) {
			uint16_t c = b->count[i];

			b->key[i] = b->key[0];
			b->count[i] = b->count[0];
			b->key[0] = key;
			b->count[0] = c;
		}
		return;
	}
	if (i == 6) {
		h->st.evictions++;
		evict(h, b->key[5], b->count[5]);
		i = 5;
	}
	memmove(&b->key[1], &b->key[0], i * sizeof(b->key[0]));
	memmove(&b->count[1], &b->count[0], i * sizeof(b->count[0]));
	b->key[0] = key;
	b->count[0] = 1;
}

void shash_count(struct shash *h, uint64_t key)
{
	h->st.samples++;
	if (h->kind == SHASH_RR4)
		count_rr4(h, key);
	else
		count_stf6(h, key);
}

void shash_flush_overflow(struct shash *h)
{
	for (int i = 0; i < 2; i++)
		if (h->full[i])
			hand_on(h, i);
}

/* Moves the table's entries into the overflow buffers (handing them on as they fill). */
static void drain_table(struct shash *h)
{
	for (size_t j = 0; j < h->nbuckets; j++) {
		if (h->kind == SHASH_RR4) {
			struct bucket4 *b = (struct bucket4 *)h->buckets + j;

			for (unsigned i = 0; i < 4; i++)
				if (b->e[i].count)
					evict(h, b->e[i].key, b->e[i].count);
		} else {
			struct bucket6 *b = (struct bucket6 *)h->buckets + j;

			for (unsigned i = 0; i < 6 && b->count[i]; i++)
				evict(h, b->key[i], b->count[i]);
		}
	}
	memset(h->buckets, 0, h->nbuckets * LINE);
}

void shash_drain(struct shash *h)
{
	int other = h->active ^ 1;

	/* Oldest first: a full buffer, then the active one, then the table. */
	if (h->full[other])
		hand_on(h, other);
	hand_on(h, h->active);
	drain_table(h);
	hand_on(h, h->active ^ 1);
	hand_on(h, h->active);
}

size_t shash_used(const struct shash *h)
{
	size_t n = 0;

	for (size_t j = 0; j < h->nbuckets; j++) {
		if (h->kind == SHASH_RR4) {
			const struct bucket4 *b = (const struct bucket4 *)h->buckets + j;

			for (unsigned i = 0; i < 4; i++)
				n += b->e[i].count != 0;
		} else {
			const struct bucket6 *b = (const struct bucket6 *)h->buckets + j;

			for (unsigned i = 0; i < 6; i++)
				n += b->count[i] != 0;
		}
	}
	return n;
}

size_t shash_bytes(const struct shash *h)
{
	return h->nbuckets * LINE + (h->ovf[0].cap + h->ovf[1].cap) * sizeof(struct shash_entry);
}
