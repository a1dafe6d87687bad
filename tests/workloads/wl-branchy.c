/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-branchy: a loop of data-dependent, unpredictable branches.
 *
 *   wl-branchy [-n ITERATIONS]
 *
 * branchy() walks a table of random bytes and takes one of four paths per
 * byte, so the branch predictor is wrong about half the time.  Prints its
 * result, then "branchy SHARE": branchy()'s share of the process's CPU time,
 * and "branchy_cpu SECONDS", its CPU time.
 */
#include "wl.h"

#define TABLE 65536

__attribute__((noinline)) uint64_t branchy(const unsigned char *t, uint64_t n)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (uint64_t i = 0; i < n; i++) {
		unsigned char v = t[i & (TABLE - 1)];

		if (v & 1)
			a += v;
		else
			b ^= v;
		if (v & 2)
			c += a >> 3;
		else
			d -= b;
	}
	return a + b + c + d;
}

int main(int argc, char **argv)
{
	uint64_t n = wl_iterations(argc, argv, 250000000), rng = 2463534242ull;
	unsigned char *t = malloc(TABLE);
	uint64_t r;
	double t0, t1;

	if (!t)
		return 1;
	for (size_t i = 0; i < TABLE; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		t[i] = (unsigned char)rng;
	}
	t0 = wl_thread_cpu();
	r = branchy(t, n);
	t1 = wl_thread_cpu() - t0;
	printf("%llu\nbranchy %.4f\nbranchy_cpu %.6f\n", (unsigned long long)r,
	       t1 / wl_process_cpu(), t1);
	free(t);
	return 0;
}
