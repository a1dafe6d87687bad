/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/radix.h - sorting a million things by a number: a radix sort of
 * (key, index) pairs, a byte of the key a pass, the passes over bytes that
 * every key shares skipped (sample counts take two or three passes, ranks
 * of a million three).  Stable: pairs of equal keys stay in the order
 * given.  A million pairs sort in a few milliseconds, where a comparison
 * sort takes a tenth of a second and more when it compares strings.
 *
 *   struct radix_item *v = xcalloc(n, sizeof(*v));
 *   for (size_t i = 0; i < n; i++)
 *           v[i] = (struct radix_item){ samples[i], (uint32_t)i };
 *   radix_sort(v, n, true);                  // descending, ties by index
 *
 * Orders of several keys sort by each in turn, the least significant
 * first (each pass keeps the order of the one before among its ties).
 * radix_key_double() makes a double into a key that sorts as it does.
 */
#ifndef DCPI_CORE_RADIX_H
#define DCPI_CORE_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct radix_item {
	uint64_t key;
	uint32_t i;      /* what is sorted: an index */
};

/* Sorts v by key, ascending (desc: descending), equal keys in the order given. */
void radix_sort(struct radix_item *v, size_t n, bool desc);
/* The same with room for n items in tmp (callers that sort many small groups). */
void radix_sort_scratch(struct radix_item *v, size_t n, bool desc, struct radix_item *tmp);

/*
 * Sorts v by the high 32 bits of each value, stably (a key above an index,
 * 8 bytes a row where radix_items take 16: half the memory to go through
 * when the keys fit), with room for n values in tmp.
 */
void radix_sort_high(uint64_t *v, size_t n, uint64_t *tmp);

/*
 * A key that orders doubles as < does (-0 and 0 alike; NaN above +inf:
 * callers that want it elsewhere map it first).
 */
static inline uint64_t radix_key_double(double x)
{
	uint64_t u;

	if (x == 0)
		x = 0;   /* -0 */
	memcpy(&u, &x, sizeof(u));
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

#endif
