/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-sched.c - the schedules of one procedure's blocks (model/sched.h):
 * each block cold, after each predecessor's code, in the steady state of
 * its self-loop or of the hot cycle it is on; and the schedule each mode
 * (enum calc_sched) combines from them.
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#define PRED_TAIL 32        /* instructions run before a block scheduled with it (PRED) */
#define PRED_MAX 16         /* predecessors scheduled separately (the rest: cold) */
#define CYCLE_BLOCKS 64     /* blocks of a loop scheduled in its steady state */
#define CYCLE_INSNS 1024    /* instructions of such a loop */

static bool self_edge(const struct cfg *cfg, uint32_t e)
{
	return cfg->edges[e].from == cfg->edges[e].to;
}

/* The predecessor of block b most often taken (by edge frequency; unknown: the first). */
static long main_pred(const struct calc_work *w, uint32_t b)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	long best = -1;
	double bw = -1;

	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = cfg->pred[blk->pred + k];
		double f = w->c->edges[e].freq;

		if (cfg->edges[e].from == cfg->exit || cfg->edges[e].kind == CFG_CALL_RETURN)
			continue;
		if (f > bw) {
			bw = f;
			best = (long)cfg->edges[e].from;
		}
	}
	return best;
}

/*
 * The instructions run before a block entered from p: p's, then its main
 * predecessor's before them, and so on, up to PRED_TAIL instructions, none
 * before a call (the callee ran in between).  Their indices are written to
 * out (PRED_TAIL of them at most) in execution order; returns how many.
 */
static size_t pred_context(const struct calc_work *w, uint32_t p, uint32_t *out)
{
	const struct cfg *cfg = w->cfg;
	uint32_t chain[PRED_TAIL];
	size_t nchain = 0, total = 0, n = 0;
	long b = (long)p;

	while (b >= 0 && total < PRED_TAIL && nchain < PRED_TAIL) {
		const struct cfg_block *blk = &cfg->blocks[b];
		bool call = false;

		chain[nchain++] = (uint32_t)b;
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++)
			call |= cfg->insns[i].kind == INSN_CALL || cfg->insns[i].kind == INSN_ICALL;
		total += blk->n_insns;
		if (call || b == (long)cfg->entry)
			break;
		b = main_pred(w, (uint32_t)b);
	}
	/* from the last call on, the last PRED_TAIL (a ring, unrolled below) */
	for (size_t k = nchain; k-- > 0;) {
		const struct cfg_block *blk = &cfg->blocks[chain[k]];

		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++) {
			const struct insn *in = &cfg->insns[i];

			if (in->kind == INSN_CALL || in->kind == INSN_ICALL) {
				n = 0;
				continue;
			}
			out[n++ % PRED_TAIL] = i;
		}
	}
	if (n > PRED_TAIL) {
		uint32_t tmp[PRED_TAIL];

		for (size_t k = 0; k < PRED_TAIL; k++)
			tmp[k] = out[(n + k) % PRED_TAIL];
		memcpy(out, tmp, sizeof(tmp));
		n = PRED_TAIL;
	}
	return n;
}

/* w's scratch of n doubles, zeroed. */
static double *dscratch(struct calc_work *w, size_t n)
{
	ALLOC_GROW(w->dscratch, n + 1, w->dscratch_alloc);
	memset(w->dscratch, 0, (n + 1) * sizeof(*w->dscratch));
	return w->dscratch;
}

/* The procedure's instructions prepared for the scheduler (on first use). */
static struct sched_prep *prep_of(struct calc_work *w)
{
	if (!w->prep)
		w->prep = sched_prep_new(w->c->model, w->cfg->insns, w->cfg->n_insns);
	return w->prep;
}

/* The indices of block b's instructions (in w's scratch). */
static const uint32_t *block_insns(struct calc_work *w, size_t b)
{
	const struct cfg_block *blk = &w->cfg->blocks[b];

	for (uint32_t i = 0; i < blk->n_insns; i++)
		w->idx[i] = blk->first + i;
	return w->idx;
}

