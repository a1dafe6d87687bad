/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/unwind.h - unwinding a user stack from a sample: the registers
 * the kernel recorded (ip, sp, bp: PERF_SAMPLE_REGS_USER) and a copy of the
 * top of the stack (PERF_SAMPLE_STACK_USER), with the unwind tables of the
 * binaries the return addresses fall in (unwind/utable.h).
 *
 * Pure: it reads only the stack copy, never the process, and bounds every
 * step (depth, progress of the stack pointer), so any bytes are safe.
 *
 *   frame 0        the sampled ip (or, for a sample in the kernel, the user
 *                  ip where the thread entered it)
 *   frame 1..n-1   return addresses; their procedure is the one holding
 *                  the return address - 1 (the call)
 */
#ifndef DCPI_UNWIND_UNWIND_H
#define DCPI_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/utable.h"

#define UNWIND_MAX_FRAMES 128

/*
 * The registers a walk starts from: ip, sp and bp, and those of the other
 * general registers whose bit is set in known (gpr by DWARF number: 0 rax,
 * 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 8-15 r8-r15), for a CFA kept in one
 * of them (CFI_CFA_REG).
 */
struct unwind_regs {
	uint64_t ip, sp, bp;
	uint64_t gpr[16];
	uint16_t known;
};

/* A copy of the stack: the bytes at addresses [base, base + size). */
struct unwind_stack {
	uint64_t base;
	const uint8_t *data;
	size_t size;
};

/* Why a walk stopped. */
enum unwind_end {
	UNWIND_COMPLETE,        /* the outermost frame: its CFI leaves the return address undefined (or it is 0) */
	UNWIND_NO_TABLE,        /* a pc in an image without a table, and no frame pointer to follow */
	UNWIND_NO_CFI,          /* a pc no FDE covers, and no frame pointer to follow */
	UNWIND_TRUNCATED,       /* the stack copy ended */
	UNWIND_UNSUPPORTED,     /* a rule the unwinder does not follow (odd CFA rules, a CFA in a
				   register whose value in that frame is unknown) */
	UNWIND_BAD,             /* no progress, or a bad address: the frames were lost */
	UNWIND_DEPTH,           /* UNWIND_MAX_FRAMES reached */
	UNWIND__COUNT
};

/*
 * Finds the table for pc: returns it and sets *offset to pc's file offset
 * in its binary, or returns NULL if pc's image has no table (then the walk
 * falls back to the frame pointer, if allowed).  *mapped tells whether pc
 * is in a mapping at all (a return address that is not is garbage).
 */
typedef const struct utable *(*unwind_find_fn)(void *ctx, uint64_t pc, uint64_t *offset,
					       bool *mapped);

struct unwind_result {
	/*
	 * The sampled pc, then return addresses (the call is at pcs[i] - 1);
	 * through a signal frame, the start of the trampoline the handler
	 * returns to (glibc's __restore_rt) and the pc the signal interrupted,
	 * each + 1 so that the same rule finds them.
	 */
	uint64_t pcs[UNWIND_MAX_FRAMES];
	size_t n;
	enum unwind_end end;
	unsigned fp_steps;      /* frames found through the frame pointer */
};

/*
 * Walks the stack from regs.  With fp_fallback, a frame without CFI is
 * left through rbp (the frame-pointer chain: [rbp] = the caller's rbp,
 * [rbp + 8] = the return address) when rbp points into the stack copy
 * above sp.
 */
void unwind_stack(const struct unwind_regs *regs, const struct unwind_stack *stk,
		  unwind_find_fn find, void *ctx, bool fp_fallback, struct unwind_result *out);

#endif
