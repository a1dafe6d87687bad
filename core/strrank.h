/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/strrank.h - the place of each of many strings in strcmp order,
 * found once, so that what sorts rows by name (a million procedures)
 * sorts numbers (core/radix.h) instead of comparing strings at every step.
 *
 *   uint32_t *rank = xcalloc(n, sizeof(*rank));
 *   size_t distinct = str_ranks(names, n, rank);
 *   // strcmp(names[i], names[j]) < 0  <=>  rank[i] < rank[j]; equal names, equal ranks
 *
 * The strings are sorted eight bytes at a time (a radix sort of each
 * string's next eight bytes, then the same within each group that shares
 * them), so that a million names take tens of milliseconds.
 */
#ifndef DCPI_CORE_STRRANK_H
#define DCPI_CORE_STRRANK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Ranks s[0..n) (n < 2^32): rank[i] is the number of distinct strings
 * below s[i] in strcmp order.  Returns the number of distinct strings.
 */
size_t str_ranks(const char *const *s, size_t n, uint32_t *rank);

#endif
