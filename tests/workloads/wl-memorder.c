/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-memorder: loads that wait for stores, as seed 004's vreplay found on
 * the 21264 (replay traps) and x86 still has them.
 *
 *   wl-memorder [-n ITERATIONS] [--narrow|--alias]
 *
 * narrow_wide() stores 4 bytes and then loads 8 bytes at the same place:
 * the store cannot forward to a wider load (store-to-load forwarding
 * fails: the load waits for the store to reach the cache).  alias_4k()
 * stores to a[i] and then loads b[i], with b exactly 4096 bytes after a:
 * the same offset in another page (4K aliasing: the load is taken for a
 * dependent one and waits).  Each runs for about half the time (--narrow,
 * --alias: only that one).
 */
#include "wl.h"

static uint64_t words[1024] __attribute__((aligned(4096)));
static uint32_t pages[2 * 1024] __attribute__((aligned(4096)));

__attribute__((noinline)) uint64_t narrow_wide(volatile uint64_t *p, uint64_t n)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < n; i++) {
		*(volatile uint32_t *)p = (uint32_t)i;  /* 4-byte store */
		sum += *p;                              /* 8-byte load of the same bytes */
	}
	return sum;
}

__attribute__((noinline)) uint64_t alias_4k(volatile uint32_t *a, volatile uint32_t *b, uint64_t n)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t k = i & 1023;

		a[k] = (uint32_t)i;   /* store to a[k] */
		sum += b[k];          /* load of b[k], 4096 bytes further: same offset in the page */
	}
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t n = wl_iterations(argc, argv, 150000000), s = 0;
	int narrow = !wl_flag(argc, argv, "--alias"), alias = !wl_flag(argc, argv, "--narrow");

	if (narrow)
		s += narrow_wide(&words[8], n);
	if (alias)
		s += alias_4k(pages, pages + 1024, n);
	printf("sum %llx\n", (unsigned long long)s);
	return 0;
}
