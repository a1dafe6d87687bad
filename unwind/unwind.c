/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/unwind.c - the table-driven x86-64 stack walk.
 */
#include "config.h"

#include "unwind/unwind.h"

#include <string.h>

/* Reads 8 bytes at addr from the copy; false if they are not all in it. */
static bool load(const struct unwind_stack *s, uint64_t addr, uint64_t *v)
{
	uint64_t off = addr - s->base;

	if (addr < s->base || off > s->size || s->size - off < 8)
		return false;
	memcpy(v, s->data + off, 8);
	return true;
}

struct walk {
	const struct unwind_stack *stk;
	uint64_t ip, sp, bp;
	bool bp_ok;             /* bp holds the caller's real rbp */
	bool interrupted;       /* ip was interrupted by a signal, not a return address */
	uint64_t gpr[16];       /* the other registers by DWARF number, where known */
	uint16_t known;
};

/*
 * The registers a caller may count on a callee to preserve (rbx, r12-r15:
 * rbp and rsp are followed apart).  The tables keep no rule for them, so a
 * step through a frame, which may have saved and reused them, loses their
 * values; the others keep theirs, as DWARF's default rule (the same value)
 * says, which is what code that keeps its CFA in one of them relies on.
 */
#define CALLEE_SAVED ((1u << 3) | (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15))

/*
 * Where x86-64 Linux's rt_sigframe keeps the interrupted registers: the
 * handler returns into the trampoline with rsp at the ucontext, whose
 * uc_mcontext (at 40) holds gregs in the order r8-r15, rdi, rsi, rbp, rbx,
 * rdx, rax, rcx, rsp, rip (<sys/ucontext.h>, the kernel's sigcontext).
 */
#define UC_GREG(i) (40 + 8 * (uint64_t)(i))
#define UC_RBP UC_GREG(10)
#define UC_RSP UC_GREG(15)
#define UC_RIP UC_GREG(16)
/* where gregs keeps each register by DWARF number (-1: rbp, rsp, apart) */
static const int8_t uc_greg[16] = { 13, 12, 14, 11, 9, 8, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7 };

/* Out of a signal trampoline into the code the signal interrupted. */
static bool signal_step(struct walk *w, enum unwind_end *end)
{
	uint64_t ip, sp, bp;

	if (!load(w->stk, w->sp + UC_RIP, &ip) || !load(w->stk, w->sp + UC_RSP, &sp) ||
	    !load(w->stk, w->sp + UC_RBP, &bp)) {
		*end = UNWIND_TRUNCATED;
		return false;
	}
	if (!sp || sp == w->sp) {
		*end = UNWIND_BAD;
		return false;
	}
	w->ip = ip;
	w->bp = bp;
	w->bp_ok = true;
	w->interrupted = true;
	w->known = 0;
	for (unsigned r = 0; r < 16; r++)
		if (uc_greg[r] >= 0 && load(w->stk, w->sp + UC_GREG(uc_greg[r]), &w->gpr[r]))
			w->known |= (uint16_t)(1u << r);
	w->sp = sp;
	return true;
}

/*
 * One step through the frame pointer: rbp must point into the copy, above
 * sp.  Returns false if it cannot.
 */
static bool fp_step(struct walk *w)
{
	uint64_t next_bp, ra;

	if (!w->bp_ok || w->bp < w->sp || (w->bp & 7) || !load(w->stk, w->bp, &next_bp) ||
	    !load(w->stk, w->bp + 8, &ra))
		return false;
	w->sp = w->bp + 16;
	w->bp = next_bp;
	w->ip = ra;
	w->known &= (uint16_t)~CALLEE_SAVED;
	return true;
}

/* The caller's CFA by the row's rule; 0 with *end set if it cannot be had. */
static uint64_t cfa_of(struct walk *w, const struct utable_row *row, uint64_t off,
		       enum unwind_end *end)
{
	uint64_t v;

