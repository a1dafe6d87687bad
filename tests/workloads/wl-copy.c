/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-copy: a copy loop.
 *
 *   wl-copy [-n PASSES]
 *
 * copy_loop() copies a 4 MiB array of 64-bit words into another, PASSES
 * times (a streaming, memory-bound loop).  Prints what it copied, then
 * "copy_loop SHARE": copy_loop()'s share of the process's CPU time, and
 * "copy_loop_cpu SECONDS", its CPU time.
 */
#include "wl.h"

#define WORDS (512 * 1024)

__attribute__((noinline)) void copy_loop(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

int main(int argc, char **argv)
{
	uint64_t passes = wl_iterations(argc, argv, 4000);
	uint64_t *a = calloc(WORDS, sizeof(*a)), *b = calloc(WORDS, sizeof(*b));
	double t = 0, t0;

	if (!a || !b)
		return 1;
	for (size_t i = 0; i < WORDS; i++)
		a[i] = i;
	for (uint64_t p = 0; p < passes; p++) {
		t0 = wl_thread_cpu();
		copy_loop(p & 1 ? a : b, p & 1 ? b : a, WORDS);
		t += wl_thread_cpu() - t0;
		wl_keep((uint64_t)(uintptr_t)a);
	}
	printf("copied %llu MiB\n", (unsigned long long)(passes * WORDS * 8 >> 20));
	printf("copy_loop %.4f\ncopy_loop_cpu %.6f\n", t / wl_process_cpu(), t);
	free(a);
	free(b);
	return 0;
}
