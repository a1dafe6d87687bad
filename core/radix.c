/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/radix.c - a stable radix sort of (key, index) pairs.
 */
#include "config.h"

#include "core/radix.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* Turns the count of each digit into where its first item goes. */
static void starts(size_t count[256])
{
	size_t at = 0;

	for (unsigned d = 0; d < 256; d++) {
		size_t c = count[d];

		count[d] = at;
		at += c;
	}
}

void radix_sort_scratch(struct radix_item *v, size_t n, bool desc, struct radix_item *tmp)
{
	struct radix_item *from = v, *to = tmp;
	uint64_t flip = desc ? UINT64_MAX : 0, differ = 0;

	if (n < 2)
		return;
	/* the bytes in which some keys differ: the others need no pass */
	for (size_t k = 1; k < n; k++)
		differ |= v[k].key ^ v[0].key;
	for (unsigned b = 0; b < 8; b++) {
		size_t count[256] = { 0 };
		unsigned shift = 8 * b;

		if (!((differ >> shift) & 0xff))
			continue;
		for (size_t k = 0; k < n; k++)
			count[((from[k].key ^ flip) >> shift) & 0xff]++;
		starts(count);
		for (size_t k = 0; k < n; k++)
			to[count[((from[k].key ^ flip) >> shift) & 0xff]++] = from[k];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}

void radix_sort(struct radix_item *v, size_t n, bool desc)
{
	struct radix_item *tmp;

	if (n < 2)
		return;
	tmp = xreallocarray(NULL, n, sizeof(*tmp));
	radix_sort_scratch(v, n, desc, tmp);
	free(tmp);
}

void radix_sort_high(uint64_t *v, size_t n, uint64_t *tmp)
{
	/* one reading counts the four digits; a pass each then moves them */
	size_t count[4][256] = { { 0 } };
	uint64_t *from = v, *to = tmp;

	if (n < 2)
		return;
	for (size_t k = 0; k < n; k++) {
		uint32_t key = (uint32_t)(v[k] >> 32);

		count[0][key & 0xff]++;
		count[1][(key >> 8) & 0xff]++;
		count[2][(key >> 16) & 0xff]++;
		count[3][key >> 24]++;
	}
	for (unsigned b = 0; b < 4; b++) {
		unsigned shift = 32 + 8 * b;

		/* a digit all keys share needs no pass */
		if (count[b][(v[0] >> shift) & 0xff] == n)
			continue;
		starts(count[b]);
		for (size_t k = 0; k < n; k++)
			to[count[b][(from[k] >> shift) & 0xff]++] = from[k];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}