	switch (row->cfa) {
	case CFI_CFA_RSP:
		return w->sp + (uint64_t)(int64_t)row->cfa_off;
	case CFI_CFA_RBP:
		if (!w->bp_ok)
			break;
		return w->bp + (uint64_t)(int64_t)row->cfa_off;
	case CFI_CFA_DEREF_RBP:
		if (!w->bp_ok)
			break;
		if (!load(w->stk, w->bp + (uint64_t)(int64_t)row->cfa_off, &v)) {
			*end = UNWIND_TRUNCATED;
			return 0;
		}
		return v;
	case CFI_CFA_PLT:
		return w->sp + 8 + ((off & 15) >= (uint64_t)row->cfa_off ? 8 : 0);
	case CFI_CFA_DEREF_RSP:
		if (!load(w->stk, w->sp + (uint64_t)(int64_t)row->cfa_off, &v)) {
			*end = UNWIND_TRUNCATED;
			return 0;
		}
		return v + 8;
	case CFI_CFA_END:
		*end = UNWIND_COMPLETE;
		return 0;
	default:
		if (row->cfa >= CFI_CFA_REG && row->cfa < CFI_CFA_REG_END &&
		    (w->known >> (row->cfa - CFI_CFA_REG) & 1))
			return w->gpr[row->cfa - CFI_CFA_REG] + (uint64_t)(int64_t)row->cfa_off;
		break;
	}
	*end = UNWIND_UNSUPPORTED;
	return 0;
}

/* The caller's rbp by the row's rule. */
static void restore_bp(struct walk *w, const struct utable_row *row, uint64_t cfa)
{
	uint64_t v;

	switch (row->rbp) {
	case CFI_RBP_SAME:
		return;
	case CFI_RBP_AT_CFA:
		w->bp_ok = load(w->stk, cfa + (uint64_t)(int64_t)row->rbp_off, &v);
		break;
	case CFI_RBP_DEREF_RBP:
		w->bp_ok = w->bp_ok && load(w->stk, w->bp + (uint64_t)(int64_t)row->rbp_off, &v);
		break;
	default:
		w->bp_ok = false;
	}
	if (w->bp_ok)
		w->bp = v;
}

/* One step by CFI.  Returns false with *end set when the walk stops. */
static bool cfi_step(struct walk *w, const struct utable_row *row, uint64_t off,
		     enum unwind_end *end)
{
	uint64_t cfa = cfa_of(w, row, off, end), ra;

	if (!cfa)
		return false;
	if (cfa <= w->sp) {
		*end = UNWIND_BAD;
		return false;
	}
	if (!load(w->stk, cfa - 8, &ra)) {
		*end = UNWIND_TRUNCATED;
		return false;
	}
	restore_bp(w, row, cfa);
	w->sp = cfa;
	w->ip = ra;
	w->known &= (uint16_t)~CALLEE_SAVED;
	return true;
}

void unwind_stack(const struct unwind_regs *regs, const struct unwind_stack *stk,
		  unwind_find_fn find, void *ctx, bool fp_fallback, struct unwind_result *out)
{
	struct walk w = { stk, regs->ip, regs->sp, regs->bp, true, false, { 0 }, regs->known };

	memcpy(w.gpr, regs->gpr, sizeof(w.gpr));

	out->n = 0;
	out->fp_steps = 0;
	out->end = UNWIND_DEPTH;
	while (out->n < UNWIND_MAX_FRAMES) {
		/*
		 * A return address is looked up at the call before it; a pc a
		 * signal interrupted is looked up as it is, and passed on + 1 so
		 * that the callers' rule (pcs[i] - 1 for i > 0) finds it too.
		 */
		uint64_t pc = out->n && !w.interrupted ? w.ip - 1 : w.ip, off = 0, old_sp = w.sp;
		bool mapped = false;
		const struct utable *t;
		const struct utable_row *row = NULL;
		enum unwind_end end = UNWIND_NO_CFI;

		if (out->n && !w.ip) {
			out->end = UNWIND_COMPLETE;
			return;
		}
		t = find(ctx, pc, &off, &mapped);
		if (out->n && !mapped) {
			out->end = UNWIND_BAD;
			return;
		}
		out->pcs[out->n++] = w.interrupted ? w.ip + 1 : w.ip;
		w.interrupted = false;
		if (t)
			row = utable_find(t, off);
		else
			end = UNWIND_NO_TABLE;
		if (row && row->cfa == CFI_CFA_SIGNAL) {
			/* The trampoline was returned to at its start: no call before it. */
			if (out->n > 1)
				out->pcs[out->n - 1] = w.ip + 1;
			if (signal_step(&w, &end))
				continue;
			out->end = end;
			return;
		}
		if (row && cfi_step(&w, row, off, &end))
			continue;
		if (row || !fp_fallback || !fp_step(&w)) {
			out->end = end;
			return;
		}
		out->fp_steps++;
		if (w.sp <= old_sp) {
			out->end = UNWIND_BAD;
			return;
		}
	}
}
