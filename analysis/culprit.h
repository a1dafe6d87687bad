/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/culprit.h - why an instruction stalled: every dynamic
 * stall reason that cannot be ruled out ("guilty until proven innocent",
 * the DCPI paper, 6.3), with the instructions that may have caused it.
 *
 * On an out-of-order core the time of a stall shows where retirement
 * waits: at the instruction that is oldest when the machine waits.  So:
 *
 *  I-cache, ITLB   the instruction's bytes are in a line (page) its
 *                  predecessor's are not: not at a block head, only when it
 *                  starts a new 64-byte line; at a block head, when the last
 *                  instruction of some frequent predecessor (an edge with at
 *                  least 10% of the block's frequency) is in another line;
 *                  after a call (the callee may have evicted the line) and at
 *                  the entry (callers are elsewhere).  Bounded by imiss
 *                  (itlbmiss) samples when those were collected.
 *  D-cache         the instruction loads, or reads a register a load of the
 *                  block wrote at most two instructions earlier (samples of
 *                  a long stall spill onto the next instructions); the loads
 *                  are the culprits.  Bounded by dmiss samples.
 *  DTLB            the same, stores included.  Bounded by dtlbmiss samples.
 *  branch          a block head entered by a conditional or indirect branch
 *                  (from a frequent predecessor), the instruction after a
 *                  call (the return may be mispredicted), the entry (an
 *                  indirect call).  The branches are the culprits.  Bounded
 *                  by branchmp samples.
 *  store queue     a store.
 *  multiplier      a multiply with another multiply at most 8 instructions
 *                  before it (in the block, or in the previous iteration of
 *                  a self-loop).
 *  divider         a divide (its latency depends on the values) or an
 *                  instruction after a divide within 8 instructions that
 *                  needs the divider.
 *  sync            a locked or serialising instruction.
 *  unexplained     none of the above.
 *
 * A bound from an event: misses per execution (the event's samples at the
 * instruction and the next one, plus one for sampling error, times the
 * event's period, over the executions) times a pessimistic cost per miss
 * (CULPRIT_MISS_CYCLES, a fill from memory; twice the mispredict penalty
 * for branches).
 */
#ifndef DCPI_CORE_ANALYSIS_CULPRIT_H
#define DCPI_CORE_ANALYSIS_CULPRIT_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "core/event.h"
#include "disasm/cfg.h"
#include "model/model.h"
#include "model/sched.h"

/*
 * Possible reasons of a dynamic stall (bits of calc_insn.culprits), with
 * the letter shown in bubbles and the legend.
 */
enum calc_culprit {
	CULPRIT_ICACHE,      /* i: I-cache miss (the instruction starts a line, or a predecessor ends in another) */
	CULPRIT_ITLB,        /* I: ITLB miss (the same at page granularity) */
	CULPRIT_DCACHE,      /* d: D-cache miss (a load, or an operand produced by a load) */
	CULPRIT_DTLB,        /* D: DTLB miss (a load or a store) */
	CULPRIT_BRANCH,      /* p: branch mispredict (a block head after a conditional or indirect branch) */
	CULPRIT_STORE_BUF,   /* w: store queue full (a store) */
	CULPRIT_MUL,         /* m: multiplier busy (a multiply after a recent one) */
	CULPRIT_DIV,         /* v: divider busy or a value-dependent divide */
	CULPRIT_SYNC,        /* y: synchronisation (locked or serialising instruction) */
	CULPRIT_STORE_FWD,   /* F: store-to-load forwarding failed (bursts saw the load overlap
				an earlier store in part; the store is the culprit) */
	CULPRIT_ALIAS_4K,    /* K: 4K aliasing (bursts saw an earlier store at the same offset
				of another page; the store is the culprit) */
	CULPRIT_UNEXPLAINED, /* u: unexplained stall (everything else was ruled out) */
	CULPRIT__COUNT
};

/* An instruction that may have caused a stall (the culprit addresses). */
struct calc_cause {
	uint64_t addr;
	unsigned what;                /* CALC_CAUSE_CULPRIT(k) and CALC_CAUSE_STATIC(k) bits */
};

/* The bits of calc_cause.what: a dynamic culprit, a static reason. */
#define CALC_CAUSE_CULPRIT(k) (1u << (k))
#define CALC_CAUSE_STATIC(k) (1u << (16 + (k)))

#define CULPRIT_MISS_CYCLES 300.0   /* cycles charged per I/D-cache or TLB miss, at most */
#define CULPRIT_FREQUENT_EDGE 0.10  /* predecessors below this share of a block are ignored */
#define CULPRIT_WINDOW 8            /* instructions back for multiplier/divider busy */

struct culprit_ctx {
	const struct cfg *cfg;
	const struct cpu_model *model;
	const struct block_schedule *sched;  /* per block (cfg->n_blocks; EXIT unused) */
	const double *block_freq;            /* per block; < 0 unknown */
	const double *edge_freq;             /* per edge; < 0 unknown */
	/* evidence: skid-corrected samples per instruction of each event, NULL if not collected */
	const double *ev[EVENT__COUNT];
	double ev_period[EVENT__COUNT];      /* events per sample */
	double time_period;                  /* cycles per time sample (0: unknown) */
};

/*
 * The culprits of a dynamic stall of `stall` cycles per execution at
 * instruction i (index into cfg->insns), executed freq times per sampling
 * period.  Returns the bits of enum calc_culprit (CULPRIT_UNEXPLAINED when
 * everything was ruled out).  Appends the culprit instructions to
 * *causes (*n, *alloc; ALLOC_GROW).  bound[k] (may be NULL) receives the
 * most cycles per execution culprit k can explain (INFINITY: no bound).
 */
unsigned culprit_find(const struct culprit_ctx *x, size_t i, double stall, double freq,
		      struct calc_cause **causes, size_t *n, size_t *alloc, double *bound);

#endif
