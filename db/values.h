/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/values.h - value profiles: what the registers held when an
 * instruction was sampled (seed 004, DCPI's value sampling), per epoch and
 * image, in a blob of kind DCPIVALS (docs/db-format.md, "Value profiles").
 *
 * For each sampled file offset (the instruction at the sample's pc, as
 * recorded: the registers are the state before it executes):
 *  - samples: the value samples taken there (user-mode samples of the time
 *    event with the thread's registers);
 *  - per register, a hot list (core/hotlist.h): the most common values and
 *    their counts, in constant space;
 *  - pairs: consecutive user samples of one thread, the previous one in
 *    the same image nearby (VALUES_PAIR_WINDOW bytes), with the sums of
 *    each register's increases and decreases between the two and the
 *    largest: what the analysis counts loop iterations with (an induction
 *    register's changes telescope over a run of the loop).
 *
 * A struct values_profile is an array of records by offset; every
 * record's lists live in room the record owns.  Encode/decode are pure
 * (fuzzed); merging follows the hot lists' merge.  The collector builds
 * profiles (unsorted, then values_profile_sort) and merges them into the
 * database with db_values_merge; readers load them with db_values_load.
 */
#ifndef DCPI_DB_VALUES_H
#define DCPI_DB_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hotlist.h"

struct db;
struct strbuf;

#define VALUES_MAGIC "DCPIVALS"
#define VALUES_VERSION 1
/* Epoch file of image KEY: "KEY.values". */
#define VALUES_SUFFIX ".values"

/* The registers, in the format's order (x86-64). */
enum values_reg {
	VREG_RAX, VREG_RBX, VREG_RCX, VREG_RDX, VREG_RSI, VREG_RDI, VREG_RBP, VREG_RSP,
	VREG_R8, VREG_R9, VREG_R10, VREG_R11, VREG_R12, VREG_R13, VREG_R14, VREG_R15,
	VREG_RFLAGS,
	VALUES_NREGS
};
#define VALUES_ALL_REGS ((1u << VALUES_NREGS) - 1)

/* Entries a writer keeps per register (the format allows up to HOTLIST_MAX). */
#define VALUES_CAP 4
/* Pairs: the previous sample at most this many bytes away in the same image. */
#define VALUES_PAIR_WINDOW 4096
/*
 * Pairs: a change of a register this large or larger, either way, is not
 * summed: no count moves 2^48 in a sampling period (a step of 2^31 a cycle
 * for 2^17 cycles); it is another quantity (a pointer, a hash) the
 * register held at one end of the pair.
 */
#define VALUES_PAIR_WILD ((uint64_t)1 << 48)

/* "rax" ... "r15", "rflags"; NULL out of range. */
const char *values_reg_name(unsigned r);
/* The register named name ("rax", "eax", "ax", "al", "r8d"...), or -1. */
int values_reg_lookup(const char *name);

/*
 * A register's change between the two samples of a pair, summed by sign
 * (sums saturate at UINT64_MAX), with the two largest changes each way: a
 * sum is a count only if no pair brought in another quantity (a register
 * reused, a pair that began outside the loop), which the largest change
 * against the rest shows; the second largest tells whether there was only
 * one such pair (then it can be taken out).
 */
struct values_delta {
	uint64_t npos, spos, mpos, mpos2;  /* pairs where it grew, by how much in all, the two
					      largest increases (mpos2 0 with fewer than 2) */
	uint64_t nneg, sneg, mneg, mneg2;  /* the same where it shrank */
};

/* Keeps the two largest of m1 >= m2 and v. */
static inline void values_top2(uint64_t *m1, uint64_t *m2, uint64_t v)
{
	if (v > *m1) {
		*m2 = *m1;
		*m1 = v;
	} else if (v > *m2) {
		*m2 = v;
	}
}

struct values_pairs {
	uint64_t n;           /* pairs ending at this offset */
	uint64_t dt;          /* sum of their time spans, ns */
	uint32_t mask;        /* registers with a delta (bit per enum values_reg) */
	struct values_delta d[VALUES_NREGS];
};

struct values_rec {
	uint64_t offset;
	uint64_t samples;     /* value samples at this offset */
	uint32_t mask;        /* registers with a hot list */
	struct hotlist h[VALUES_NREGS];   /* h[r] meaningful where mask has bit r */
	struct values_pairs *pairs;       /* NULL: none (owned) */
	struct hotlist_entry *room;       /* the lists' entries (owned) */
};

struct values_profile {
	struct values_rec *v;
	size_t n, alloc;
};

#define VALUES_PROFILE_INIT { NULL, 0, 0 }

void values_profile_init(struct values_profile *p);
void values_profile_release(struct values_profile *p);

/*
 * Appends a record for offset with room for VALUES_CAP entries per
 * register (every list empty and exact) and returns it; it stays valid
 * until the next append.  Offsets may come in any order until
 * values_profile_sort().
 */
struct values_rec *values_profile_add(struct values_profile *p, uint64_t offset);
/*
 * The same with room only in the lists of the registers in mask (a writer
 * that knows which registers it will count: an instruction's written ones).
 */
struct values_rec *values_profile_add_regs(struct values_profile *p, uint64_t offset,
					   uint32_t mask);
/* Sorts by offset (offsets must be distinct). */
void values_profile_sort(struct values_profile *p);
/* The record at offset (binary search on a sorted profile), or NULL. */
const struct values_rec *values_profile_find(const struct values_profile *p, uint64_t offset);
/* Index of the first record at or after offset (sorted profile). */
size_t values_profile_lower_bound(const struct values_profile *p, uint64_t offset);
/* Value samples over all records. */
uint64_t values_profile_samples(const struct values_profile *p);

/* The pairs of r, allocated (zeroed) on first use. */
struct values_pairs *values_rec_pairs(struct values_rec *r);

/*
 * One sample at record r: its registers (regs[VALUES_NREGS], the format's
 * order) counted in the hot lists of the registers in mask.
 */
void values_rec_sample(struct values_rec *r, const uint64_t *regs, uint32_t mask,
		       struct hotlist_rng *rng);

/*
 * dst += src, both sorted: samples and pair sums added, hot lists merged
 * (hotlist_merge, thinned to VALUES_CAP entries).  dst stays sorted.
 */
void values_merge(struct values_profile *dst, const struct values_profile *src,
		  struct hotlist_rng *rng);

/* Appends the payload of a sorted profile (the records) to out; returns their count. */
uint32_t values_encode(const struct values_profile *p, struct strbuf *out);

/*
 * Decodes a payload of count records into out (replaced).  Returns 0, or
 * -1 with *why set (out is then empty).
 */
int values_decode(const void *payload, size_t len, uint32_t count, struct values_profile *out,
		  const char **why);

/*
 * Reads image key's value profile of epoch seq into out.  Returns 0; 1 if
 * there is none (out empty, no message); -1 on an error (reported: an
 * unreadable or invalid file, named).
 */
int db_values_load(struct db *db, uint32_t seq, const char *key, struct values_profile *out);

/*
 * Writer: merges add (sorted) into image key's value profile of epoch seq,
 * atomically (db_blob_merge: an invalid file is quarantined and replaced).
 * Returns 0, or -1 after reporting (the caller keeps add and retries).
 */
int db_values_merge(struct db *db, uint32_t seq, const char *key, const struct values_profile *add);

#endif
