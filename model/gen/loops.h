/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/gen/loops.h - small loops, each one function in x86-64 assembly,
 * that model/gen/measure.c times on the CPU it runs on and
 * tests/unit/test-model-zen5.c decodes and schedules: the same machine code
 * is measured and modelled (docs/model.md, "Measured on this machine").
 *
 * void NAME(long iterations, void *buf): runs SETUP once, then BODY four
 * times and `dec rbx; jnz` per iteration.  NAME_body .. NAME_end is the
 * loop (what the unit test schedules).  buf is 1 KiB, 64-byte aligned, with
 * buf[0], buf[1] and buf[40] (8-byte words) pointing at buf.  In the body:
 * rdi = buf, rbx = the count; rax = buf, ecx = 0, r9 = 1 unless SETUP says
 * otherwise; rax rcx rdx rsi r8-r15 are free (the callee-saved ones are
 * saved around the loop).
 *
 * ML_LOOPS(X) lists them as X(NAME, ITEMS, WHAT, SETUP, BODY): ITEMS steps
 * per BODY, WHAT says what a step is.
 */
#ifndef DCPI_MODEL_GEN_LOOPS_H
#define DCPI_MODEL_GEN_LOOPS_H

#define ML_R12(f) f(r8) f(r9) f(r10) f(r11) f(r12) f(r13) f(r14) f(r15) f(rax) f(rcx) f(rdx) f(rsi)
#define ML_ADD(r) "add $1, %" #r "\n"
#define ML_MOVI(r) "mov $1, %" #r "\n"
#define ML_IMUL(r) "imul %" #r ", %" #r "\n"
#define ML_LEA(r) "lea (%rdi,%rdi), %" #r "\n"
#define ML_LEA3(r) "lea 8(%rdi,%rdi), %" #r "\n"
#define ML_LOAD(r) "mov 8(%rdi), %" #r "\n"
#define ML_VADD(k) "vaddps %zmm8, %zmm" #k ", %zmm" #k "\n"
#define ML_VADD8 ML_VADD(0) ML_VADD(1) ML_VADD(2) ML_VADD(3) ML_VADD(4) ML_VADD(5) ML_VADD(6) ML_VADD(7)
#define ML_VADDY(k) "vaddps %ymm8, %ymm" #k ", %ymm" #k "\n"
#define ML_VADDY8 ML_VADDY(0) ML_VADDY(1) ML_VADDY(2) ML_VADDY(3) ML_VADDY(4) ML_VADDY(5) \
	ML_VADDY(6) ML_VADDY(7)
/* a taken jump over an int3 (so the scheduler sees it taken too) */
#define ML_JMP(r) "add $1, %" #r "\njmp 2f\nint3\n2:\n"

