/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/gen/measure.c - measures a few latencies and throughputs of the CPU
 * it runs on, to check (and correct) the machine facts of a model derived
 * from llvm-mca (docs/model.md, "Measured on this machine").  Offline tool,
 * not part of libdcpi:
 *
 *   cc -O2 -I. -o measure model/gen/measure.c && ./measure [NAME-PART]
 *
 * Without a PMU there is no cycle counter: every loop is timed with
 * CLOCK_THREAD_CPUTIME_ID (the time this thread ran: on a shared machine
 * the time it waited for a CPU does not count) and divided by the time of a
 * chain of dependent adds timed just before it, which take one cycle each on
 * every x86-64 core of the last 20 years.  Each figure is the best of
 * several runs (other load only adds time).  An argument runs only the
 * tests whose name contains it.
 *
 * Two sets of loops: the first in C with inline assembly (the Zen 4 figures
 * of docs/model.md), the second model/gen/loops.h, written in assembly and
 * also scheduled by tests/unit/test-model-zen5.c, so that the model is
 * checked against exactly the code that was timed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/gen/loops.h"

ML_DEFINE_LOOPS;

#define N 20000000L  /* iterations; each runs 8 copies of the measured step */
#define RUNS 15

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define REP8(s) s s s s s s s s

static void add_chain(long n)
{
	uint64_t x = 0;

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("add $1, %0\n\t") : "+r"(x));
}

static void *chase_cell[8] __attribute__((aligned(64)));

static void load_chain(long n)
{
	void *p = chase_cell;

	chase_cell[0] = chase_cell;
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov (%0), %0\n\t") : "+r"(p));
}

static void load_chain_disp(long n)
{
	char *p = (char *)chase_cell;

	chase_cell[1] = chase_cell;
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov 8(%0), %0\n\t") : "+r"(p));
}

/* A chain of loads addressed by ADDR: %0 the pointer, %1 an index register holding 0. */
#define LOAD_CHAIN_INDEXED(name, addr)                                                    \
	static void name(long n)                                                          \
	{                                                                                 \
		void *p = chase_cell;                                                     \
		long zero = 0;                                                            \
                                                                                          \
		chase_cell[0] = chase_cell;                                               \
		for (long i = 0; i < n; i++)                                              \
			__asm__ volatile(REP8("mov " addr ", %0\n\t") : "+r"(p) : "r"(zero)); \
	}

LOAD_CHAIN_INDEXED(load_chain_index, "(%0,%1,8)")
/* an index without scale: as fast as [r] (the scaled index costs a cycle) */
LOAD_CHAIN_INDEXED(load_chain_index1, "(%0,%1)")

/* store then reload the same slot: the store-to-load forwarding latency + 1 add */
static void store_forward(long n)
{
	uint64_t x = 0;
	uint64_t slot[8] __attribute__((aligned(64)));

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov %0, (%1)\n\tmov (%1), %0\n\t")
				 : "+r"(x) : "r"(slot) : "memory");
}

static void imul_chain(long n)
{
	uint64_t x = 3;

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("imul %0, %0\n\t") : "+r"(x));
}

/*
 * A chain of divides: STEP divides rdx:rax (edx:eax for a 32-bit TYPE) by
 * %2, which holds DIVISOR, and leaves in rax the next dividend; rax starts
 * at A0.  n steps in all: n / 8 loops of 8.
 */
#define DIV_CHAIN(name, type, a0, divisor, step)                                          \
	static void name(long n)                                                          \
	{                                                                                 \
		type a = a0, d = 0, c = divisor;                                          \
                                                                                          \
		for (long i = 0; i < n / 8; i++)                                          \
			__asm__ volatile(REP8(step) : "+a"(a), "+d"(d) : "r"(c));          \
	}

/* div rcx with rdx = 0, rax small: quotient feeds the next dividend */
DIV_CHAIN(div_chain, uint64_t, 1000, 1, "xor %%edx, %%edx\n\tdiv %2\n\t")

static void lock_chain(long n)
{
	uint64_t cell = 0, x = 1;

	for (long i = 0; i < n / 8; i++)
		__asm__ volatile(REP8("lock xadd %0, (%1)\n\t") : "+r"(x) : "r"(&cell) : "memory");
}

/* vector: movq xmm <- gpr <- load; here: a dependent chain of vmovq loads via a GPR */
static void vec_load_chain(long n)
{
	void *p = chase_cell;

	chase_cell[0] = chase_cell;
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("vmovq (%0), %%xmm0\n\tvmovq %%xmm0, %0\n\t")
				 : "+r"(p) : : "xmm0");
}

static void movq_roundtrip(long n)
{
	uint64_t x = 0;

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("vmovq %0, %%xmm0\n\tvmovq %%xmm0, %0\n\t") : "+r"(x) : : "xmm0");
}