static int sched_one(struct calc_work *w, size_t b, enum sched_entry_kind kind, const uint32_t *ctx,
		     size_t n_ctx, struct block_schedule *s)
{
	block_schedule_init(s);
	return schedule_prepared(prep_of(w), block_insns(w, b), w->cfg->blocks[b].n_insns, kind, ctx,
				 n_ctx, s);
}

/* Recomputes the totals of a combined schedule. */
static void schedule_totals(struct block_schedule *s)
{
	s->cycles = 0;
	s->issue_points = 0;
	s->uncertain = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct sched_insn *x = &s->insn[i];

		x->issue_point = x->m > 1e-9;
		if (!x->issue_point) {
			x->m = 0;
			x->reason = SCHED_NONE;
		}
		x->stall = x->m > 1 ? x->m - 1 : 0;
		s->cycles += x->m;
		s->issue_points += x->issue_point;
		s->uncertain += !!(x->flags & SCHED_F_UNCERTAIN);
	}
}

/*
 * A schedule after a predecessor context, averaged over context lengths
 * (the last 16 and 32 instructions): with one length, where the
 * block falls in the retire cycles of the code before it makes each M_i 0
 * or 1 at random; the mean over several alignments is the steady state's
 * fraction.
 */
static int sched_context(struct calc_work *w, size_t b, const uint32_t *ctx, size_t n_ctx,
			 struct block_schedule *out)
{
	static const size_t lens[] = { 16, 32 };
	struct block_schedule s;
	size_t runs = 0;
	double *acc = NULL;

	for (size_t k = 0; k < ARRAY_SIZE(lens); k++) {
		const uint32_t *x = ctx;
		size_t nx = n_ctx;

		if (k && lens[k - 1] >= n_ctx)
			break;
		if (nx > lens[k]) {
			x += nx - lens[k];
			nx = lens[k];
		}
		if (sched_one(w, b, SCHED_ENTRY_PRED, x, nx, runs ? &s : out))
			continue;
		if (!runs++) {
			acc = dscratch(w, out->n);
			for (size_t i = 0; i < out->n; i++)
				acc[i] = out->insn[i].m;
			continue;
		}
		for (size_t i = 0; i < out->n && i < s.n; i++)
			acc[i] += s.insn[i].m;
		block_schedule_release(&s);
	}
	if (!runs)
		return -1;
	for (size_t i = 0; i < out->n; i++)
		out->insn[i].m = acc[i] / (double)runs;
	schedule_totals(out);
	return 0;
}

/* A block's schedule after a predecessor's code, to be made (calc_schedule_blocks). */
struct ctx_job {
	uint32_t pred, block;       /* the predecessor whose code runs first, the block */
	size_t slot;                /* w->bs[block].s[slot] */
};

