/*
 * wl-copy: a copy loop.
 *
 *   wl-copy [-n PASSES]
 *
 * copy_loop() copies a 4 MiB array of 64-bit words into another, PASSES
 * times (a streaming, memory-bound loop).
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

	if (!a || !b)
		return 1;
	for (size_t i = 0; i < WORDS; i++)
		a[i] = i;
	for (uint64_t p = 0; p < passes; p++) {
		copy_loop(p & 1 ? a : b, p & 1 ? b : a, WORDS);
		wl_keep((uint64_t)(uintptr_t)a);
	}
	printf("copied %llu MiB\n", (unsigned long long)(passes * WORDS * 8 >> 20));
	free(a);
	free(b);
	return 0;
}
