/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/hotlist.h - hot lists: Gibbons and Matias's counting samples
 * ("New sampling-based summary statistics for improving approximate query
 * answers", SIGMOD 1998), the algorithm DCPI's value sampling kept per
 * instruction (seed 004, slide 14): the most frequent values of a stream
 * and estimates of their frequencies, in constant space.
 *
 * A list holds at most cap (value, count) entries and a threshold tau.  A
 * value already in the list is counted on every occurrence; a new value
 * enters (count 1) with probability 1/tau.  When an entry would not fit,
 * tau is raised to tau' and every entry is thinned as if it had been
 * sampled at 1/tau' all along: with probability tau/tau' it stays as it
 * is; otherwise its count drops by one and then by one more for each tail
 * of a coin with heads probability 1/tau', until a head or 0 (evicted).
 * With tau = 1 the counts are exact.  A value's frequency is estimated as
 * count + 0.418 tau - 1 (hotlist_estimate); values with a count below
 * tau - (0.418 tau - 1) are not worth reporting (hotlist_reportable).
 *
 * One change to the algorithm, for the values a hot list is kept for: a
 * count of at least tau' is thinned by its expected loss, tau' - tau,
 * instead of a geometric draw.  Its expectation is the same; the
 * draw's spread (about tau' each time) was the only error left in the
 * estimate of a value that is there most of the time, up to 10% of the
 * stream with 4 entries and a 5% tail of distinct values (measured; 0
 * with this change, tests/unit/test-core).  A heavy count's estimate is
 * count + tau - 1 (what it lost since it entered at tau 1).
 *
 * Two lists of disjoint streams merge (hotlist_merge: both thinned to the
 * larger tau, counts of equal values added, then thinned until they fit),
 * which is how value profiles are merged across flushes, runs and epochs.
 *
 *   struct hotlist_entry room[4];
 *   struct hotlist h;
 *   struct hotlist_rng rng = HOTLIST_RNG_INIT(42);
 *   hotlist_init(&h, room, 4);
 *   for (...) hotlist_add(&h, value, &rng);
 *   hotlist_sort(&h);                        // most frequent first
 *   h.e[0].value, hotlist_estimate(&h, 0) / samples ...
 *
 * The list does not own its entries (the caller gives the room, so that a
 * collector can keep many lists in one allocation).  Nothing here
 * allocates, and the randomness is the caller's (reproducible by seed).
 */
#ifndef DCPI_CORE_HOTLIST_H
#define DCPI_CORE_HOTLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most entries a list may have (the database's bound too). */
#define HOTLIST_MAX 16

struct hotlist_entry {
	uint64_t value;
	uint64_t count;
};

struct hotlist {
	struct hotlist_entry *e;  /* room for cap entries, the first n used */
	uint32_t tau;             /* 1: every value counted (exact) */
	uint16_t n, cap;          /* 1 <= cap <= HOTLIST_MAX */
};

/* xorshift64*: a small reproducible generator (state never 0). */
struct hotlist_rng {
	uint64_t s;
};
#define HOTLIST_RNG_INIT(seed) { (seed) ? (uint64_t)(seed) : 0x9E3779B97F4A7C15ull }
uint64_t hotlist_rand(struct hotlist_rng *r);

/* An empty exact list (tau 1) using room (cap entries). */
void hotlist_init(struct hotlist *h, struct hotlist_entry *room, unsigned cap);

/* Counts one occurrence of value. */
void hotlist_add(struct hotlist *h, uint64_t value, struct hotlist_rng *rng);

/*
 * Thins h as if it had been sampled at 1/tau all along (tau >= h->tau);
 * entries whose count drops to 0 are removed.
 */
void hotlist_raise(struct hotlist *h, uint32_t tau, struct hotlist_rng *rng);

/*
 * Merges src (the counting sample of another, disjoint stream) into dst:
 * both at the larger tau, equal values' counts added, then thinned until
 * the result fits dst's room.  src is not changed.
 */
void hotlist_merge(struct hotlist *dst, const struct hotlist *src, struct hotlist_rng *rng);

/* Sorts the entries by count, largest first (ties by value). */
void hotlist_sort(struct hotlist *h);

/*
 * The estimated occurrences of entry i: count + 0.418 tau - 1, or count +
 * tau - 1 for a heavy count (at least 4 tau); the count if tau is 1.
 */
double hotlist_estimate(const struct hotlist *h, size_t i);

/* True if entry i's count is high enough for its estimate to mean something. */
bool hotlist_reportable(const struct hotlist *h, size_t i);

#endif
