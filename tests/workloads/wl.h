/* SPDX-License-Identifier: GPL-2.0-or-later
 * tests/workloads/wl.h - what the dcpi test workloads share: argument
 * parsing for "-n ITERATIONS" and a per-thread CPU clock.  The workloads
 * are real programs profiled by the tests, the demo and the benchmarks;
 * each runs for about 1-3 s by default and prints what it did.
 */
#ifndef DCPI_TESTS_WORKLOADS_WL_H
#define DCPI_TESTS_WORKLOADS_WL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Returns the value of "-n N" in argv, or def. */
static inline uint64_t wl_iterations(int argc, char **argv, uint64_t def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-n"))
			return strtoull(argv[i + 1], NULL, 0);
	return def;
}

/*
 * Returns the value of "-s SECONDS" in argv, or 0: run for that much CPU
 * time rather than for a number of iterations.  Where a sample costs more
 * than the sampling period (a VM at a high rate), fixed work can take minutes
 * of overhead: a time budget bounds the run on any machine.
 */
static inline double wl_seconds(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-s"))
			return strtod(argv[i + 1], NULL);
	return 0;
}

/* True if flag is among the arguments. */
static inline int wl_flag(int argc, char **argv, const char *flag)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

/* CPU time of the calling thread, in seconds. */
static inline double wl_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process so far (user and system), in seconds. */
static inline double wl_process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keeps a result alive so the compiler cannot drop the work. */
static inline void wl_keep(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

#endif
