/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/strrank.c - ranks of strings in strcmp order, eight bytes at a time.
 */
#include "config.h"

#include "core/strrank.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/radix.h"
#include "core/xalloc.h"

/* Groups this small are sorted by comparing their strings. */
#define SMALL 16

struct ranking {
	const char *const *s;
	uint32_t *rank;
	uint32_t next;          /* the next rank to give */
	struct radix_item *tmp; /* room for the radix sort */
};

/*
 * The eight bytes of s from depth on, the first in the top byte (so that
 * keys order as strcmp orders the bytes, unsigned), zeros after the NUL.
 * The caller knows that s has no NUL before depth.
 */
static uint64_t chunk(const char *s, size_t depth)
{
	const unsigned char *p = (const unsigned char *)s + depth;
	uint64_t k = 0;
	unsigned b = 0;

	for (; b < 8 && p[b]; b++)
		k = k << 8 | p[b];
	return b % 8 ? k << (8 * (8 - b)) : k; /* b == 0: k is 0, and a shift by 64 undefined */
}

/* True if the strings of a chunk go on after it (no NUL in its eight bytes). */
static bool goes_on(uint64_t key)
{
	return (key & 0xff) != 0;
}

static int cmp_from(const struct ranking *r, uint32_t a, uint32_t b, size_t depth)
{
	return strcmp(r->s[a] + depth, r->s[b] + depth);
}

/* A small group: an insertion sort on the strings, then ranks. */
static void rank_small(struct ranking *r, struct radix_item *v, size_t n, size_t depth)
{
	for (size_t i = 1; i < n; i++) {
		struct radix_item x = v[i];
		size_t k = i;

		while (k && cmp_from(r, v[k - 1].i, x.i, depth) > 0) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = x;
	}
	for (size_t i = 0; i < n; i++) {
		if (i && cmp_from(r, v[i - 1].i, v[i].i, depth))
			r->next++;
		r->rank[v[i].i] = r->next;
	}
	r->next++;
}

/* Ranks the strings of v, which share their first depth bytes (none of them NUL). */
static void rank_group(struct ranking *r, struct radix_item *v, size_t n, size_t depth)
{
	if (n <= SMALL) {
		rank_small(r, v, n, depth);
		return;
	}
	for (size_t k = 0; k < n; k++)
		v[k].key = chunk(r->s[v[k].i], depth);
	radix_sort_scratch(v, n, false, r->tmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && v[j].key == v[i].key)
			j++;
		if (j - i > 1 && goes_on(v[i].key)) {
			rank_group(r, v + i, j - i, depth + 8);
		} else {
			for (size_t k = i; k < j; k++)
				r->rank[v[k].i] = r->next;
			r->next++;
		}
		i = j;
	}
}

size_t str_ranks(const char *const *s, size_t n, uint32_t *rank)
{
	struct ranking r = { s, rank, 0, NULL };
	struct radix_item *v;

	if (!n)
		return 0;
	v = xreallocarray(NULL, n, sizeof(*v));
	r.tmp = xreallocarray(NULL, n, sizeof(*r.tmp));
	for (size_t i = 0; i < n; i++)
		v[i].i = (uint32_t)i;
	rank_group(&r, v, n, 0);
	free(v);
	free(r.tmp);
	return r.next;
}