#define ML_LOOPS(X)                                                                          \
	X(ml_add_chain, 1, "dependent add (1 cycle)", "", "add $1, %r8\n")                   \
	X(ml_load, 1, "load-use mov r,[r]", "", "mov (%rax), %rax\n")                         \
	X(ml_load_d8, 1, "load-use mov r,[r+8]", "", "mov 8(%rax), %rax\n")                   \
	X(ml_load_d320, 1, "load-use mov r,[r+320]", "", "mov 320(%rax), %rax\n")             \
	X(ml_load_bi, 1, "load-use mov r,[r+r]", "", "mov (%rax,%rcx), %rax\n")               \
	X(ml_load_bi2, 1, "load-use mov r,[r+r*2]", "", "mov (%rax,%rcx,2), %rax\n")          \
	X(ml_load_bi8, 1, "load-use mov r,[r+r*8]", "", "mov (%rax,%rcx,8), %rax\n")          \
	X(ml_load_bid, 1, "load-use mov r,[r+r+8]", "", "mov 8(%rax,%rcx), %rax\n")           \
	X(ml_load_bi8d, 1, "load-use mov r,[r+r*8+8]", "", "mov 8(%rax,%rcx,8), %rax\n")      \
	X(ml_lea_bi, 1, "lea r,[r+r] latency", "", "lea (%r8,%rcx), %r8\n")                  \
	X(ml_lea_bi4, 1, "lea r,[r+r*4] latency", "", "lea (%r8,%rcx,4), %r8\n")             \
	X(ml_lea_bd, 1, "lea r,[r+8] latency", "", "lea 8(%r8), %r8\n")                      \
	X(ml_lea_bid, 1, "lea r,[r+r+8] latency", "", "lea 8(%r8,%rcx), %r8\n")              \
	X(ml_lea_bi4d, 1, "lea r,[r+r*4+8] latency", "", "lea 8(%r8,%rcx,4), %r8\n")         \
	X(ml_lea_tp, 12, "independent lea r,[r+r]", "", ML_R12(ML_LEA))                       \
	X(ml_lea3_tp, 12, "independent lea r,[r+r+8]", "", ML_R12(ML_LEA3))                   \
	X(ml_lea3_rol, 1, "2 lea r,[r+r+8] + 3 rol", "",                                      \
	  "lea 8(%rdi,%rdi), %r8\nlea 8(%rdi,%rdi), %r9\nrol $3, %r10\nrol $3, %r11\n"        \
	  "rol $3, %r12\n")                                                                  \
	X(ml_movi_tp, 12, "independent mov r,imm", "", ML_R12(ML_MOVI))                       \
	X(ml_add_tp, 12, "add r,imm, 12 chains", "", ML_R12(ML_ADD))                          \
	X(ml_imul_tp, 12, "imul r,r, 12 chains", "", ML_R12(ML_IMUL))                         \
	X(ml_imul, 1, "imul r,r latency", "", "imul %r8, %r8\n")                              \
	X(ml_load_tp, 12, "independent loads", "", ML_R12(ML_LOAD))                           \
	X(ml_ld4st2, 1, "4 loads + 2 stores", "",                                             \
	  "mov (%rdi), %r8\nmov 8(%rdi), %r9\nmov 16(%rdi), %r10\nmov 24(%rdi), %r11\n"       \
	  "mov %r12, 64(%rdi)\nmov %r13, 128(%rdi)\n")                                       \
	X(ml_ld2st2, 1, "2 loads + 2 stores", "",                                             \
	  "mov (%rdi), %r8\nmov 8(%rdi), %r9\nmov %r12, 64(%rdi)\nmov %r13, 128(%rdi)\n")     \
	X(ml_fwd, 1, "add + store + reload of [r+8]", "",                                     \
	  "add $1, %r8\nmov %r8, 8(%rdi)\nmov 8(%rdi), %r8\n")                               \
	X(ml_div, 1, "xor edx,edx + div r64 (small)", "mov $1000, %eax\n",                    \
	  "xor %edx, %edx\ndiv %r9\n")                                                       \
	X(ml_idiv, 1, "cqo + idiv r64 (small)", "mov $1000, %eax\n", "cqo\nidiv %r9\n")        \
	X(ml_div_tp, 1, "independent div r64 (small)", "",                                    \
	  "mov $1000, %eax\nxor %edx, %edx\ndiv %r9\n")                                      \
	X(ml_lock, 1, "lock xadd [m],r", "", "lock xadd %r8, 64(%rdi)\n")                     \
	X(ml_jmp, 4, "add + taken jmp", "", ML_JMP(r8) ML_JMP(r10) ML_JMP(r11) ML_JMP(r12))   \
	X(ml_vaddps, 1, "vaddps ymm latency", "", "vaddps %ymm1, %ymm0, %ymm0\n")             \
	X(ml_vaddps_z, 1, "vaddps zmm latency", "", "vaddps %zmm1, %zmm0, %zmm0\n")           \
	X(ml_vaddps_ytp, 8, "vaddps ymm, 8 chains", "", ML_VADDY8)                            \
	X(ml_vaddps_ztp, 8, "vaddps zmm, 8 chains", "", ML_VADD8)                             \
	X(ml_vpaddd, 1, "vpaddd ymm latency", "", "vpaddd %ymm1, %ymm0, %ymm0\n")             \
	X(ml_movq_rt, 1, "vmovq xmm,r + vmovq r,xmm", "",                                     \
	  "vmovq %r8, %xmm0\nvmovq %xmm0, %r8\n")                                             \
	X(ml_vecld, 1, "vmovq xmm,[r] + vmovq r,xmm", "",                                     \
	  "vmovq (%rax), %xmm0\nvmovq %xmm0, %rax\n")

#define ML_ASM(name, items, what, setup, body)                                               \
	".globl " #name "\n.type " #name ", @function\n" #name ":\n"                         \
	"push %rbx\npush %r12\npush %r13\npush %r14\npush %r15\n"                            \
	"mov %rdi, %rbx\nmov %rsi, %rdi\nmov %rsi, %rax\nxor %ecx, %ecx\nmov $1, %r9d\n"      \
	setup ".p2align 6\n.globl " #name "_body\n" #name "_body:\n" body body body body     \
	"dec %rbx\njnz " #name "_body\n.globl " #name "_end\n" #name "_end:\n"               \
	"vzeroupper\npop %r15\npop %r14\npop %r13\npop %r12\npop %rbx\nret\n"                \
	".size " #name ", .-" #name "\n"

#define ML_DECLARE(name, items, what, setup, body)                                           \
	void name(long iterations, void *buf);                                               \
	extern const unsigned char name##_body[], name##_end[];

ML_LOOPS(ML_DECLARE)

struct measured_loop {
	const char *name, *what;
	void (*fn)(long iterations, void *buf);
	const unsigned char *body, *end;
	unsigned items;                 /* steps per iteration: 4 x ITEMS */
};

#define ML_ENTRY(name, items, what, setup, body) { #name, what, name, name##_body, name##_end, 4 * (items) },

/* Defines the loops (in one translation unit of the program) and the table. */
#define ML_DEFINE_LOOPS                                                                      \
	__asm__(".text\n" ML_LOOPS(ML_ASM) ".previous\n");                                   \
	static const struct measured_loop measured_loops[] = { ML_LOOPS(ML_ENTRY) }

#endif
