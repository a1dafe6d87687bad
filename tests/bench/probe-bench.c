/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/probe-bench.c - what a burst could measure of one load's
 * latency on this machine (docs/analysis.md, "Load latencies"): the cost
 * of a single step, and how well a cache-state probe from another process
 * tells where a line is.
 *
 *   probe-bench [-n PROBES]
 *
 * 1. A child spins; it is seized and single-stepped 2000 times
 *    (PTRACE_SINGLESTEP + waitpid + PTRACE_GETREGS, as collect/burst.c
 *    does): the time per step, against the 1-100 ns a load takes.
 * 2. The probe a burst could make at a load: time process_vm_readv() of 8
 *    bytes at the load's address, from the tracer (rdtscp around it), after
 *    a read of another line of the page (so that the page walk and the
 *    kernel's page references are warm).  Measured on lines known to be in
 *    L1 (just read), in L2 or L3 (after reading 1 MiB or 8 MiB elsewhere)
 *    and in memory (clflush), PROBES times each: the distributions of the
 *    probe's time, in TSC ticks, and how many probes of each place would
 *    be told "memory" by the best threshold between L1 and memory.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void step_cost(void)
{
	pid_t child = fork();
	int status;
	double t0, t1;
	int steps = 0;

	if (!child) {
		volatile uint64_t x = 0;

		for (;;)
			x++;
	}
	usleep(20000);
	if (ptrace(PTRACE_SEIZE, child, NULL, NULL) || ptrace(PTRACE_INTERRUPT, child, NULL, NULL) ||
	    waitpid(child, &status, __WALL) != child) {
		printf("1. single step: cannot trace (%s)\n", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return;
	}
	t0 = now_ns();
	for (; steps < 2000; steps++) {
		struct user_regs_struct u;

		if (ptrace(PTRACE_GETREGS, child, NULL, &u) ||
		    ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) ||
		    waitpid(child, &status, __WALL) != child)
			break;
	}
	t1 = now_ns();
	ptrace(PTRACE_DETACH, child, NULL, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("1. single step (getregs, step, wait): %.1f us a step over %d steps\n",
	       (t1 - t0) / 1e3 / (steps ? steps : 1), steps);
}

static void probes(int n)
{
	static const char *const names[] = { "in L1 (just read)", "after 1 MiB elsewhere",
					     "after 8 MiB elsewhere", "in memory (clflush)" };
	size_t size = 256u << 20, ev = 8u << 20;
	char *buf = malloc(size), *evict = malloc(ev), tmp[8];
	double *t[4];
	volatile char sink;
	pid_t self = getpid();

	if (!buf || !evict)
		return;
	for (size_t i = 0; i < size; i += 64)
		buf[i] = 1;
	for (size_t i = 0; i < ev; i += 64)
		evict[i] = 1;
	for (int m = 0; m < 4; m++)
		t[m] = calloc((size_t)n, sizeof(double));
	for (int k = 0; k < n; k++) {
		char *p = buf + ((size_t)k * 7919 * 4096 % (size - 8192));
		struct iovec l = { tmp, 8 }, warm = { p + 2048, 8 }, at = { p, 8 };

		for (int m = 0; m < 4; m++) {
			unsigned aux;
			uint64_t a, b;

			process_vm_readv(self, &l, 1, &warm, 1, 0);
			sink = *p;
			if (m == 1 || m == 2)
				for (size_t i = 0; i < (m == 1 ? 1u << 20 : ev); i += 64)
					sink = evict[i];
			if (m == 3) {
				_mm_clflush(p);
				_mm_mfence();
			}
			process_vm_readv(self, &l, 1, &warm, 1, 0);
			a = __rdtscp(&aux);
			process_vm_readv(self, &l, 1, &at, 1, 0);
			b = __rdtscp(&aux);
			t[m][k] = (double)(b - a);
		}
	}
	(void)sink;
	printf("2. probe (process_vm_readv of the line, TSC ticks), %d probes each:\n", n);
	for (int m = 0; m < 4; m++) {
		qsort(t[m], (size_t)n, sizeof(double), cmp);
		printf("   %-24s p10 %6.0f  p25 %6.0f  median %6.0f  p75 %6.0f  p90 %6.0f\n", names[m],
		       t[m][n / 10], t[m][n / 4], t[m][n / 2], t[m][3 * n / 4], t[m][9 * n / 10]);
	}
	/* The threshold between L1 and memory that misclassifies fewest of the two. */
	{
		double best_thr = 0;
		int best_err = 2 * n + 1;

		for (int k = 0; k < n; k++) {
			double thr = t[3][k];
			int err = 0;

			for (int j = 0; j < n; j++)
				err += (t[0][j] >= thr) + (t[3][j] < thr);
			if (err < best_err) {
				best_err = err;
				best_thr = thr;
			}
		}
		printf("   best threshold %.0f ticks: told \"memory\":", best_thr);
		for (int m = 0; m < 4; m++) {
			int c = 0;

			for (int j = 0; j < n; j++)
				c += t[m][j] >= best_thr;
			printf(" %s %.0f%%%s", m == 0 ? "L1" : m == 1 ? "1MiB" : m == 2 ? "8MiB" : "memory",
			       100.0 * c / n, m < 3 ? "," : "\n");
		}
	}
	for (int m = 0; m < 4; m++)
		free(t[m]);
	free(buf);
	free(evict);
}

int main(int argc, char **argv)
{
	int n = 400;

	if (argc == 3 && !strcmp(argv[1], "-n"))
		n = atoi(argv[2]);
	if (n < 10)
		n = 10;
	step_cost();
	probes(n);
	return 0;
}

#else

int main(void)
{
	printf("probe-bench: x86-64 only\n");
	return 0;
}

#endif
