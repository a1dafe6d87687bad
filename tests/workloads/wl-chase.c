/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-chase: a pointer chase.
 *
 *   wl-chase [-n STEPS] [--small]
 *
 * chase() follows a random cyclic permutation of 4M pointers (32 MiB), so
 * nearly every step misses the caches and the TLB; with --small, of 256K
 * (2 MiB: the L2 and the last level's latencies, not memory's).  Prints where it ended,
 * then "chase SHARE": chase()'s share of the process's CPU time (building
 * the permutation takes the rest: how much depends on the machine's memory),
 * and "chase_cpu SECONDS", its CPU time.
 */
#include "wl.h"

#define NODES (4 * 1024 * 1024)

__attribute__((noinline)) size_t chase(const size_t *next, size_t at, uint64_t steps)
{
	for (uint64_t i = 0; i < steps; i++)
		at = next[at];
	return at;
}

int main(int argc, char **argv)
{
	uint64_t steps = wl_iterations(argc, argv, 12000000), rng = 88172645463325252ull;
	size_t nodes = wl_flag(argc, argv, "--small") ? NODES / 16 : NODES;
	size_t *next = malloc(nodes * sizeof(*next)), *perm = malloc(nodes * sizeof(*perm)), end;
	double t0, in_chase;

	if (!next || !perm)
		return 1;
	for (size_t i = 0; i < nodes; i++)
		perm[i] = i;
	for (size_t i = nodes - 1; i > 0; i--) {
		size_t j, t;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		j = (size_t)(rng % (i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < nodes; i++)
		next[perm[i]] = perm[(i + 1) % nodes];
	t0 = wl_thread_cpu();
	end = chase(next, perm[0], steps);
	in_chase = wl_thread_cpu() - t0;
	printf("ended at %zu\nchase %.4f\nchase_cpu %.6f\n", end, in_chase / wl_process_cpu(),
	       in_chase);
	free(next);
	free(perm);
	return 0;
}
