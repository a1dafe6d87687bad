/* SPDX-License-Identifier: GPL-2.0-or-later
 * libwl.so: the shared library wl-lib calls into.  lib_work() runs a
 * dependent multiply-add chain, the same kind of loop as wl-lib's own
 * main_work(), so their shares follow their iteration counts.
 */
#include <stdint.h>

uint64_t lib_work(uint64_t n, uint64_t x);

__attribute__((noinline)) uint64_t lib_work(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}