static void stores(long n)
{
	uint64_t slot[16] __attribute__((aligned(64)));

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov %%rax, (%0)\n\tmov %%rax, 64(%0)\n\t")
				 : : "r"(slot) : "memory", "rax");
}

static void loads(long n)
{
	uint64_t slot[16] __attribute__((aligned(64))) = { 0 };

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov (%0), %%r8\n\tmov 8(%0), %%r9\n\tmov 16(%0), %%r10\n\t")
				 : : "r"(slot) : "memory", "r8", "r9", "r10");
}

static void indep_adds(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("add $1, %%r8\n\tadd $1, %%r9\n\tadd $1, %%r10\n\tadd $1, %%r11\n\t"
				      "add $1, %%rsi\n\tadd $1, %%rdi\n\t")
				 : : : "r8", "r9", "r10", "r11", "rsi", "rdi");
}

static void vaddps_zmm(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("vaddps %%zmm1, %%zmm0, %%zmm0\n\t") : : : "xmm0", "xmm1");
}

static void vaddps_ymm(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("vaddps %%ymm1, %%ymm0, %%ymm0\n\t") : : : "xmm0", "xmm1");
}

/* 8 independent chains: enough to hide a 3-cycle latency on 2 pipes */
#define VADD8(r) "vaddps %%" r "8, %%" r "0, %%" r "0\n\tvaddps %%" r "8, %%" r "1, %%" r "1\n\t" \
	"vaddps %%" r "8, %%" r "2, %%" r "2\n\tvaddps %%" r "8, %%" r "3, %%" r "3\n\t" \
	"vaddps %%" r "8, %%" r "4, %%" r "4\n\tvaddps %%" r "8, %%" r "5, %%" r "5\n\t" \
	"vaddps %%" r "8, %%" r "6, %%" r "6\n\tvaddps %%" r "8, %%" r "7, %%" r "7\n\t"
#define VCLOBBER "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8"

static void vaddps_zmm_tp(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(VADD8("zmm") VADD8("zmm") : : : VCLOBBER);
}

static void vaddps_ymm_tp(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(VADD8("ymm") VADD8("ymm") : : : VCLOBBER);
}

static void stores_same_line(long n)
{
	uint64_t slot[16] __attribute__((aligned(64)));

	for (long i = 0; i < n; i++)
		__asm__ volatile(REP8("mov %%rax, (%0)\n\tmov %%rax, 8(%0)\n\t")
				 : : "r"(slot) : "memory", "rax");
}

DIV_CHAIN(div32_chain, uint32_t, 1000, 1, "xor %%edx, %%edx\n\tdivl %2\n\t")
DIV_CHAIN(idiv64_chain, uint64_t, 1000, 1, "cqo\n\tidivq %2\n\t")

/* independent divides (the quotient is not used): throughput */
static void div_tp(long n)
{
	uint64_t c = 1;

	for (long i = 0; i < n / 8; i++)
		__asm__ volatile(REP8("mov $1000, %%eax\n\txor %%edx, %%edx\n\tdiv %0\n\t")
				 : : "r"(c) : "rax", "rdx");
}

/* the same with a 64-bit quotient of ~2^62 */
DIV_CHAIN(div_big_chain, uint64_t, 1ull << 62, 3,
	  "xor %%edx, %%edx\n\tdiv %2\n\tmov $0x4000000000000000, %%rax\n\tadd %%rdx, %%rax\n\t")

/*
 * Branch mispredicts: a loop over random bits with a jump on each, against
 * the same loop over zeros (always predicted).  The difference over the
 * mispredicts expected (half the branches) is the penalty.
 */
#define RAND_BITS (1 << 16)
static unsigned char rand_bits[RAND_BITS], zero_bits[RAND_BITS];

static void branch_walk(const unsigned char *bits, long n)
{
	for (long i = 0; i < n; i++) {
		const unsigned char *p = bits + (i * 8 & (RAND_BITS - 1));

		__asm__ volatile(
#define B1(k) "testb $1, " #k "(%0)\n\tjz 2f\n\tadd $1, %%r8\n2:\n\t"
			B1(0) B1(1) B1(2) B1(3) B1(4) B1(5) B1(6) B1(7)
#undef B1
			: : "r"(p) : "r8", "cc", "memory");
	}
}

static void branch_random(long n) { branch_walk(rand_bits, n); }
static void branch_predictable(long n) { branch_walk(zero_bits, n); }

static double best(void (*fn)(long), long n)
{
	double b = 1e30;

	for (int r = 0; r < RUNS; r++) {
		double t = now();

		fn(n);
		t = now() - t;
		if (t < b)
			b = t;
	}
	return b;
}

struct test {
	const char *name;
	void (*fn)(long);
	double per_iter;  /* measured steps per loop iteration, or 1 when the loop runs n/8 times */
	const char *unit;
	int avx512;
};

static uint64_t loop_buf[128] __attribute__((aligned(64)));