static int job_cmp(const void *a, const void *b)
{
	const struct ctx_job *x = a, *y = b;

	if (x->pred != y->pred)
		return x->pred < y->pred ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

/*
 * Schedules each block cold, after each predecessor's code (its self-loop:
 * in the steady state), up to PRED_MAX predecessors: the modes combine
 * these, and the confidence compares two of the combinations.  The
 * blocks after one predecessor are scheduled one after the other, so that
 * the scheduler runs the predecessor's code once for all of them.
 */
void calc_schedule_blocks(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	struct ctx_job *jobs = NULL;
	size_t n_jobs = 0, alloc = 0;
	/* each predecessor's context, found once: pool[at[p] .. at[p] + len[p]) */
	uint32_t *pool = NULL, *at = xmalloc((cfg->n_blocks + 1) * sizeof(*at));
	int *ctx_len = xmalloc((cfg->n_blocks + 1) * sizeof(*ctx_len));  /* -1: not yet known */
	size_t n_pool = 0, pool_alloc = 0;

	memset(ctx_len, 0xff, (cfg->n_blocks + 1) * sizeof(*ctx_len));

	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];
		struct bsched *bs = &w->bs[b];
		size_t cap = blk->n_pred + 1;

		if (!blk->n_insns)
			continue;
		bs->s = xcalloc(cap, sizeof(*bs->s));
		bs->pred_edge = xmalloc(cap * sizeof(*bs->pred_edge));
		if (sched_one(w, b, SCHED_ENTRY_COLD, NULL, 0, &bs->s[0])) {
			bs->n = 0;
			continue;
		}
		bs->pred_edge[0] = -1;
		bs->n = 1;
		/* every mode schedules the contexts: the confidence compares models */
		for (uint32_t k = 0; k < blk->n_pred && bs->n <= PRED_MAX; k++) {
			uint32_t e = cfg->pred[blk->pred + k];
			const struct cfg_edge *ed = &cfg->edges[e];

			if (ed->from == cfg->exit || ed->kind == CFG_CALL_RETURN)
				continue;
			if (self_edge(cfg, e)) {
				/* the body scheduled cold schedules as a loop too */
				sched_one(w, b, SCHED_ENTRY_LOOP, NULL, 0, &bs->s[bs->n]);
			} else {
				if (ctx_len[ed->from] < 0) {
					ALLOC_GROW(pool, n_pool + PRED_TAIL, pool_alloc);
					at[ed->from] = (uint32_t)n_pool;
					ctx_len[ed->from] = (int)pred_context(w, ed->from, pool + n_pool);
					n_pool += (size_t)ctx_len[ed->from];
				}
				if (!ctx_len[ed->from])
					continue;
				ALLOC_GROW(jobs, n_jobs + 1, alloc);
				jobs[n_jobs++] = (struct ctx_job){ ed->from, (uint32_t)b, bs->n };
			}
			bs->pred_edge[bs->n++] = (long)e;
		}
	}
	if (n_jobs)
		qsort(jobs, n_jobs, sizeof(*jobs), job_cmp);
	for (size_t k = 0; k < n_jobs; k++) {
		uint32_t p = jobs[k].pred;

		/* cannot fail: the block's instructions scheduled cold */
		sched_context(w, jobs[k].block, pool + at[p], (size_t)ctx_len[p],
			      &w->bs[jobs[k].block].s[jobs[k].slot]);
	}
	free(jobs);
	free(ctx_len);
	free(at);
	free(pool);
}

/*
 * How often edge e is taken, for finding hot cycles: its frequency (pass
 * 1), -1 if unknown.  (Guessing unknown ones from their source's frequency
 * found more cycles and made the suite worse: wl-branchy's arms and xz.)
 */
static double edge_heat(const struct calc_work *w, uint32_t e)
{
	const struct cfg_edge *ed = &w->cfg->edges[e];
	double f = w->c->edges[e].freq;

	if (ed->from == w->cfg->exit || ed->kind == CFG_CALL_RETURN)
		return -1;
	return f;
}

/* The predecessor of block b by the hottest edge, or -1. */
static long hot_pred(const struct calc_work *w, uint32_t b, long *edge)
{
	const struct cfg_block *blk = &w->cfg->blocks[b];
	double best = 0;
	long p = -1;

	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = w->cfg->pred[blk->pred + k];
		double h = edge_heat(w, e);

		if (h > best) {
			best = h;
			p = (long)w->cfg->edges[e].from;
			if (edge)
				*edge = (long)e;
		}
	}
	return p;
}

/* The block before p on a hot cycle: by its hottest edge, or its only one. */
static long cycle_pred(const struct calc_work *w, uint32_t p)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[p];
	long q = hot_pred(w, p, NULL);

	if (q < 0 && blk->n_pred == 1 && cfg->edges[cfg->pred[blk->pred]].from != cfg->exit &&
	    cfg->edges[cfg->pred[blk->pred]].kind != CFG_CALL_RETURN)
		q = (long)cfg->edges[cfg->pred[blk->pred]].from;
	return q;
}

/*
 * The hot cycle through block b entered by edge e: from e's source back
 * along the main predecessors to b.  Writes the blocks in execution order,
 * b first, to cyc (at most CYCLE_BLOCKS); returns how many, 0 when the
 * walk does not come back to b soon, leaves the procedure or passes a call.
 */
