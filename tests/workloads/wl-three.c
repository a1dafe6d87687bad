/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-three: three functions with known shares of the time.
 *
 *   wl-three [-n UNIT] [-s SECONDS] [--slow] [--cpu]
 *
 * one(), two() and three() run the same dependent multiply-add chain
 * (latency-bound, so each iteration costs the same) for 1, 2 and 3 units
 * of UNIT iterations: shares 1/6, 2/6, 3/6.  With --slow two() does 4
 * units (twice as long): shares 1/8, 4/8, 3/8 -- the "after" of a
 * before/after diff.  The work is done in 20 interleaved rounds (with -s,
 * as many rounds as fit in SECONDS of its CPU time, at least one).  Prints
 * each function's measured share of the thread's CPU time, and with --cpu
 * the process's own CPU time and its run time from start to end (the
 * benchmarks time the workload itself, not the profiler around it).
 */
#include "wl.h"

#include <sys/resource.h>

#define ROUNDS 20

/* Different constants keep the compiler from folding the three into one. */
#define CHAIN(n, x, k)                                                   \
	do {                                                             \
		for (uint64_t i_ = 0; i_ < (n); i_++)                    \
			(x) = (x) * 6364136223846793005ull + (k);        \
	} while (0)

__attribute__((noinline)) uint64_t one(uint64_t n, uint64_t x)
{
	CHAIN(n, x, 1442695040888963407ull);
	return x;
}

__attribute__((noinline)) uint64_t two(uint64_t n, uint64_t x)
{
	CHAIN(n, x, 1442695040888963409ull);
	return x;
}

__attribute__((noinline)) uint64_t three(uint64_t n, uint64_t x)
{
	CHAIN(n, x, 1442695040888963411ull);
	return x;
}

int main(int argc, char **argv)
{
	uint64_t unit = wl_iterations(argc, argv, 200000000) / ROUNDS, x = 1;
	int slow = wl_flag(argc, argv, "--slow");
	double secs = wl_seconds(argc, argv);
	double t[3] = { 0, 0, 0 }, t0, all;
	struct timespec start, end;

	clock_gettime(CLOCK_MONOTONIC, &start);

	for (int r = 0; secs > 0 ? r == 0 || wl_thread_cpu() < secs : r < ROUNDS; r++) {
		t0 = wl_thread_cpu();
		x = one(unit, x);
		t[0] += wl_thread_cpu() - t0;
		t0 = wl_thread_cpu();
		x = two(slow ? 4 * unit : 2 * unit, x);
		t[1] += wl_thread_cpu() - t0;
		t0 = wl_thread_cpu();
		x = three(3 * unit, x);
		t[2] += wl_thread_cpu() - t0;
	}
	wl_keep(x);
	all = t[0] + t[1] + t[2];
	printf("one %.4f\ntwo %.4f\nthree %.4f\n", t[0] / all, t[1] / all, t[2] / all);
	if (wl_flag(argc, argv, "--cpu")) {
		struct rusage ru;

		clock_gettime(CLOCK_MONOTONIC, &end);
		printf("wall %.6f\n", (double)(end.tv_sec - start.tv_sec) +
					     (double)(end.tv_nsec - start.tv_nsec) / 1e9);
		getrusage(RUSAGE_SELF, &ru);
		printf("cpu %.6f\n", (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
					      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	}
	return 0;
}
