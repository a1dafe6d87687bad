/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-watch - a workload for dcpiwatch: functions called a known number of
 * times, in one thread or several, a function that takes a known time
 * (measured here too), recursion, longjmp over watched functions, and a
 * tight loop for the cost per probed call.
 *
 *   wl-watch count N            counted() N times; never() not at all
 *   wl-watch threads T N        T threads, each calling counted() N times
 *   wl-watch timed N US         busy(US) N times; prints "self_mean_ns M" and
 *                               "self_cpu_ns C": busy's own measure of itself
 *   wl-watch recurse N D        N times rec(D): D + 1 nested calls each
 *   wl-watch longjmp N          N times: jumper() -> deep() -> longjmp out of both;
 *                               then N normal calls of jumper()
 *   wl-watch loop N             tiny() N times; prints "ns_per_call X"
 *   wl-watch queue N            push() then pop() N times (--between push pop)
 *   wl-watch wait S             sleeps S seconds calling counted() every ms (for -p)
 *   wl-watch exit               quitter() calls exit(): a call open at the end
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile long sink;
static jmp_buf env;

static long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

NOINLINE long counted(long x)
{
	sink += x;
	return sink;
}

NOINLINE long never(long x)
{
	sink -= x;
	return sink;
}

NOINLINE long tiny(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static long busy_wall, busy_cpu;

/*
 * Spins on the thread's CPU clock for us microseconds of CPU time, and
 * measures itself from its first line to its last: the time dcpiwatch
 * should report, without what its probes cost at entry and return.
 */
NOINLINE void busy(long us)
{
	long w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), c;

	do
		sink++;
	while ((c = now_ns(CLOCK_THREAD_CPUTIME_ID)) < c0 + us * 1000);
	busy_cpu += c - c0;
	busy_wall += now_ns(CLOCK_MONOTONIC) - w0;
}

NOINLINE long rec(long depth)
{
	long r;

	if (depth <= 0)
		return sink;
	r = rec(depth - 1);
	/* keeps the compiler from turning the recursion into a loop */
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE void deep(int jump)
{
	sink++;
	if (jump)
		longjmp(env, 1);
}

NOINLINE void jumper(int jump)
{
	deep(jump);
	sink++;
}

NOINLINE void push(long x)
{
	sink += x;
}

NOINLINE void pop(long x)
{
	sink -= x;
}

NOINLINE void quitter(int code)
{
	fflush(stdout);
	exit(code);
}

struct targ {
	long n;
};

static void *thread_main(void *p)
{
	const struct targ *a = p;

	for (long i = 0; i < a->n; i++)
		counted(i);
	return NULL;
}

static int threads(int t, long n)
{
	pthread_t th[64];
	struct targ a = { n };

	if (t < 1 || t > 64)
		return 2;
	for (int i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, thread_main, &a))
			return 1;
	for (int i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static void timed(long n, long us)
{
	for (long i = 0; i < n; i++)
		busy(us);
	printf("self_mean_ns %ld\nself_cpu_ns %ld\n", busy_wall / n, busy_cpu / n);
}

static void jumps(long n)
{
	for (volatile long i = 0; i < n; i++)
		if (!setjmp(env))
			jumper(1);
	for (long i = 0; i < n; i++)
		jumper(0);
}

static void loop(long n)
{
	long t0 = now_ns(CLOCK_MONOTONIC);

	for (long i = 0; i < n; i++)
		sink += tiny(i);
	printf("ns_per_call %.1f\n", (double)(now_ns(CLOCK_MONOTONIC) - t0) / (double)n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;

	if (!strcmp(mode, "count")) {
		for (long i = 0; i < a; i++)
			counted(i);
		if (sink == -12345)
			never(1);
	} else if (!strcmp(mode, "threads")) {
		return threads((int)a, b);
	} else if (!strcmp(mode, "timed")) {
		timed(a, b);
	} else if (!strcmp(mode, "recurse")) {
		for (long i = 0; i < a; i++)
			rec(b);
	} else if (!strcmp(mode, "longjmp")) {
		jumps(a);
	} else if (!strcmp(mode, "loop")) {
		loop(a);
	} else if (!strcmp(mode, "queue")) {
		for (long i = 0; i < a; i++) {
			push(i);
			busy(50);
			pop(i);
		}
	} else if (!strcmp(mode, "exit")) {
		counted(1);
		quitter(0);
	} else if (!strcmp(mode, "wait")) {
		long end = now_ns(CLOCK_MONOTONIC) + a * 1000000000L;

		printf("ready\n");
		fflush(stdout);
		while (now_ns(CLOCK_MONOTONIC) < end) {
			counted(1);
			usleep(1000);
		}
	} else {
		fprintf(stderr, "usage: wl-watch count|threads|timed|recurse|longjmp|loop|queue|wait|exit ...\n");
		return 2;
	}
	return 0;
}
