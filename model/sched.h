/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched.h - the static schedule of one basic block on a processor
 * model: for every instruction i, M_i = the minimum number of cycles it
 * spends as the oldest unretired instruction when nothing stalls
 * dynamically (no cache miss, no mispredict), why, and the block's best
 * case.  This is the out-of-order x86 analogue of DCPI's "time at the head
 * of the issue queue" (the DCPI paper, Anderson et al., SOSP 1997, 6.1.3; docs/model.md).
 *
 * The model: instructions dispatch in order, at most dispatch_width
 * macro-ops per cycle, a taken branch ending the cycle, no more than
 * rob_size in flight; each issues when its operands are ready (register
 * and flags dependences, with the address registers of a load needed
 * before its other operands) and its execution units and load/store ports
 * are free, out of order; it completes `latency` cycles later; and it
 * retires in order, at most retire_width per cycle, no earlier than it
 * completes.  With R_i the cycle instruction i retires,
 *
 *	M_i = R_i - R_{i-1}	(R_{-1} = the cycle the block is entered)
 *
 * so the M_i add up to the block's cycles, and M_i = 0 for all but the first
 * instruction retiring in a cycle: the issue points (M_i > 0) are the
 * instructions the block waits for.  Zero idioms, nops and eliminated moves
 * take a dispatch and a retire slot but no unit and no time; a compare or
 * ALU op fused with the following conditional jump (per the model's rules)
 * is one macro-op: the jump gets M = 0 and SCHED_F_FUSED; push, pop, call
 * and ret do not wait for rsp (stack engine); a load whose address text
 * equals an older store's, with the address registers unchanged in
 * between, waits for the store (store-to-load forwarding).  A call does not
 * end a basic block, but its callee runs before the next instruction: that
 * one is dispatched only once the call retired, as if the block started
 * there (SCHED_F_AFTER_CALL).
 *
 * What is assumed at block entry (struct sched_entry):
 *  - SCHED_ENTRY_COLD (the default, DCPI's choice): nothing older is in
 *    flight; the block's first instruction is dispatched in cycle 0 and all
 *    live-in registers are ready then.  The first issue point therefore
 *    carries its full latency, which overstates M_i when the real
 *    predecessor overlapped with the block (it usually does on an
 *    out-of-order core).
 *  - SCHED_ENTRY_PRED: the given instructions (the tail of one predecessor,
 *    in execution order) ran just before, scheduled cold; the block inherits
 *    their register timing, units and retirement.  M_i of the block's first
 *    instruction is measured from the retirement of the predecessor's last.
 *  - SCHED_ENTRY_LOOP: the block follows itself (a self-loop back edge):
 *    it is repeated until the machine reaches a steady state, and M_i is the
 *    mean over the last iterations (so it may be fractional).
 * When a block has several predecessors there is no single schedule (seed
 * 001, 6.1.3, "third"): use COLD as DCPI did, or schedule once per frequent
 * predecessor and combine (block_schedule_min() keeps M_i a lower bound).
 */
#ifndef DCPI_MODEL_SCHED_H
#define DCPI_MODEL_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "disasm/insn.h"
#include "model/model.h"

/* Why an instruction is an issue point (the constraint that set its retirement). */
enum sched_reason {
	SCHED_NONE,      /* M = 0: retires in the cycle the one before it does */
	SCHED_LATENCY,   /* its own execution: it issued as early as it could (at
			    dispatch), the time is its latency (load-use, divide...) */
	SCHED_DEP,       /* it issued when register `reg` from `producer` was ready */
	SCHED_MEMDEP,    /* its load waited for the store `producer` (forwarding) */
	SCHED_UNIT,      /* it waited for execution unit `unit`, last held by `producer` */
	SCHED_DISPATCH,  /* the front end: dispatch width, a taken branch or a full ROB */
	SCHED_RETIRE,    /* done in time, but the retire slots of the cycle were full */
	SCHED_SERIAL,    /* serialising (fences, cpuid...): waits for all older ones */
	SCHED_REASON__COUNT
};

/* Where a producer is. */
enum sched_ref_kind {
	SREF_NONE,
	SREF_BLOCK,      /* instruction `index` of the block (same iteration) */
	SREF_PREV_ITER,  /* instruction `index` of the block, previous iteration (LOOP) */
	SREF_PRED,       /* entry->pred[index] (PRED) */
};

struct sched_ref {
	enum sched_ref_kind kind;
	unsigned index;
};

/* Pseudo-units for SCHED_UNIT besides the table's units. */
#define SCHED_UNIT_LOAD_PORT 1000   /* a load port */
#define SCHED_UNIT_STORE_PORT 1001  /* a store port */

enum sched_insn_flags {
	SCHED_F_FUSED = (1 << 0),      /* macro-fused with the instruction before */
	SCHED_F_ELIMINATED = (1 << 1), /* nop, zero idiom or eliminated move */
	SCHED_F_UNCERTAIN = (1 << 2),  /* timing is a guess: class default, unmodelled by
					  llvm-mca, rep string, serialising: do not trust M */
	SCHED_F_AFTER_CALL = (1 << 3), /* follows a call: the callee ran in between, so it
					  starts afresh (and, with skid, its samples are
					  the callee's return's) */
};

struct sched_insn {
	double m;                 /* M_i, cycles (mean over iterations for LOOP) */
	bool issue_point;         /* m > 0 */
	double stall;             /* static stall: cycles beyond the one it retires in */
	enum sched_reason reason; /* for an issue point; SCHED_NONE otherwise */
	unsigned reg;             /* SCHED_DEP: enum dreg */
	struct sched_ref producer;/* SCHED_DEP, SCHED_MEMDEP, SCHED_UNIT */
	unsigned unit;            /* SCHED_UNIT: model_unit_name() index or SCHED_UNIT_*_PORT */
	unsigned flags;           /* enum sched_insn_flags */
	struct model_timing timing;
	/* The cycles of the (last) pass, relative to block entry (R_{-1} = 0). */
	int dispatch, issue, complete, retire;
};

enum sched_entry_kind { SCHED_ENTRY_COLD, SCHED_ENTRY_PRED, SCHED_ENTRY_LOOP };

struct sched_entry {
	enum sched_entry_kind kind;
	const struct insn *pred;  /* PRED: instructions run just before the block, in order */
	size_t n_pred;
};

struct block_schedule {
	const struct cpu_model *model;
	enum sched_entry_kind entry;
	size_t n;
	struct sched_insn *insn;  /* n records (owned) */
	double cycles;            /* best case: the sum of the M_i */
	unsigned issue_points;
	unsigned iterations;      /* LOOP: iterations averaged over; else 1 */
	unsigned uncertain;       /* instructions with SCHED_F_UNCERTAIN */
};

#define BLOCK_SCHEDULE_INIT { NULL, SCHED_ENTRY_COLD, 0, NULL, 0, 0, 0, 0 }

void block_schedule_init(struct block_schedule *s);
void block_schedule_release(struct block_schedule *s);

/*
 * Schedules insns[0..n) (one basic block, in address order) on model m.
 * The instructions must be of m->arch (every model is x86-64 for now: do
 * not schedule aarch64 code).  entry NULL means SCHED_ENTRY_COLD.
 * Replaces the contents of out.
 * Returns 0, or -1 with an error message if n is 0 or an instruction id is
 * out of the model's range.
 */
int schedule_block(const struct cpu_model *m, const struct insn *insns, size_t n,
		   const struct sched_entry *entry, struct block_schedule *out);

/*
 * Scheduling many blocks of one procedure: its instructions are prepared
 * once (the model's timing of each, its address and data registers, its
 * memory operand), then any sequence of them is scheduled by index, as
 * often as needed, with exactly the result schedule_block() gives for the
 * same instructions:
 *
 *   struct sched_prep *sp = sched_prep_new(m, cfg->insns, cfg->n_insns);
 *   uint32_t body[] = { 7, 8, 9 }, ctx[] = { 3, 4, 5, 6 };
 *   schedule_prepared(sp, body, 3, SCHED_ENTRY_PRED, ctx, 4, &s);
 *   schedule_prepared(sp, body, 3, SCHED_ENTRY_LOOP, NULL, 0, &s);
 *   sched_prep_free(sp);
 *
 * The instructions before each one (macro-fusion) are those of its
 * sequence, as in schedule_block(): none before the first of ctx, ctx's
 * last before body's first.  A prepared procedure keeps the scheduler's
 * buffers from one schedule to the next: use it from one thread at a time
 * (one per thread for several).  insns must outlive it.
 */
struct sched_prep;
struct sched_prep *sched_prep_new(const struct cpu_model *m, const struct insn *insns, size_t n);
void sched_prep_free(struct sched_prep *sp);
/*
 * The timing a schedule gives prepared instruction i outside a loop's
 * steady state (sched_insn.timing), and what the steady state adds to its
 * latency.
 */
void sched_prep_timing(const struct sched_prep *sp, size_t i, struct model_timing *t,
		       unsigned *loop_extra);
/*
 * For tests: run every pass of a loop and every context through the
 * machine, with none of the shortcuts that give the same schedules
 * faster (a loop's steady state written from the passes before it).
 */
void sched_prep_full_runs(struct sched_prep *sp, bool full);
/*
 * Schedules the instructions body[0..n) (indices into the prepared ones,
 * the block in order; for SCHED_ENTRY_LOOP the loop's body) with entry
 * `kind`, after ctx[0..n_ctx) for SCHED_ENTRY_PRED (ignored otherwise).
 * Returns 0, or -1 with an error message as schedule_block() does.
 */
int schedule_prepared(struct sched_prep *sp, const uint32_t *body, size_t n,
		      enum sched_entry_kind kind, const uint32_t *ctx, size_t n_ctx,
		      struct block_schedule *out);

/*
 * Schedules are remembered for the process by what they are made of (the
 * model, the entry, the instructions as the machine sees them, in order,
 * not their addresses): a loop made of the same code as one scheduled
 * before, in any procedure and on any thread, gets the same schedule
 * without running the machine (a loop's is the costly kind: a cold block,
 * or one after a context, costs about what finding it would).  The memo
 * holds at most `bytes` (16 MiB unless said; 0: no memo), emptied in parts
 * as it fills; setting the limit empties it.
 */
void sched_memo_limit(size_t bytes);
/* The entries remembered: bits 1 << SCHED_ENTRY_* (loops unless said; tests ask for all). */
void sched_memo_kinds(unsigned kinds);

struct sched_memo_stats {
	uint64_t hits, misses;       /* schedules found, and looked for in vain */
	uint64_t dropped;            /* times a part of the memo was emptied */
	size_t entries, bytes, limit;
	size_t instructions;         /* distinct instructions numbered */
};
void sched_memo_get_stats(struct sched_memo_stats *st);

/*
 * acc = the per-instruction minimum of acc and other (two schedules of the
 * same block under different entries): keeps M_i a lower bound over
 * several predecessors.  Reasons follow the smaller M; totals are redone.
 */
void block_schedule_min(struct block_schedule *acc, const struct block_schedule *other);

/* "latency", "dependence"... */
const char *sched_reason_name(enum sched_reason r);

/*
 * Appends a one-line description of instruction i's schedule to out, e.g.
 * "M=3 dependence on rax from #2", using the model's unit names.
 */
struct strbuf;
void sched_describe(const struct block_schedule *s, size_t i, struct strbuf *out);

/* The x86 name of a normalised register ("rax", "flags", "xmm3"). */
const char *sched_reg_name(unsigned reg);

#endif
