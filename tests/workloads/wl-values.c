/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-values: one load that reads the same value 95% of the time (seed 004:
 * "a load reads from 0x3c8 95% of the time"), for value profiles.
 *
 *   wl-values [-n ITERATIONS]
 *
 * lookup() hashes the words of a 4096-word table, visited in a scrambled
 * order: 95% of the words (all but every twentieth) hold 0x5eed5eed, the
 * others distinct values (the hardest tail for a hot list).  The load's
 * value then goes through a multiply chain, so the loop's time does not
 * depend on it.  Prints the hash and the share of 0x5eed5eed among the
 * words read.
 */
#include "wl.h"

#define WORDS 4096
#define COMMON 0x5eed5eedull

__attribute__((noinline)) uint64_t lookup(const uint64_t *t, uint64_t n, uint64_t *common)
{
	uint64_t h = 0, c = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = t[(i * 2654435761u) & (WORDS - 1)];

		c += v == COMMON;
		h = (h ^ v) * 0x100000001b3ull;
	}
	*common = c;
	return h;
}

int main(int argc, char **argv)
{
	uint64_t n = wl_iterations(argc, argv, 1000000000), common = 0, h,
		 rng = 88172645463325252ull;
	static uint64_t table[WORDS];

	for (size_t i = 0; i < WORDS; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		table[i] = i % 20 == 19 ? rng | 1ull << 40 : COMMON;
	}
	h = lookup(table, n, &common);
	printf("hash %llx, common %.2f%%\n", (unsigned long long)h,
	       n ? 100.0 * (double)common / (double)n : 0.0);
	return 0;
}
