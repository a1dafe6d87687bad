/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-lib: a program that spends two thirds of its time in a shared
 * library (libwl.so, lib_work()) and one third in itself (main_work()).
 *
 *   wl-lib [-n UNIT]
 *
 * Prints each part's measured share of the CPU time.
 */
#include "wl.h"

uint64_t lib_work(uint64_t n, uint64_t x);

__attribute__((noinline)) uint64_t main_work(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963411ull;
	return x;
}

int main(int argc, char **argv)
{
	uint64_t unit = wl_iterations(argc, argv, 400000000) / 20, x = 1;
	double t[2] = { 0, 0 }, t0;

	for (int r = 0; r < 20; r++) {
		t0 = wl_thread_cpu();
		x = main_work(unit, x);
		t[0] += wl_thread_cpu() - t0;
		t0 = wl_thread_cpu();
		x = lib_work(2 * unit, x);
		t[1] += wl_thread_cpu() - t0;
	}
	wl_keep(x);
	printf("main %.4f\nlib %.4f\n", t[0] / (t[0] + t[1]), t[1] / (t[0] + t[1]));
	return 0;
}