static size_t hot_cycle(const struct calc_work *w, size_t b, uint32_t e, uint32_t *cyc)
{
	const struct cfg *cfg = w->cfg;
	size_t n = 0, insns = 0;
	long p = (long)cfg->edges[e].from;

	while (p >= 0 && (size_t)p != b) {
		const struct cfg_block *blk = &cfg->blocks[p];

		if (n + 1 >= CYCLE_BLOCKS || (size_t)p == cfg->exit || !blk->n_insns)
			return 0;
		for (size_t k = 0; k < n; k++)
			if (cyc[k] == (uint32_t)p)
				return 0;  /* an inner loop */
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++)
			if (cfg->insns[i].kind == INSN_CALL || cfg->insns[i].kind == INSN_ICALL)
				return 0;
		insns += blk->n_insns;
		cyc[n++] = (uint32_t)p;
		p = cycle_pred(w, (uint32_t)p);
	}
	if (p < 0 || insns + cfg->blocks[b].n_insns > CYCLE_INSNS)
		return 0;
	cyc[n++] = (uint32_t)b;
	for (size_t i = 0, j = n - 1; i < j; i++, j--) {
		uint32_t t = cyc[i];

		cyc[i] = cyc[j];
		cyc[j] = t;
	}
	return n;
}

/*
 * Block cyc[k]'s part (n instructions from place `at` of the cycle's
 * stream) of the schedule `all` of the whole hot cycle run as one
 * self-loop: its instructions' figures as they are, what they wait for
 * in another block of the cycle no producer of theirs (the part is a block
 * of its own), their cycles from the retirement of the instruction before
 * the part.
 */
static void cycle_part(const struct block_schedule *all, size_t at, size_t n,
		       struct block_schedule *out)
{
	int base = at ? all->insn[at - 1].retire : 0;

	block_schedule_init(out);
	*out = *all;
	out->n = n;
	out->insn = xmemdup(all->insn + at, n * sizeof(*all->insn));
	for (size_t i = 0; i < n; i++) {
		struct sched_insn *x = &out->insn[i];
		struct sched_ref *r = &x->producer;

		if (r->kind != SREF_NONE && (r->index < at || r->index >= at + n))
			r->kind = SREF_NONE;  /* in another block of the cycle */
		else if (r->kind != SREF_NONE)
			r->index -= (unsigned)at;
		x->dispatch -= base;
		x->issue -= base;
		x->complete -= base;
		x->retire -= base;
	}
	schedule_totals(out);
}

static void keep_cycle(struct known_cycle **v, size_t *n, size_t *alloc, size_t b,
		       const uint32_t *cyc, size_t len, const struct block_schedule *s)
{
	struct known_cycle *k;

	ALLOC_GROW(*v, *n + 1, *alloc);
	k = &(*v)[(*n)++];
	k->b = (uint32_t)b;
	k->n = (uint32_t)len;
	k->blocks = xmemdup(cyc, len * sizeof(*cyc));
	k->s = *s;
}

/*
 * Block b in the steady state of the loop it is on: the hot cycle through
 * it (b, then the blocks back to b) scheduled as one self-loop, b's part
 * kept.  The multi-block form of SCHED_ENTRY_LOOP: what follows the block
 * overlaps with it as the core overlaps iterations.  The other blocks'
 * parts of the same run are kept aside (w->spare), each on the cycle
 * from itself: in the steady state a block's part does not depend on
 * where the run's passes begin, and most blocks of a loop have that loop
 * as their hot cycle (libc: 2240 cycles scheduled, 38% distinct but for
 * where they begin).
 */
static int sched_cycle_run(struct calc_work *w, size_t b, const uint32_t *cyc, size_t n,
			   struct block_schedule *out)
{
	const struct cfg *cfg = w->cfg;
	struct block_schedule all;
	uint32_t *trace, rot[CYCLE_BLOCKS];
	size_t len = 0;
	int ret;

