/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/search.h - binary search of a sorted array (C++'s lower_bound and
 * partition_point, written once).
 *
 * LOWER_BOUND(n, i, before) is the first index of 0..n-1 for which the
 * expression `before`, written in terms of the index variable i (which the
 * macro declares, size_t), is false; n if it is true for all.  `before`
 * must be true for a prefix of the indexes and false after it: "element i
 * sorts before what is sought".  It is evaluated O(log n) times, n once.
 *
 *   first offset >= off:         LOWER_BOUND(p->n, k, p->v[k].offset < off)
 *   first range ending after a:  LOWER_BOUND(n, k, r[k].end <= a)
 *   last start <= a:             (LOWER_BOUND(n, k, r[k].start <= a)) - 1, if not 0
 *   by name:                     LOWER_BOUND(n, k, strcmp(v[k].name, name) < 0)
 */
#ifndef DCPI_CORE_SEARCH_H
#define DCPI_CORE_SEARCH_H

#include <stddef.h>

#define LOWER_BOUND(n, i, before) __extension__ ({                           \
	size_t lower_bound_lo_ = 0, lower_bound_hi_ = (n);                     \
	while (lower_bound_lo_ < lower_bound_hi_) {                            \
		size_t i = lower_bound_lo_ + (lower_bound_hi_ - lower_bound_lo_) / 2; \
		if (before)                                                    \
			lower_bound_lo_ = i + 1;                               \
		else                                                           \
			lower_bound_hi_ = i;                                   \
	}                                                                      \
	lower_bound_lo_;                                                       \
})

#endif
