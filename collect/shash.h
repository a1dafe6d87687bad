/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/shash.h - the per-CPU sample hash table of DCPI's device driver
 * (the DCPI paper, Anderson et al., "Continuous Profiling: Where Have All
 * the Cycles Gone?", SOSP 1997, section 4.2.1), in user space.
 *
 * Samples are counted by (address space, pc, event) in a table of
 * fixed-size buckets, each one 64-byte cache line, so a lookup touches one
 * line.  A sample that finds no entry in its bucket takes one, evicting an
 * old entry to the active one of a pair of overflow buffers; a full buffer
 * is handed to the consumer while the other one fills.  Two policies:
 *
 *   SHASH_RR4   DCPI's table: 4 entries of 16 bytes a line; on a miss the
 *               victim is chosen by a mod-4 counter incremented on each
 *               eviction (round robin).
 *   SHASH_STF6  the paper's proposed improvement (section 5.4): 6 entries a
 *               line (8-byte keys, 16-bit counts packed into the same 64
 *               bytes), swap-to-front on a hit, new entries inserted at the
 *               front, the last entry evicted.  Same memory, 1.5x the
 *               entries.
 *
 * The key packs the event (3 bits), an address-space slot (13 bits; see
 * collect/procs.h) and the pc's low 48 bits (x86-64 canonical addresses:
 * user space below 2^47, the kernel sign-extended above).  A count that
 * would overflow its field is moved to the overflow buffer first, so no
 * sample is ever lost by the table.
 */
#ifndef DCPI_COLLECT_SHASH_H
#define DCPI_COLLECT_SHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum shash_kind { SHASH_RR4, SHASH_STF6 };

#define SHASH_SLOT_BITS 13
#define SHASH_SLOTS (1u << SHASH_SLOT_BITS)
#define SHASH_EVENT_BITS 3

/* True if pc survives the 48-bit packing (canonical, 4-level paging). */
static inline bool shash_pc_packable(uint64_t pc)
{
	uint64_t top = pc >> 47;

	return top == 0 || top == 0x1ffff;
}

static inline uint64_t shash_key(unsigned event, unsigned slot, uint64_t pc)
{
	return ((uint64_t)event << 61) | ((uint64_t)slot << 48) | (pc & 0xffffffffffffull);
}

static inline unsigned shash_key_event(uint64_t key)
{
	return (unsigned)(key >> 61);
}

static inline unsigned shash_key_slot(uint64_t key)
{
	return (unsigned)(key >> 48) & (SHASH_SLOTS - 1);
}

static inline uint64_t shash_key_pc(uint64_t key)
{
	uint64_t pc = key & 0xffffffffffffull;

	return pc & (1ull << 47) ? pc | 0xffff000000000000ull : pc;
}

/* An evicted or drained entry. */
struct shash_entry {
	uint64_t key;
	uint64_t count;
};

struct shash_overflow {
	struct shash_entry *v;
	size_t n, cap;
};

/* Receives a batch of entries (a full overflow buffer, or a drain). */
typedef void (*shash_consume_fn)(void *ctx, const struct shash_entry *v, size_t n);

struct shash_stats {
	uint64_t samples;       /* samples counted */
	uint64_t hits;          /* samples that found their entry */
	uint64_t evictions;     /* entries pushed out to make room */
	uint64_t saturations;   /* entries moved out because their count was full */
	uint64_t overflows;     /* overflow buffers handed on when full */
};

struct shash {
	enum shash_kind kind;
	void *buckets;          /* 64-byte aligned */
	size_t nbuckets;        /* a power of two */
	unsigned rr;            /* SHASH_RR4's victim counter */
	struct shash_overflow ovf[2];
	int active;
	bool full[2];
	shash_consume_fn consume;
	void *ctx;
	struct shash_stats st;
};

/*
 * Sets up a table of about table_bytes (rounded down to a power-of-two
 * number of 64-byte buckets, at least one) and two overflow buffers of
 * overflow_entries each.  consume receives full overflow buffers.
 */
void shash_init(struct shash *h, enum shash_kind kind, size_t table_bytes,
		size_t overflow_entries, shash_consume_fn consume, void *ctx);
void shash_release(struct shash *h);

/* Entries per bucket of a kind (4 or 6). */
unsigned shash_ways(enum shash_kind kind);
/* "rr4" / "stf6", and back (-1 if unknown). */
const char *shash_kind_name(enum shash_kind kind);
int shash_kind_lookup(const char *name);

/* Counts one sample of key. */
void shash_count(struct shash *h, uint64_t key);

/* Hands full overflow buffers to the consumer (call after a batch). */
void shash_flush_overflow(struct shash *h);

/*
 * Hands everything to the consumer: the overflow buffers, then every entry
 * of the table, which is left empty.
 */
void shash_drain(struct shash *h);

/* Entries now in the table. */
size_t shash_used(const struct shash *h);
/* Bytes of table and overflow buffers. */
size_t shash_bytes(const struct shash *h);

#endif
