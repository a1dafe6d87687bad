/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/calc-calib.c - a loop of known length for calibrating the
 * sampling period in cycles: calib_loop() runs N iterations of four
 * dependent register adds (4 cycles each: one add a cycle on every x86-64
 * core, the decrement and branch retire alongside), so its samples S give
 * the cycles per sample as 4 N / S.  Register adds, not add-immediates:
 * Golden Cove-class cores fold chains of add-immediates, several a cycle.  The accuracy benchmark profiles it in
 * the same epoch as each workload (tests/bench/calc-accuracy.sh): the
 * epoch's recorded clock rate (cpu MHz from /proc/cpuinfo) is not what a
 * virtual machine's core runs at, and a timer sample costs guest time.
 *
 *   calc-calib [N [after]]   (default 150000000: about 0.2 s at 3 GHz)
 *
 * With "after" the same loop runs as calib_loop_after(): a profile that
 * brackets a workload with one run before it and one after tells them apart,
 * and so how much the cycles per sample moved meanwhile (t0410).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#define LOOP(n, x)                                        \
	__asm__ volatile("1:\n\t"                         \
			 "add %2, %0\n\t"                 \
			 "add %2, %0\n\t"                 \
			 "add %2, %0\n\t"                 \
			 "add %2, %0\n\t"                 \
			 "dec %1\n\t"                     \
			 "jnz 1b"                         \
			 : "+r"(x), "+r"(n)               \
			 : "r"(one))

__attribute__((noinline)) void calib_loop(long n);
__attribute__((noinline)) void calib_loop_after(long n);

__attribute__((noinline)) void calib_loop(long n)
{
	long x = 0, one = 1;

	LOOP(n, x);
}

__attribute__((noinline)) void calib_loop_after(long n)
{
	long x = 1, one = 1;

	LOOP(n, x);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 150000000;

	if (n < 1)
		return 1;
	if (argc > 2 && !strcmp(argv[2], "after"))
		calib_loop_after(n);
	else
		calib_loop(n);
	return 0;
}
