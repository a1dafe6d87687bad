/* SPDX-License-Identifier: GPL-2.0-or-later
 * tests/programs/shapes.c - control-flow shapes with known answers, for the
 * CFG and symbol tests (tests/unit/test-disasm-cfg.c) and as a small
 * workload to profile.  Built by make check with fixed flags (-O0/-O2,
 * with and without -g, PIE and not, stripped copies): see tests/Makemodule.am.
 *
 *   shapes WORKLOAD [N]     WORKLOAD: loops, switch, calls, all (default)
 *
 * Every function is noinline so that each keeps its own procedure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

/* A diamond: entry and join run equally often, the arms do not. */
__attribute__((noinline)) int if_else(int x)
{
	int r;

	if (x > 10)
		r = x * 3 + sink;
	else
		r = x - 7 - sink;
	return r + 1;
}

/* Two nested loops: the inner body runs n*m times, the outer n times. */
__attribute__((noinline)) long nested_loops(int n, int m)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			s += (i ^ j) + sink;
	return s;
}

/* A switch dense enough for a jump table at -O2. */
__attribute__((noinline)) void switch_table(int k)
{
	switch (k) {
	case 0: sink = 1; break;
	case 1: sink += 3; break;
	case 2: sink ^= 5; break;
	case 3: sink = sink * 7; break;
	case 4: sink -= 11; break;
	case 5: sink = sink << 2; break;
	case 6: sink = ~sink; break;
	case 7: sink = sink / 3; break;
	default: sink = 0; break;
	}
}

/* A local function that never returns: calls to it end blocks. */
__attribute__((noinline, noreturn)) static void fatal(const char *msg)
{
	fputs(msg, stderr);
	abort();
}

/* Calls to noreturn functions: exit() through the PLT and fatal(). */
__attribute__((noinline)) int checked(int x)
{
	if (x < 0) {
		fprintf(stderr, "negative\n");
		exit(2);
	}
	if (x == 12345)
		fatal("12345\n");
	return x + sink;
}

/* A tail call at -O2 (jmp if_else). */
__attribute__((noinline)) int tail_caller(int x)
{
	return if_else(x + 1);
}

/* A loop that never exits. */
__attribute__((noinline, noreturn)) void spin(volatile int *p)
{
	for (;;) {
		if (*p)
			*p = 0;
		else
			(*p)++;
	}
}

static void work(const char *what, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		if (!strcmp(what, "loops") || !strcmp(what, "all"))
			s += nested_loops(40, 50);
		if (!strcmp(what, "switch") || !strcmp(what, "all"))
			switch_table((int)(i % 10));
		if (!strcmp(what, "calls") || !strcmp(what, "all"))
			s += if_else((int)(i % 20)) + tail_caller((int)(i % 7)) + checked((int)(i & 7));
	}
	printf("%ld\n", s + sink);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	long n = argc > 2 ? atol(argv[2]) : 1000;

	if (!strcmp(what, "spin"))
		spin(&sink);
	work(what, n);
	return 0;
}