	for (size_t k = 0; k < n; k++)
		len += cfg->blocks[cyc[k]].n_insns;
	trace = xmalloc((len + 1) * sizeof(*trace));
	len = 0;
	for (size_t k = 0; k < n; k++) {
		const struct cfg_block *x = &cfg->blocks[cyc[k]];

		for (uint32_t i = 0; i < x->n_insns; i++)
			trace[len++] = x->first + i;
	}
	block_schedule_init(&all);
	ret = schedule_prepared(prep_of(w), trace, len, SCHED_ENTRY_LOOP, NULL, 0, &all);
	free(trace);
	if (ret)
		return -1;
	cycle_part(&all, 0, cfg->blocks[b].n_insns, out);
	len = cfg->blocks[b].n_insns;
	for (size_t k = 1; k < n; k++) {
		struct block_schedule part;

		for (size_t j = 0; j < n; j++)
			rot[j] = cyc[(k + j) % n];
		cycle_part(&all, len, cfg->blocks[cyc[k]].n_insns, &part);
		keep_cycle(&w->spare, &w->n_spare, &w->alloc_spare, cyc[k], rot, n, &part);
		len += cfg->blocks[cyc[k]].n_insns;
	}
	block_schedule_release(&all);
	return 0;
}

/* The hot cycle b, cyc[0..n) among v[0..nv), or NULL. */
static struct known_cycle *find_cycle(struct known_cycle *v, size_t nv, size_t b,
				      const uint32_t *cyc, size_t n)
{
	for (size_t j = 0; j < nv; j++)
		if (v[j].b == b && v[j].n == n && !memcmp(v[j].blocks, cyc, n * sizeof(*cyc)))
			return &v[j];
	return NULL;
}

/*
 * The same, from the schedules of hot cycles found before (this analysis'
 * or the cache's: a cycle's schedule depends on its blocks only) when one
 * is of b on the same blocks, or from the part of b in a cycle run for
 * another of its blocks; a new one is kept.
 */
static int sched_cycle(struct calc_work *w, size_t b, const uint32_t *cyc, size_t n,
		       struct block_schedule *out)
{
	struct known_cycle *k = find_cycle(w->known, w->n_known, b, cyc, n);

	if (!k && (k = find_cycle(w->spare, w->n_spare, b, cyc, n))) {
		/* a part made for another block: now known (and cached) */
		keep_cycle(&w->known, &w->n_known, &w->alloc_known, b, cyc, n, &k->s);
		k->s.insn = NULL;
		k->s.n = 0;
		k->b = UINT32_MAX;
		k = &w->known[w->n_known - 1];
		w->known_new = true;
	}
	if (k) {
		block_schedule_init(out);
		*out = k->s;
		out->insn = xmemdup(k->s.insn, k->s.n * sizeof(*k->s.insn));
		return 0;
	}
	if (sched_cycle_run(w, b, cyc, n, out))
		return -1;
	ALLOC_GROW(w->known, w->n_known + 1, w->alloc_known);
	k = &w->known[w->n_known++];
	k->b = (uint32_t)b;
	k->n = (uint32_t)n;
	k->blocks = xmemdup(cyc, n * sizeof(*cyc));
	k->s = *out;
	k->s.insn = xmemdup(out->insn, out->n * sizeof(*out->insn));
	w->known_new = true;
	return 0;
}

/*
 * For each block on a loop of several blocks (not a self-loop): its
 * schedule in the loop's steady state, for the edge that closes the hot
 * cycle through it (the LOOP mode weighs it like a self-loop's).  Needs
 * the edge frequencies of pass 1 to find the hot cycle.
 */
/*
 * The edge into block b that closes its hot cycle (written to cyc, n
 * blocks): its hottest known one, else one flow left unknown (weighed by
 * what the known ones leave, schedule_weights); -1 if none does.
 */
static long cycle_edge(const struct calc_work *w, size_t b, uint32_t *cyc, size_t *n)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	long best = -1;

	if (hot_pred(w, (uint32_t)b, &best) >= 0 && !self_edge(cfg, (uint32_t)best) &&
	    (*n = hot_cycle(w, b, (uint32_t)best, cyc)))
		return best;
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = cfg->pred[blk->pred + k];

		if (cfg->edges[e].from == cfg->exit || cfg->edges[e].kind == CFG_CALL_RETURN ||
		    self_edge(cfg, e) || w->c->edges[e].freq >= 0)
			continue;
		if ((*n = hot_cycle(w, b, e, cyc)))
			return (long)e;
	}
	return -1;
}

