/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-callers: who called the hot code, for the call-graph tests.  Built
 * -O2 without frame pointers, as most binaries are.
 *
 *   wl-callers [-n UNIT] [--thread | --signal | --asm]
 *
 * leaf() runs a dependent multiply-add chain; caller_a() asks it for 3
 * units of work and caller_b() for 1, so 3/4 of leaf's time is spent on
 * behalf of caller_a.  ping() and pong() call each other down to a depth
 * before calling leaf() for half a unit (a cycle of the call graph).
 * With --thread the rounds run in a second thread (start_thread, clone3)
 * while main() waits; with --signal, in a handler of SIGUSR1 that main()
 * raises (the stacks go through the kernel's signal frame and glibc's
 * __restore_rt into raise() and main()).  With --asm, main() calls
 * caller_asm(), whose asm_leaf() keeps its CFA as OpenSSL's assembly does:
 * for the first half of its work in rax (the stack realigned), for the
 * second as the entry's rsp in a stack slot (cfa = *(rsp + 56) + 8).
 * Prints the shares it measured of its own CPU time.
 */
#include "wl.h"

#include <pthread.h>
#include <signal.h>

#define ROUNDS 20

static uint64_t unit;

__attribute__((noinline)) uint64_t leaf(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* The results are used after the calls: no tail calls. */
__attribute__((noinline)) uint64_t caller_a(uint64_t n, uint64_t x)
{
	return leaf(3 * n, x) * 3 + 1;
}

__attribute__((noinline)) uint64_t caller_b(uint64_t n, uint64_t x)
{
	return leaf(n, x) * 5 + 2;
}

uint64_t pong(int depth, uint64_t x);

__attribute__((noinline)) uint64_t ping(int depth, uint64_t x)
{
	return (depth ? pong(depth - 1, x) : leaf(unit / 2, x)) + 1;
}

__attribute__((noinline)) uint64_t pong(int depth, uint64_t x)
{
	return ping(depth, x ^ 7) * 3;
}

/* uint64_t asm_leaf(uint64_t n, uint64_t x): x = x * K + 1, 2n times. */
uint64_t asm_leaf(uint64_t n, uint64_t x);
__asm__(".text\n"
	".globl asm_leaf\n"
	".type asm_leaf, @function\n"
	"asm_leaf:\n"
	".cfi_startproc\n"
	"	mov %rsp, %rax\n"
	".cfi_def_cfa_register %rax\n"
	"	sub $64, %rsp\n"
	"	and $-32, %rsp\n"
	"	movabs $6364136223846793005, %rdx\n"
	"	mov %rsi, %r8\n"
	"	mov %rdi, %rcx\n"
	"1:	imul %rdx, %r8\n"
	"	inc %r8\n"
	"	dec %rcx\n"
	"	jnz 1b\n"
	"	mov %rax, 56(%rsp)\n"
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 56; DW_OP_deref; DW_OP_plus_uconst 8 */
	".cfi_escape 0x0f, 0x05, 0x77, 0x38, 0x06, 0x23, 0x08\n"
	"	xor %eax, %eax\n"
	"	mov %rdi, %rcx\n"
	"2:	imul %rdx, %r8\n"
	"	inc %r8\n"
	"	dec %rcx\n"
	"	jnz 2b\n"
	"	mov 56(%rsp), %rax\n"
	".cfi_def_cfa %rax, 8\n"
	"	mov %rax, %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	mov %r8, %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size asm_leaf, . - asm_leaf\n");

__attribute__((noinline)) uint64_t caller_asm(uint64_t n, uint64_t x)
{
	for (int r = 0; r < ROUNDS; r++)
		x = asm_leaf(n, x) * 3 + 1;
	return x;
}

static double t_a, t_b, t_cycle;

__attribute__((noinline)) uint64_t rounds(uint64_t x)
{
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = wl_thread_cpu();

		x = caller_a(unit, x);
		t_a += wl_thread_cpu() - t0;
		t0 = wl_thread_cpu();
		x = caller_b(unit, x);
		t_b += wl_thread_cpu() - t0;
		t0 = wl_thread_cpu();
		x = ping(8, x);
		t_cycle += wl_thread_cpu() - t0;
	}
	return x;
}

static void *thread_main(void *arg)
{
	wl_keep(rounds((uint64_t)(uintptr_t)arg));
	return NULL;
}

static void on_signal(int sig)
{
	wl_keep(rounds((uint64_t)sig));
}

int main(int argc, char **argv)
{
	double all;

	unit = wl_iterations(argc, argv, 200000000) / ROUNDS / 5;
	if (wl_flag(argc, argv, "--thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, (void *)(uintptr_t)1) ||
		    pthread_join(t, NULL))
			return 1;
	} else if (wl_flag(argc, argv, "--asm")) {
		wl_keep(caller_asm(unit * 2, 1));
		return 0;
	} else if (wl_flag(argc, argv, "--signal")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		if (sigaction(SIGUSR1, &sa, NULL) || raise(SIGUSR1))
			return 1;
	} else {
		wl_keep(rounds(1));
	}
	all = t_a + t_b + t_cycle;
	printf("caller_a %.4f\ncaller_b %.4f\ncycle %.4f\n", t_a / all, t_b / all, t_cycle / all);
	return 0;
}
