/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-nav.h - moving through one procedure's analysis (calc.h)
 * by what matters in it: its stalls one after another, the culprits of a
 * stall, its blocks from the hottest down, where a branch goes.  What
 * dcpi-tui's procedure view does on ], [, c, H and Enter, without a
 * screen: instruction and block indexes in, indexes and addresses out,
 * and the words that say where it went.
 *
 *   bool wrapped;
 *   long i = calc_nav_stall(&c, cur, 1, &wrapped);     // ]: the next stall
 *   size_t k = 0;
 *   const struct calc_cause *x = calc_nav_culprit(&c, i, &k);  // c: its culprit
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_NAV_H
#define DCPI_CORE_ANALYSIS_CALC_NAV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/calc.h"

struct strbuf;

/* ---- stalls and culprits ------------------------------------------------------ */

/* True if instruction i has a stall bubble (calc_bubble_of(): half a cycle or more). */
bool calc_nav_stalled(const struct calc *c, size_t i);

/*
 * The next (dir > 0) or previous (dir < 0) stalled instruction from
 * instruction from (-1: before the first; n_insns: after the last),
 * around the procedure: -1 if none stalls.  *wrapped says it went around.
 */
long calc_nav_stall(const struct calc *c, long from, int dir, bool *wrapped);
/* "stall at 40105b: 4.5cy per execution (best 1.0cy), dynamic 3.5cy dD" */
void calc_nav_stall_text(const struct calc *c, size_t i, struct strbuf *sb);

/* Culprit *k of instruction i's stall (*k taken around their number), or NULL if it has none. */
const struct calc_cause *calc_nav_culprit(const struct calc *c, size_t i, size_t *k);
/* "culprit 1 of 2 of the stall at 40105b: 401050 (d D-cache miss, D DTLB miss)" */
void calc_nav_culprit_text(const struct calc *c, size_t i, size_t k, struct strbuf *sb);

/* ---- hot blocks --------------------------------------------------------------- */

/* The blocks by their samples of an event. */
struct calc_hot {
	enum dcpi_event ev;
	uint64_t *samples;   /* per block (c->n_blocks) */
	size_t *rank;        /* the blocks with samples, hottest first (ties: lower index first) */
	size_t n;
	uint64_t total;      /* the procedure's samples of ev */
};

void calc_hot_build(struct calc_hot *h, const struct calc *c, enum dcpi_event ev);
void calc_hot_release(struct calc_hot *h);
/*
 * The rank to visit next from rank when the cursor is in block (-1: in
 * none): the next one down if block is the one at rank, else the hottest
 * (0).  h->n must not be 0.
 */
size_t calc_hot_next(const struct calc_hot *h, size_t rank, long block);
/* "hottest block: 4, 14400 cycles samples (87.3%)", "next hottest block: ..." past rank 0. */
void calc_hot_text(const struct calc_hot *h, size_t rank, struct strbuf *sb);

/* ---- branches ----------------------------------------------------------------- */

/* Where following instruction i goes. */
enum calc_go {
	CALC_GO_BLOCK,      /* a branch inside the procedure: to *addr */
	CALC_GO_PROC,       /* a call, or a branch out of the procedure: to the one at *addr */
	CALC_GO_SWITCH,     /* an indirect jump (calc_nav_switch_text() says to where) */
	CALC_GO_ICALL,      /* an indirect call: its target is not known */
	CALC_GO_RET,        /* a return */
	CALC_GO_UNKNOWN,    /* a direct branch whose target is not known */
	CALC_GO_NONE,       /* neither a branch nor a call */
};

enum calc_go calc_nav_branch(const struct calc *c, size_t i, uint64_t *addr);
/*
 * "jump table to blocks 3, 4, 7" (at most 12, then ", ..."), or "indirect
 * jump: its targets are not known": where the indirect jump i goes.
 * Returns the number of target blocks.
 */
size_t calc_nav_switch_text(const struct calc *c, size_t i, struct strbuf *sb);

#endif