void calc_cycle_schedules(struct calc_work *w)
{
	uint32_t cyc[CYCLE_BLOCKS];

	for (size_t b = 0; b < w->cfg->exit; b++) {
		struct bsched *bs = &w->bs[b];
		size_t n = 0;
		long e;

		if (!bs->n || bs->cycle || (e = cycle_edge(w, b, cyc, &n)) < 0)
			continue;
		bs->s = xreallocarray(bs->s, bs->n + 1, sizeof(*bs->s));
		bs->pred_edge = xreallocarray(bs->pred_edge, bs->n + 1, sizeof(*bs->pred_edge));
		if (sched_cycle(w, b, cyc, n, &bs->s[bs->n]))
			continue;
		bs->pred_edge[bs->n] = e;
		bs->cycle = bs->n++;
	}
}

static double edge_weight(const struct calc *c, long e)
{
	if (e < 0)
		return 0;
	return c->edges[e].freq > 0 ? c->edges[e].freq : 0;
}

/* dst = src; dst's instructions kept where they are when they are as many. */
static void copy_schedule(struct block_schedule *dst, const struct block_schedule *src)
{
	struct sched_insn *insn = dst->insn;

	if (insn && dst->n == src->n) {
		*dst = *src;
		dst->insn = insn;
		memcpy(insn, src->insn, src->n * sizeof(*src->insn));
		return;
	}
	block_schedule_release(dst);
	*dst = *src;
	dst->insn = xmemdup(src->insn, src->n * sizeof(*src->insn));
}

/* Weights of block b's schedules: edge frequencies (pass 1: one per edge). */
static void schedule_weights(struct calc_work *w, size_t b, bool weighted, bool loops_only, double *wt)
{
	struct bsched *bs = &w->bs[b];
	const struct cfg_block *blk = &w->cfg->blocks[b];
	double total = 0, in_total = 0, rest = 0;

	for (uint32_t k = 0; k < blk->n_pred; k++)
		in_total += weighted ? edge_weight(w->c, w->cfg->pred[blk->pred + k]) : 1;
	if (b == w->cfg->entry)
		in_total += weighted ? (w->c->invocations > 0 ? w->c->invocations : 0) : 1;
	/* a cycle closed by an edge flow left unknown: what the known ones leave */
	if (weighted && bs->cycle && w->c->edges[bs->pred_edge[bs->cycle]].freq < 0 &&
	    w->c->blocks[b].freq > in_total)
		rest = w->c->blocks[b].freq - in_total;
	in_total += rest;
	for (size_t k = 1; k < bs->n; k++) {
		wt[k] = 0;
		if (loops_only && !self_edge(w->cfg, (uint32_t)bs->pred_edge[k]) && k != bs->cycle)
			continue;
		if (!loops_only && k == bs->cycle)
			continue;  /* the same edge's context stands for it */
		wt[k] = weighted ? edge_weight(w->c, bs->pred_edge[k]) : 1;
		if (k == bs->cycle && rest > 0)
			wt[k] = rest;
		total += wt[k];
	}
	/* the rest (entries from outside, unscheduled predecessors) run cold */
	wt[0] = in_total > total ? in_total - total : 0;
	if (!(wt[0] + total > 0)) {
		wt[0] = 1;
		for (size_t k = 1; k < bs->n; k++)
			wt[k] = (loops_only && !self_edge(w->cfg, (uint32_t)bs->pred_edge[k]) &&
				 k != bs->cycle) || (!loops_only && k == bs->cycle) ? 0 : 1;
	}
}

/*
 * Block b's schedule under a mode: cold; the per-instruction minimum over
 * the predecessors (PRED); the mean of the cold schedule and the self-loop's
 * steady state weighted by edge frequency (LOOP); or of all of them: cold
 * for entries from outside, each predecessor's context, the self-loop
 * (AUTO).
 */
static void combine_mode(struct calc_work *w, size_t b, bool weighted, enum calc_sched mode,
			 struct block_schedule *out)
{
	struct bsched *bs = &w->bs[b];
	double *wt, total = 0, best = -1, *acc;
	size_t heaviest = 0;