static void loop_run(long n)
{
	static const struct measured_loop *cur;

	if (!n) {
		cur = (const struct measured_loop *)loop_buf[127];
		return;
	}
	memset(loop_buf, 0, sizeof(loop_buf) - 8);
	loop_buf[0] = loop_buf[1] = loop_buf[40] = (uint64_t)(uintptr_t)loop_buf;
	cur->fn(n, loop_buf);
}

/* The loops of model/gen/loops.h: cycles per iteration (of 4 bodies) and per step. */
static void time_loops(const char *only)
{
	long n = N / 16;

	printf("model/gen/loops.h (cycles per iteration of 4 bodies + dec/jnz, per step):\n");
	for (size_t i = 0; i < sizeof(measured_loops) / sizeof(measured_loops[0]); i++) {
		const struct measured_loop *l = &measured_loops[i];
		double cycle, t;

		if (only && !strstr(l->name, only) && !strstr(l->what, only))
			continue;
		if (strstr(l->name, "_z") && !__builtin_cpu_supports("avx512f"))
			continue;
		loop_buf[127] = (uint64_t)(uintptr_t)l;
		loop_run(0);
		cycle = best(add_chain, n) / (n * 8.0);
		t = best(loop_run, n);
		printf("%-16s %-32s %7.2f %6.3f\n", l->name, l->what, t / n / cycle,
		       t / n / cycle / l->items);
	}
}

int main(int argc, char **argv)
{
	static const struct test tests[] = {
		{ "load-use, mov r,[r]", load_chain, 8, "cycles latency", 0 },
		{ "load-use, mov r,[r+8]", load_chain_disp, 8, "cycles latency", 0 },
		{ "load-use, mov r,[r+r*8]", load_chain_index, 8, "cycles latency", 0 },
		{ "load-use, mov r,[r+r]", load_chain_index1, 8, "cycles latency", 0 },
		{ "vmovq xmm,[r] + vmovq r,xmm", vec_load_chain, 8, "cycles latency (pair)", 0 },
		{ "vmovq xmm,r + vmovq r,xmm", movq_roundtrip, 8, "cycles latency (pair)", 0 },
		{ "store + reload same address", store_forward, 8, "cycles latency (pair)", 0 },
		{ "imul r,r", imul_chain, 8, "cycles latency", 0 },
		{ "xor edx,edx + div r64 (small)", div_chain, 1, "cycles latency (pair)", 0 },
		{ "xor edx,edx + div r32 (small)", div32_chain, 1, "cycles latency (pair)", 0 },
		{ "cqo + idiv r64 (small)", idiv64_chain, 1, "cycles latency (pair)", 0 },
		{ "div r64, 62-bit quotient, +2", div_big_chain, 1, "cycles latency (chain)", 0 },
		{ "div r64 independent", div_tp, 1, "cycles per div", 0 },
		{ "lock xadd [m],r", lock_chain, 1, "cycles latency", 0 },
		{ "stores to 1 line", stores_same_line, 16, "cycles per store", 0 },
		{ "stores to 2 lines", stores, 16, "cycles per store", 0 },
		{ "loads", loads, 24, "cycles per load", 0 },
		{ "independent adds", indep_adds, 48, "cycles per add", 0 },
		{ "vaddps ymm chain", vaddps_ymm, 8, "cycles latency", 0 },
		{ "vaddps zmm chain", vaddps_zmm, 8, "cycles latency", 1 },
		{ "vaddps ymm x8 independent", vaddps_ymm_tp, 16, "cycles per op", 0 },
		{ "vaddps zmm x8 independent", vaddps_zmm_tp, 16, "cycles per op", 1 },
		{ "random branch (8 a group)", branch_random, 8, "cycles per branch", 0 },
		{ "predictable branch (8 a group)", branch_predictable, 8, "cycles per branch", 0 },
	};
	double cycle = best(add_chain, N) / (N * 8.0);

	__builtin_cpu_init();
	srand(1);
	for (size_t i = 0; i < RAND_BITS; i++)
		rand_bits[i] = (unsigned char)(rand() >> 7 & 1);
	printf("calibration: 1 cycle = %.4f ns (%.0f MHz)\n", cycle * 1e9, 1e-6 / cycle);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		long n = N / 4;
		double t;

		if (tests[i].avx512 && !__builtin_cpu_supports("avx512f"))
			continue;
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		cycle = best(add_chain, n) / (n * 8.0);
		t = best(tests[i].fn, n);
		printf("%-32s %6.2f %s\n", tests[i].name, t / (n * tests[i].per_iter) / cycle,
		       tests[i].unit);
	}
	time_loops(argc > 1 ? argv[1] : NULL);
	cycle = best(add_chain, N) / (N * 8.0);
	printf("calibration again: 1 cycle = %.4f ns\n", cycle * 1e9);
	return 0;
}