	if (!bs->n)
		return;
	if (bs->n == 1 || mode == CALC_SCHED_COLD) {
		copy_schedule(out, &bs->s[0]);
		return;
	}
	if (mode == CALC_SCHED_PRED) {
		copy_schedule(out, &bs->s[1]);
		for (size_t k = 2; k < bs->n; k++)
			if (k != bs->cycle)
				block_schedule_min(out, &bs->s[k]);
		return;
	}
	wt = dscratch(w, bs->n + bs->s[0].n + 1);
	acc = wt + bs->n;
	schedule_weights(w, b, weighted, mode == CALC_SCHED_LOOP, wt);
	for (size_t k = 0; k < bs->n; k++) {
		total += wt[k];
		if (wt[k] > best) {
			best = wt[k];
			heaviest = k;
		}
	}
	copy_schedule(out, &bs->s[heaviest]);
	for (size_t k = 0; k < bs->n; k++)
		for (size_t i = 0; i < out->n; i++)
			acc[i] += wt[k] * bs->s[k].insn[i].m / total;
	for (size_t i = 0; i < out->n; i++)
		out->insn[i].m = acc[i];
	schedule_totals(out);
}

/*
 * The best-case cycles of block b's schedule under LOOP or AUTO (or COLD):
 * what combine_mode() would give as out->cycles, without the schedule.
 */
static double combined_cycles(struct calc_work *w, size_t b, bool weighted, enum calc_sched mode)
{
	struct bsched *bs = &w->bs[b];
	double *wt, total = 0, cycles = 0;

	if (!bs->n)
		return 0;
	if (bs->n == 1 || mode == CALC_SCHED_COLD)
		return bs->s[0].cycles;
	wt = dscratch(w, bs->n);
	schedule_weights(w, b, weighted, mode == CALC_SCHED_LOOP, wt);
	for (size_t k = 0; k < bs->n; k++)
		total += wt[k];
	for (size_t i = 0; i < bs->s[0].n; i++) {
		double acc = 0;

		for (size_t k = 0; k < bs->n; k++)
			acc += wt[k] * bs->s[k].insn[i].m / total;
		cycles += acc > 1e-9 ? acc : 0;
	}
	return cycles;
}

/*
 * The schedule every estimate uses, per block, by the options; and the
 * block's cycles under the other model (AUTO against LOOP), for the
 * confidence: an estimate whose M depends on what ran before is unsure.
 */
void calc_schedules(struct calc_work *w, bool weighted)
{
	enum calc_sched mode = w->c->opts.sched, alt = mode == CALC_SCHED_AUTO ? CALC_SCHED_LOOP
									      : CALC_SCHED_AUTO;

	for (size_t b = 0; b < w->cfg->exit; b++) {
		w->alt_m[b] = 0;
		if (!w->cfg->blocks[b].n_insns)
			continue;
		combine_mode(w, b, weighted, mode, &w->c->blocks[b].sched);
		w->alt_m[b] = combined_cycles(w, b, weighted, alt);
	}
}

/* Copies M and the flags into the instructions; crude M = 1 without a schedule. */
void calc_apply_schedules(struct calc_work *w)
{
	struct calc *c = w->c;

	for (size_t b = 0; b < w->cfg->exit; b++) {
		const struct cfg_block *blk = &w->cfg->blocks[b];
		const struct block_schedule *s = &c->blocks[b].sched;

		for (uint32_t k = 0; k < blk->n_insns; k++) {
			struct calc_insn *ci = &c->insns[blk->first + k];

			ci->flags &= ~(CALC_I_ISSUE | CALC_I_UNCERTAIN);
			if (s->insn && k < s->n) {
				const struct sched_insn *x = &s->insn[k];

				ci->m = x->m;
				ci->sreason = x->issue_point && x->m > 1 ? calc_static_of(x->reason)
									 : CALC_STATIC__COUNT;
				if (x->flags & SCHED_F_UNCERTAIN)
					ci->flags |= CALC_I_UNCERTAIN;
			} else {
				ci->m = 1;
				ci->sreason = CALC_STATIC__COUNT;
			}
			if (ci->m > 0)
				ci->flags |= CALC_I_ISSUE;
			if (!k)
				ci->flags |= CALC_I_HEAD;
		}
	}
}
