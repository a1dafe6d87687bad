/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc.c - the analysis of one procedure (calc.h): schedules,
 * skid, frequency estimation, propagation, flow correction, CPI, culprits
 * and the summary.
 */
#include "config.h"

#include "analysis/calc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/culprit.h"
#include "analysis/flow.h"
#include "analysis/freq.h"
#include "analysis/skid.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "db/meta.h"

#define PRED_TAIL 32        /* instructions run before a block scheduled with it (PRED) */
#define PRED_MAX 16         /* predecessors scheduled separately (the rest: cold) */
#define CYCLE_BLOCKS 64     /* blocks of a loop scheduled in its steady state */
#define CYCLE_INSNS 1024    /* instructions of such a loop */

/* Everything the analysis keeps while it runs. */
struct work {
	struct calc *c;
	const struct epoch_meta *meta;
	const struct cfg *cfg;
	double *rec[EVENT__COUNT];     /* recorded samples per instruction, events present */
	unsigned *skflags;             /* enum skid_flags per instruction */
	/* schedules: per block, one per distinct predecessor (and the cold one) */
	struct bsched {
		size_t n;
		struct block_schedule *s;  /* s[0]: cold */
		long *pred_edge;           /* edge index each schedule stands for (-1: cold/outside) */
		size_t cycle;              /* s[cycle]: in its loop's steady state (0: none) */
	} *bs;
	double *cls_val;               /* per class */
	unsigned char *cls_state;      /* enum freq_state */
	enum calc_conf *cls_conf;
	struct est_result *cls_est;
	double *cls_m;                 /* usable issue cycles of each class */
	double *cls_scale;             /* magnitude behind each value (freq_propagate) */
	double *alt_m;                 /* per block: best-case cycles under the other model */
	double *cls_agree, *cls_loads; /* per class: confidence features */
	unsigned char *cls_repaired;   /* per class: lowered by freq_repair */
	double moved_out;
};

/* ---- names ------------------------------------------------------------------- */

static const struct {
	const char *name, *key;
	char letter;
} culprits[CULPRIT__COUNT] = {
	[CULPRIT_ICACHE] = { "I-cache miss", "icache", 'i' },
	[CULPRIT_ITLB] = { "ITLB miss", "itlb", 'I' },
	[CULPRIT_DCACHE] = { "D-cache miss", "dcache", 'd' },
	[CULPRIT_DTLB] = { "DTLB miss", "dtlb", 'D' },
	[CULPRIT_BRANCH] = { "branch mispredict", "branch", 'p' },
	[CULPRIT_STORE_BUF] = { "store queue full", "store-queue", 'w' },
	[CULPRIT_MUL] = { "multiplier busy", "multiplier", 'm' },
	[CULPRIT_DIV] = { "divider busy or slow divide", "divider", 'v' },
	[CULPRIT_SYNC] = { "synchronisation", "sync", 'y' },
	[CULPRIT_STORE_FWD] = { "store forwarding failed", "store-forward", 'F' },
	[CULPRIT_ALIAS_4K] = { "4K aliasing", "alias-4k", 'K' },
	[CULPRIT_UNEXPLAINED] = { "unexplained stall", "unexplained", 'u' },
}, statics[CALC_STATIC__COUNT] = {
	[CALC_STATIC_SLOT] = { "slotting (dispatch/retire width)", "slotting", 's' },
	[CALC_STATIC_DEP] = { "register dependency", "dependency", 'r' },
	[CALC_STATIC_MEMDEP] = { "memory dependency", "memory-dependency", 'f' },
	[CALC_STATIC_UNIT] = { "functional unit busy", "unit", 'x' },
	[CALC_STATIC_SERIAL] = { "serialisation", "serialisation", 'z' },
};

const char *calc_conf_name(enum calc_conf c)
{
	static const char *const n[] = { "none", "low", "medium", "high" };

	return (unsigned)c < ARRAY_SIZE(n) ? n[c] : "none";
}

char calc_conf_letter(enum calc_conf c)
{
	return "-LMH"[(unsigned)c < 4 ? c : 0];
}

const char *calc_culprit_name(enum calc_culprit k) { return culprits[k].name; }
const char *calc_culprit_key(enum calc_culprit k) { return culprits[k].key; }
char calc_culprit_letter(enum calc_culprit k) { return culprits[k].letter; }
const char *calc_static_name(enum calc_static k) { return statics[k].name; }
const char *calc_static_key(enum calc_static k) { return statics[k].key; }
char calc_static_letter(enum calc_static k) { return statics[k].letter; }

enum calc_static calc_static_of(enum sched_reason r)
{
	switch (r) {
	case SCHED_LATENCY: case SCHED_DEP: return CALC_STATIC_DEP;
	case SCHED_MEMDEP: return CALC_STATIC_MEMDEP;
	case SCHED_UNIT: return CALC_STATIC_UNIT;
	case SCHED_DISPATCH: case SCHED_RETIRE: return CALC_STATIC_SLOT;
	case SCHED_SERIAL: return CALC_STATIC_SERIAL;
	default: return CALC_STATIC__COUNT;
	}
}

const char *calc_how_name(enum calc_how h)
{
	static const char *const n[] = { "none", "samples", "propagated", "flow", "repaired",
					 "measured", "branches" };

	return (unsigned)h < ARRAY_SIZE(n) ? n[h] : "none";
}

const char *calc_level_name(int level)
{
	static const char *const n[CALC_LEVEL__COUNT] = { "L1", "L2", "L3", "memory" };

	return level >= 0 && level < CALC_LEVEL__COUNT ? n[level] : "?";
}

long calc_insn_at(const struct calc *c, uint64_t addr)
{
	return cfg_insn_at(&c->list.cfg, addr);
}

/* ---- setup -------------------------------------------------------------------- */

static bool reachable(const struct cfg *cfg, size_t b)
{
	return b != cfg->exit && !(cfg->blocks[b].flags & CFG_BLOCK_UNREACHABLE);
}

static void choose_event(struct calc *c, const struct epoch_meta *meta)
{
	const struct listing *l = &c->list;

	c->time_event = EVENT_CYCLES;
	if (!l->totals[EVENT_CYCLES] && (l->totals[EVENT_CLOCK] ||
					 (meta && epoch_meta_event(meta, EVENT_CLOCK) &&
					  !epoch_meta_event(meta, EVENT_CYCLES))))
		c->time_event = EVENT_CLOCK;
	c->has_time = l->totals[c->time_event] > 0;
	c->skid = c->opts.skid >= 0 ? c->opts.skid : skid_default(meta, c->time_event);
}

static void choose_period(struct calc *c, const struct epoch_meta *meta)
{
	const struct epoch_event *e = meta ? epoch_meta_event(meta, c->time_event) : NULL;

	enum epoch_period_source src = EPOCH_PERIOD_NONE;

	c->period_source = "none";
	if (c->opts.period_cycles > 0) {
		c->period = c->opts.period_cycles;
		c->period_source = "option";
	} else if (e && e->period_in_ns && c->opts.mhz > 0) {
		c->period = (double)e->period * c->opts.mhz / 1000.0;
		c->period_source = "option";
	} else if (meta) {
		c->period = epoch_meta_time_cycles(meta, c->time_event, &src);
		c->period_source = epoch_period_source_name(src);
	}
}

static void alloc_results(struct calc *c)
{
	const struct cfg *cfg = &c->list.cfg;

	c->n_insns = cfg->n_insns;
	c->insns = xcalloc(c->n_insns + 1, sizeof(*c->insns));
	c->n_blocks = cfg->n_blocks;
	c->blocks = xcalloc(c->n_blocks + 1, sizeof(*c->blocks));
	c->n_edges = cfg->n_edges;
	c->edges = xcalloc(c->n_edges + 1, sizeof(*c->edges));
	for (size_t i = 0; i < c->n_insns; i++) {
		c->insns[i].insn = &cfg->insns[i];
		c->insns[i].block = c->list.insns[i].block;
		memcpy(c->insns[i].raw, c->list.insns[i].samples, sizeof(c->insns[i].raw));
	}
	for (size_t b = 0; b < c->n_blocks; b++) {
		c->blocks[b].cfg = &cfg->blocks[b];
		c->blocks[b].n_insns = cfg->blocks[b].n_insns;
		block_schedule_init(&c->blocks[b].sched);
	}
	for (size_t e = 0; e < c->n_edges; e++)
		c->edges[e].cfg = &cfg->edges[e];
}

/* ---- schedules ------------------------------------------------------------------ */

static bool self_edge(const struct cfg *cfg, uint32_t e)
{
	return cfg->edges[e].from == cfg->edges[e].to;
}

/* The predecessor of block b most often taken (by edge frequency; unknown: the first). */
static long main_pred(const struct work *w, uint32_t b)
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
 * before a call (the callee ran in between).  Written to buf in execution
 * order; returns how many.
 */
static size_t pred_context(const struct work *w, uint32_t p, struct insn **out)
{
	struct insn *buf;
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
	buf = *out = xmalloc((total + 1) * sizeof(*buf));
	for (size_t k = nchain; k-- > 0;) {
		const struct cfg_block *blk = &cfg->blocks[chain[k]];

		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++) {
			const struct insn *in = &cfg->insns[i];

			if (in->kind == INSN_CALL || in->kind == INSN_ICALL) {
				n = 0;
				continue;
			}
			buf[n++] = *in;
		}
	}
	if (n > PRED_TAIL) {
		memmove(buf, buf + (n - PRED_TAIL), PRED_TAIL * sizeof(*buf));
		n = PRED_TAIL;
	}
	return n;
}

static int sched_one(struct work *w, size_t b, const struct sched_entry *e, struct block_schedule *s)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];

	block_schedule_init(s);
	return schedule_block(w->c->model, &cfg->insns[blk->first], blk->n_insns, e, s);
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
static int sched_context(struct work *w, size_t b, const struct sched_entry *e,
			 struct block_schedule *out)
{
	static const size_t lens[] = { 16, 32 };
	struct block_schedule s;
	size_t runs = 0;
	double *acc = NULL;

	if (e->kind != SCHED_ENTRY_PRED)
		return sched_one(w, b, e, out);
	for (size_t k = 0; k < ARRAY_SIZE(lens); k++) {
		struct sched_entry x = *e;

		if (k && lens[k - 1] >= e->n_pred)
			break;
		if (x.n_pred > lens[k]) {
			x.pred += x.n_pred - lens[k];
			x.n_pred = lens[k];
		}
		if (sched_one(w, b, &x, runs ? &s : out))
			continue;
		if (!runs++) {
			acc = xcalloc(out->n + 1, sizeof(*acc));
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
	free(acc);
	return 0;
}

/*
 * Schedules block b cold, after each predecessor's code (its self-loop: in
 * the steady state), up to PRED_MAX predecessors: the modes combine these,
 * and the confidence compares two of the combinations.
 */
static void schedule_all(struct work *w, size_t b)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	struct bsched *bs = &w->bs[b];
	size_t cap = blk->n_pred + 1;

	bs->s = xcalloc(cap, sizeof(*bs->s));
	bs->pred_edge = xmalloc(cap * sizeof(*bs->pred_edge));
	if (sched_one(w, b, NULL, &bs->s[0])) {
		bs->n = 0;
		return;
	}
	bs->pred_edge[0] = -1;
	bs->n = 1;
	/* every mode schedules the contexts: the confidence compares models */
	for (uint32_t k = 0; k < blk->n_pred && bs->n <= PRED_MAX; k++) {
		uint32_t e = cfg->pred[blk->pred + k];
		const struct cfg_edge *ed = &cfg->edges[e];
		struct sched_entry entry = { SCHED_ENTRY_PRED, NULL, 0 };
		struct insn *ctx = NULL;

		if (ed->from == cfg->exit || ed->kind == CFG_CALL_RETURN)
			continue;
		if (self_edge(cfg, e)) {
			entry.kind = SCHED_ENTRY_LOOP;
		} else {
			entry.n_pred = pred_context(w, ed->from, &ctx);
			entry.pred = ctx;
			if (!entry.n_pred) {
				free(ctx);
				continue;
			}
		}
		if (!sched_context(w, b, &entry, &bs->s[bs->n]))
			bs->pred_edge[bs->n++] = (long)e;
		free(ctx);
	}
}

/*
 * How often edge e is taken, for finding hot cycles: its frequency (pass
 * 1), -1 if unknown.  (Guessing unknown ones from their source's frequency
 * found more cycles and made the suite worse: wl-branchy's arms and xz.)
 */
static double edge_heat(const struct work *w, uint32_t e)
{
	const struct cfg_edge *ed = &w->cfg->edges[e];
	double f = w->c->edges[e].freq;

	if (ed->from == w->cfg->exit || ed->kind == CFG_CALL_RETURN)
		return -1;
	return f;
}

/* The predecessor of block b by the hottest edge, or -1. */
static long hot_pred(const struct work *w, uint32_t b, long *edge)
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
static long cycle_pred(const struct work *w, uint32_t p)
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
static size_t hot_cycle(const struct work *w, size_t b, uint32_t e, uint32_t *cyc)
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
 * Block b in the steady state of the loop it is on: the hot cycle through
 * it (b, then the blocks back to b) scheduled as one self-loop, b's part
 * kept.  The multi-block form of SCHED_ENTRY_LOOP: what follows the block
 * overlaps with it as the core overlaps iterations.
 */
static int sched_cycle(struct work *w, size_t b, const uint32_t *cyc, size_t n,
		       struct block_schedule *out)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	struct block_schedule all;
	struct insn *trace;
	size_t len = 0;
	int ret;

	for (size_t k = 0; k < n; k++)
		len += cfg->blocks[cyc[k]].n_insns;
	trace = xmalloc((len + 1) * sizeof(*trace));
	len = 0;
	for (size_t k = 0; k < n; k++) {
		const struct cfg_block *x = &cfg->blocks[cyc[k]];

		memcpy(&trace[len], &cfg->insns[x->first], x->n_insns * sizeof(*trace));
		len += x->n_insns;
	}
	block_schedule_init(&all);
	ret = schedule_block(w->c->model, trace, len, &loop, &all);
	free(trace);
	if (ret)
		return -1;
	block_schedule_init(out);
	*out = all;
	out->n = blk->n_insns;
	out->insn = xmemdup(all.insn, blk->n_insns * sizeof(*all.insn));
	free(all.insn);
	for (size_t i = 0; i < out->n; i++) {
		struct sched_ref *r = &out->insn[i].producer;

		if (r->kind != SREF_NONE && r->index >= out->n)
			r->kind = SREF_NONE;  /* in another block of the cycle */
	}
	schedule_totals(out);
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
static long cycle_edge(const struct work *w, size_t b, uint32_t *cyc, size_t *n)
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

static void cycle_schedules(struct work *w)
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

static void copy_schedule(struct block_schedule *dst, const struct block_schedule *src)
{
	block_schedule_release(dst);
	*dst = *src;
	dst->insn = xmemdup(src->insn, src->n * sizeof(*src->insn));
}

/* Weights of block b's schedules: edge frequencies (pass 1: one per edge). */
static void schedule_weights(struct work *w, size_t b, bool weighted, bool loops_only, double *wt)
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
static void combine_mode(struct work *w, size_t b, bool weighted, enum calc_sched mode,
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
	wt = xcalloc(bs->n, sizeof(*wt));
	schedule_weights(w, b, weighted, mode == CALC_SCHED_LOOP, wt);
	for (size_t k = 0; k < bs->n; k++) {
		total += wt[k];
		if (wt[k] > best) {
			best = wt[k];
			heaviest = k;
		}
	}
	copy_schedule(out, &bs->s[heaviest]);
	acc = xcalloc(out->n + 1, sizeof(*acc));
	for (size_t k = 0; k < bs->n; k++)
		for (size_t i = 0; i < out->n; i++)
			acc[i] += wt[k] * bs->s[k].insn[i].m / total;
	for (size_t i = 0; i < out->n; i++)
		out->insn[i].m = acc[i];
	schedule_totals(out);
	free(acc);
	free(wt);
}

/*
 * The schedule every estimate uses, per block, by the options; and the
 * block's cycles under the other model (AUTO against LOOP), for the
 * confidence: an estimate whose M depends on what ran before is unsure.
 */
static void schedules(struct work *w, bool weighted)
{
	enum calc_sched mode = w->c->opts.sched, alt = mode == CALC_SCHED_AUTO ? CALC_SCHED_LOOP
									      : CALC_SCHED_AUTO;

	for (size_t b = 0; b < w->cfg->exit; b++) {
		struct block_schedule other;

		w->alt_m[b] = 0;
		if (!w->cfg->blocks[b].n_insns)
			continue;
		combine_mode(w, b, weighted, mode, &w->c->blocks[b].sched);
		block_schedule_init(&other);
		combine_mode(w, b, weighted, alt, &other);
		w->alt_m[b] = other.cycles;
		block_schedule_release(&other);
	}
}

/* Copies M and the flags into the instructions; crude M = 1 without a schedule. */
static void apply_schedules(struct work *w)
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

/* ---- skid --------------------------------------------------------------------------- */

/* Samples recorded in block b past its head (not split by the skid model). */
static double inner_samples(const struct work *w, size_t b)
{
	const struct cfg_block *blk = &w->cfg->blocks[b];
	double s = 0;

	for (uint32_t i = blk->first + 1; i < blk->first + blk->n_insns; i++)
		s += w->rec[w->c->time_event] ? w->rec[w->c->time_event][i] : 0;
	return s;
}

/*
 * Before any frequency is known (pass 1), a block head's samples are split
 * by how hot each predecessor looks: the samples recorded inside it (a
 * loop's back edge is far hotter than its entry); the invocations weigh
 * as the blocks that return.
 */
static double prior_weights(const struct work *w, double *ew)
{
	const struct cfg *cfg = w->cfg;
	double inv = 0;

	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];

		ew[e] = ed->from == cfg->exit ? 0 : inner_samples(w, ed->from);
		if (ed->kind == CFG_RETURN)
			inv += inner_samples(w, ed->from);
	}
	return inv;
}

static void attribute(struct work *w, bool weighted)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	double *ew = xcalloc(cfg->n_edges + 1, sizeof(*ew)), *out = xcalloc(cfg->n_insns + 1, sizeof(*out));
	double inv = c->invocations;

	if (weighted) {
		for (size_t e = 0; e < cfg->n_edges; e++)
			ew[e] = c->edges[e].freq > 0 ? c->edges[e].freq : 0;
	} else {
		inv = prior_weights(w, ew);
	}
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		double gone;

		if (!w->rec[ev])
			continue;
		gone = skid_attribute(cfg, w->rec[ev], ew, inv, ev == c->time_event ? c->skid
				      : skid_default(w->meta, (enum dcpi_event)ev), out,
				      ev == c->time_event ? w->skflags : NULL);
		for (size_t i = 0; i < cfg->n_insns; i++)
			c->insns[i].attributed[ev] = out[i];
		if (ev == c->time_event) {
			w->moved_out = gone;
			for (size_t i = 0; i < cfg->n_insns; i++) {
				struct calc_insn *ci = &c->insns[i];

				ci->samples = out[i];
				ci->flags &= ~(CALC_I_UNMEASURED | CALC_I_AFTER_CALL | CALC_I_ENTRY);
				if (w->skflags[i] & SKID_UNMEASURED)
					ci->flags |= CALC_I_UNMEASURED;
				if (w->skflags[i] & SKID_AFTER_CALL)
					ci->flags |= CALC_I_AFTER_CALL;
				if (w->skflags[i] & SKID_ENTRY)
					ci->flags |= CALC_I_ENTRY;
			}
		}
	}
	free(ew);
	free(out);
}

/* ---- estimation ---------------------------------------------------------------------- */

/*
 * The confidence of a class's estimate (the DCPI paper, 6.1.5), calibrated on
 * measured errors (docs/analysis.md): on an out-of-order core the
 * estimate is only as good as M, and M is trustworthy when the two
 * schedule models (cold or steady state, and after the predecessors'
 * code) agree on it and few instructions load (a cache miss is a stall
 * every window shares).  Few samples (the sum-ratio fallback) are low.
 */
static enum calc_conf confidence(const struct est_result *r, double agree, double loads)
{
	double dev = agree > 0 ? fabs(log(agree)) : INFINITY;

	if (r->method == EST_NONE)
		return CALC_CONF_NONE;
	if (r->method == EST_SUM || r->samples < 50)
		return CALC_CONF_LOW;
	if (dev < log(1.03) && loads < 0.05 && r->samples >= 200)
		return CALC_CONF_HIGH;
	if (dev < log(1.05) && loads < 0.10 && r->samples >= 100)
		return CALC_CONF_MEDIUM;
	return CALC_CONF_LOW;
}

/*
 * Agreement of the schedule models and share of loads over class cls.  A
 * class none of whose blocks has a schedule besides the cold one (a
 * procedure's entry, blocks entered only from outside or after calls) has
 * nothing to compare: its agreement is 0, not a trivial 1 (sort's compare()
 * prologue was medium at 0.35x).
 */
static void class_features(const struct work *w, int cls, double *agree, double *loads)
{
	const struct cfg *cfg = w->cfg;
	double used = 0, alt = 0, n = 0, ld = 0;
	bool compared = false;

	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->cls != cls || !blk->n_insns)
			continue;
		compared |= w->bs[b].n > 1;
		used += w->c->blocks[b].sched.cycles;
		alt += w->alt_m[b];
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++) {
			n++;
			ld += !!(cfg->insns[i].flags & INSN_F_LOAD);
		}
	}
	*agree = used > 0 && compared ? alt / used : 0;
	*loads = n > 0 ? ld / n : 0;
}

/* The points of class cls, block by block. */
static size_t class_points(struct work *w, int cls, struct est_point *p, size_t *idx)
{
	const struct cfg *cfg = w->cfg;
	size_t n = 0;

	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];
		const struct block_schedule *s = &w->c->blocks[b].sched;
		size_t base = n;

		if (blk->cls != cls || !blk->n_insns)
			continue;
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			const struct calc_insn *ci = &w->c->insns[blk->first + k];
			const struct sched_insn *x = s->insn && k < s->n ? &s->insn[k] : NULL;

			p[n].s = ci->samples;
			p[n].m = ci->m;
			p[n].seg = (unsigned)b;
			p[n].usable = !(ci->flags & (CALC_I_UNMEASURED | CALC_I_UNCERTAIN));
			p[n].producer = -1;
			if (x && x->producer.kind == SREF_BLOCK && x->producer.index < k &&
			    (x->reason == SCHED_DEP || x->reason == SCHED_MEMDEP || x->reason == SCHED_UNIT))
				p[n].producer = (int)(base + x->producer.index);
			idx[n++] = blk->first + k;
		}
	}
	return n;
}

/*
 * With samples of retired instructions (the instructions event, where a
 * PMU has it), a class's executions are counted, not inferred: each
 * executed instruction is one event, so executions = the class's
 * instruction samples x the event's period / its measured instructions.
 * Converted to executions per time sample.  Returns true if it applied.
 */
static bool instructions_estimate(struct work *w, const size_t *idx, size_t n,
				  struct est_result *r)
{
	const struct epoch_event *e = w->meta ? epoch_meta_event(w->meta, EVENT_INSTRUCTIONS) : NULL;
	double s = 0, count = 0;

	if (!w->rec[EVENT_INSTRUCTIONS] || !e || e->period_in_ns || !e->period || !(w->c->period > 0))
		return false;
	for (size_t k = 0; k < n; k++) {
		const struct calc_insn *ci = &w->c->insns[idx[k]];

		if (ci->flags & CALC_I_UNMEASURED)
			continue;
		s += ci->attributed[EVENT_INSTRUCTIONS];
		count++;
	}
	if (!(count > 0))
		return false;
	r->method = EST_INSTRUCTIONS;
	r->f = s * (double)e->period / count / w->c->period;
	r->samples = s;
	r->points = (unsigned)count;
	return true;
}

/* The estimator's knobs. */
static const struct est_params *est_params_of(const struct work *w)
{
	static const struct est_params defaults = EST_PARAMS_INIT;

	return w->c->opts.est ? w->c->opts.est : &defaults;
}

/*
 * True if the load at index d of block blk depends on its own result from
 * the previous pass through the block (a pointer chase: its address comes
 * from what it loaded last time), by register dataflow around the block.
 */
static bool self_dependent(const struct cfg *cfg, const struct cfg_block *blk, uint32_t d)
{
	struct regset taint = cfg->insns[blk->first + d].writes;

	for (uint32_t k = 1; k <= blk->n_insns; k++) {
		const struct insn *in = &cfg->insns[blk->first + (d + k) % blk->n_insns];

		if (k == blk->n_insns)
			return regset_intersects(&in->reads, &taint);
		if (regset_intersects(&in->reads, &taint)) {
			taint.w[0] |= in->writes.w[0];
			taint.w[1] |= in->writes.w[1];
		} else {
			taint.w[0] &= ~in->writes.w[0];
			taint.w[1] &= ~in->writes.w[1];
		}
	}
	return false;
}

/*
 * A loop whose time is one load's misses, each waiting for the last (a
 * pointer chase), leaves no clean issue point: the out-of-order core has
 * everything else done when the load returns, and it all retires in one
 * burst of at least a cycle per iteration.  For a one-block class whose
 * samples are dominated by such a load (60% or more of them, at 8 times
 * the ratio of the rest), F is the samples of the rest (without the load
 * and the instruction after it, which the load's samples spill onto) over
 * max(1, their count / retire width).  Returns true if it applied.
 */
static bool burst_estimate(struct work *w, int cls, struct est_result *r)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = NULL;
	double total = 0, rest = 0, rest_m = 0, best = 0, n = 0;
	long d = -1;

	for (size_t b = 0; b < cfg->exit; b++) {
		if (cfg->blocks[b].cls != cls || !cfg->blocks[b].n_insns)
			continue;
		if (blk)
			return false;
		blk = &cfg->blocks[b];
	}
	if (!blk || !est_params_of(w)->burst)
		return false;
	for (uint32_t k = 0; k < blk->n_insns; k++) {
		const struct calc_insn *ci = &w->c->insns[blk->first + k];

		if (ci->flags & (CALC_I_UNMEASURED | CALC_I_UNCERTAIN))
			return false;
		total += ci->samples;
		if ((cfg->insns[blk->first + k].flags & INSN_F_LOAD) && ci->samples > best) {
			best = ci->samples;
			d = (long)k;
		}
	}
	if (d < 0 || best < 0.6 * total || !self_dependent(cfg, blk, (uint32_t)d))
		return false;
	for (uint32_t k = 0; k < blk->n_insns; k++) {
		const struct calc_insn *ci = &w->c->insns[blk->first + k];

		if ((long)k == d || (long)k == d + 1)
			continue;
		rest += ci->samples;
		rest_m += ci->m;
		n++;
	}
	if (rest < 20 || !(w->c->insns[blk->first + d].m > 0) ||
	    best / w->c->insns[blk->first + d].m < 8 * rest / (rest_m > 0 ? rest_m : 1))
		return false;
	r->method = EST_BURST;
	r->f = rest / (n / w->c->model->retire_width > 1 ? n / w->c->model->retire_width : 1);
	r->samples = rest;
	return true;
}

/*
 * A count measured from an induction register (measure.h) for class cls:
 * executions over the cycles of a sample.  Confidence: the count's error
 * is that of the loop's samples (periodic, not Poisson: about one sample
 * in a run) and of the pairs' mean, small with tens of pairs; what can
 * spoil it is a loop whose runs a pair straddles, each of which loses up
 * to a pair's iterations: the share of wrong-way pairs bounds the error
 * (unless the trip count accounts for them).
 */
static bool measured_estimate(struct work *w, int cls, struct est_result *r,
			      enum calc_conf *conf)
{
	const struct calc *c = w->c;
	const struct measure *best = NULL;

	if (!(c->period > 0))
		return false;
	for (size_t k = 0; k < c->n_measured; k++) {
		const struct measure *m = &c->measured[k];

		if (w->cfg->blocks[m->block].cls == cls && (!best || m->good > best->good))
			best = m;
	}
	if (!best)
		return false;
	r->method = EST_MEASURED;
	r->f = best->execs / c->period;
	r->samples = best->loop_samples;
	r->points = (unsigned)best->good;
	double wrong = best->trip ? 0 : (double)best->against / (double)best->pairs;

	if (best->good >= 40 && best->loop_samples >= 200 && wrong <= 0.01)
		*conf = CALC_CONF_HIGH;
	else if (best->good >= 20 && best->loop_samples >= 50 && wrong <= 0.05)
		*conf = CALC_CONF_MEDIUM;
	else
		*conf = CALC_CONF_LOW;
	return true;
}

/* Sampling error alone: about 1/sqrt(samples). */
static enum calc_conf instructions_confidence(const struct est_result *r)
{
	if (r->samples >= 400)
		return CALC_CONF_HIGH;
	return r->samples >= 100 ? CALC_CONF_MEDIUM : CALC_CONF_LOW;
}

static void estimate_classes(struct work *w)
{
	const struct cfg *cfg = w->cfg;
	struct est_point *p = xmalloc((cfg->n_insns + 1) * sizeof(*p));
	size_t *idx = xmalloc((cfg->n_insns + 1) * sizeof(*idx));
	unsigned char *used = xmalloc(cfg->n_insns + 1);
	unsigned char *has = xcalloc(cfg->n_classes + 1, 1);

	for (size_t b = 0; b < cfg->exit; b++)
		if (cfg->blocks[b].n_insns && cfg->blocks[b].cls >= 0)
			has[cfg->blocks[b].cls] = 1;
	for (size_t i = 0; i < cfg->n_insns; i++)
		w->c->insns[i].flags &= ~CALC_I_USED;
	for (size_t cls = 0; cls < cfg->n_classes; cls++) {
		struct est_result *r = &w->cls_est[cls];
		size_t n;

		w->cls_state[cls] = FREQ_UNKNOWN;
		w->cls_val[cls] = 0;
		w->cls_conf[cls] = CALC_CONF_NONE;
		if (!has[cls] || !w->c->has_time)
			continue;
		n = class_points(w, (int)cls, p, idx);
		freq_estimate_class(p, n, w->c->opts.est, r, used);
		w->cls_m[cls] = r->total_m;
		class_features(w, (int)cls, &w->cls_agree[cls], &w->cls_loads[cls]);
		if (measured_estimate(w, (int)cls, r, &w->cls_conf[cls])) {
			memset(used, 0, n);
		} else if (instructions_estimate(w, idx, n, r)) {
			memset(used, 0, n);
			w->cls_conf[cls] = instructions_confidence(r);
		} else if (burst_estimate(w, (int)cls, r)) {
			memset(used, 0, n);
			w->cls_conf[cls] = CALC_CONF_LOW;
		} else if (r->method != EST_NONE) {
			w->cls_conf[cls] = confidence(r, w->cls_agree[cls], w->cls_loads[cls]);
		} else {
			continue;
		}
		w->cls_val[cls] = r->f;
		w->cls_state[cls] = FREQ_ESTIMATED;
		for (size_t k = 0; k < n; k++)
			if (used[k])
				w->c->insns[idx[k]].flags |= CALC_I_USED;
	}
	free(has);
	free(used);
	free(idx);
	free(p);
}

/* The flow graph of the procedure for propagation. */
static void fgraph_make(const struct cfg *cfg, struct fgraph *g, int **ncls, int **acls,
			uint32_t **from, uint32_t **to)
{
	*ncls = xmalloc((cfg->n_blocks + 1) * sizeof(int));
	*acls = xmalloc((cfg->n_edges + 1) * sizeof(int));
	*from = xmalloc((cfg->n_edges + 1) * sizeof(uint32_t));
	*to = xmalloc((cfg->n_edges + 1) * sizeof(uint32_t));
	for (size_t b = 0; b < cfg->n_blocks; b++)
		(*ncls)[b] = b == cfg->exit || reachable(cfg, b) ? cfg->blocks[b].cls : -1;
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		bool live = (ed->from == cfg->exit || reachable(cfg, ed->from)) &&
			    (ed->to == cfg->exit || reachable(cfg, ed->to));

		(*acls)[e] = live ? ed->cls : -1;
		(*from)[e] = ed->from;
		(*to)[e] = ed->to;
	}
	g->n_nodes = cfg->n_blocks;
	g->n_arcs = cfg->n_edges;
	g->n_classes = cfg->n_classes;
	g->from = *from;
	g->to = *to;
	g->node_cls = *ncls;
	g->arc_cls = *acls;
	g->entry = (uint32_t)cfg->entry;
	g->exit = (uint32_t)cfg->exit;
	g->in_constraints = !(cfg->flags & CFG_MISSING_EDGES);
}

/* Confidence of propagated classes: the weakest estimate, one level down. */
static void propagated_confidence(struct work *w)
{
	enum calc_conf lo = CALC_CONF_HIGH;
	bool any = false;

	for (size_t c = 0; c < w->cfg->n_classes; c++)
		if (w->cls_state[c] == FREQ_ESTIMATED) {
			any = true;
			if (w->cls_conf[c] < lo)
				lo = w->cls_conf[c];
		}
	if (!any)
		return;
	for (size_t c = 0; c < w->cfg->n_classes; c++)
		if (w->cls_state[c] == FREQ_PROPAGATED)
			w->cls_conf[c] = lo > CALC_CONF_LOW ? lo - 1 : CALC_CONF_LOW;
}

static void propagate(struct work *w)
{
	struct fgraph g;
	int *ncls, *acls;
	uint32_t *from, *to;

	fgraph_make(w->cfg, &g, &ncls, &acls, &from, &to);
	for (size_t c = 0; c < w->cfg->n_classes; c++)
		w->cls_scale[c] = w->cls_val[c];
	freq_propagate(&g, w->cls_val, w->cls_state, w->cls_scale);
	propagated_confidence(w);
	free(ncls);
	free(acls);
	free(from);
	free(to);
}

/* Class cls's value if known, else -1. */
static double known_val(const struct work *w, int cls)
{
	return cls >= 0 && w->cls_state[cls] != FREQ_UNKNOWN ? w->cls_val[cls] : -1;
}

/*
 * Flow bounds on block b's frequency from its neighbours: each incoming
 * edge at most its source's frequency (all known: an upper bound), the
 * known edges on either side together at most the block's (a lower bound).
 */
static void block_bounds(const struct work *w, size_t b, double *lo, double *hi)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	double up = 0, in = 0, out = 0;

	for (uint32_t k = 0; k < blk->n_pred && up >= 0; k++) {
		const struct cfg_edge *ed = &cfg->edges[cfg->pred[blk->pred + k]];
		double v = known_val(w, ed->cls);

		if (v >= 0)
			in += v;
		else
			v = known_val(w, cfg->blocks[ed->from].cls);
		up = v >= 0 ? up + v : -1;
	}
	for (uint32_t k = 0; k < blk->n_succ; k++) {
		double v = known_val(w, cfg->edges[cfg->succ[blk->succ + k]].cls);

		out += v > 0 ? v : 0;
	}
	*hi = blk->n_pred ? up : -1;
	*lo = in > out ? in : out;
}

/*
 * A class with samples that neither its samples (no issue point: the
 * steady state of its loop hides it) nor propagation valued: the middle of
 * the bounds its neighbours put on it (bzip2's unrolled compares: about
 * its predecessor's frequency).  Low confidence.
 */
static void bound_unknown(struct work *w)
{
	const struct cfg *cfg = w->cfg;

	for (size_t cls = 0; cls < cfg->n_classes; cls++) {
		double lo = 0, hi = INFINITY, samples = 0;

		if (w->cls_state[cls] != FREQ_UNKNOWN)
			continue;
		for (size_t b = 0; b < cfg->exit; b++) {
			const struct cfg_block *blk = &cfg->blocks[b];
			double l, h;

			if (blk->cls != (int)cls || !blk->n_insns)
				continue;
			for (uint32_t k = 0; k < blk->n_insns; k++)
				samples += w->c->insns[blk->first + k].samples;
			block_bounds(w, b, &l, &h);
			lo = l > lo ? l : lo;
			if (h >= 0 && h < hi)
				hi = h;
		}
		if (!(samples > 0) || (!(lo > 0) && !isfinite(hi)))
			continue;
		if (!isfinite(hi) || hi < lo)
			hi = lo;
		w->cls_val[cls] = lo > 0 ? (lo + hi) / 2 : hi;
		w->cls_state[cls] = FREQ_PROPAGATED;
		w->cls_conf[cls] = CALC_CONF_LOW;
	}
}

/* Puts the class values on blocks and edges. */
static void spread_values(struct work *w)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;

	for (size_t b = 0; b < cfg->n_blocks; b++) {
		int cls = cfg->blocks[b].cls;
		struct calc_block *cb = &c->blocks[b];

		cb->freq = -1;
		cb->conf = CALC_CONF_NONE;
		cb->how = CALC_HOW_NONE;
		memset(&cb->est, 0, sizeof(cb->est));
		if (cls >= 0) {
			const struct est_result *r = &w->cls_est[cls];

			cb->est = (struct calc_estimate){ (int)r->method, r->windows, r->points, r->spread,
							  r->support, r->samples, r->total_s, r->total_m,
							  w->cls_agree[cls], w->cls_loads[cls] };
		}
		if (cls < 0 || w->cls_state[cls] == FREQ_UNKNOWN)
			continue;
		cb->freq = w->cls_val[cls];
		cb->conf = w->cls_conf[cls];
		cb->how = w->cls_repaired[cls] ? CALC_HOW_REPAIRED :
			  w->cls_est[cls].method == EST_BRANCHES &&
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_BRANCHES :
			  w->cls_est[cls].method == EST_MEASURED &&
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_MEASURED :
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_SAMPLES : CALC_HOW_PROPAGATED;
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		int cls = cfg->edges[e].cls;
		struct calc_edge *ce = &c->edges[e];

		ce->freq = -1;
		ce->conf = CALC_CONF_NONE;
		ce->how = CALC_HOW_NONE;
		if (cls < 0 || w->cls_state[cls] == FREQ_UNKNOWN)
			continue;
		ce->freq = w->cls_val[cls];
		ce->conf = w->cls_conf[cls];
		ce->how = w->cls_repaired[cls] ? CALC_HOW_REPAIRED :
			  w->cls_est[cls].method == EST_BRANCHES &&
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_BRANCHES :
			  w->cls_est[cls].method == EST_MEASURED &&
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_MEASURED :
			  w->cls_state[cls] == FREQ_ESTIMATED ? CALC_HOW_SAMPLES : CALC_HOW_PROPAGATED;
	}
	c->invocations = c->blocks[cfg->exit].freq;
}

/* ---- flow correction -------------------------------------------------------------- */

static double rel_error(enum calc_conf conf)
{
	switch (conf) {
	case CALC_CONF_HIGH: return 0.05;
	case CALC_CONF_MEDIUM: return 0.15;
	case CALC_CONF_LOW: return 0.4;
	default: return 0;
	}
}

/*
 * The weight of an estimate: one over its expected error, relative to the
 * magnitude it comes from (a propagated difference of large values is as
 * uncertain as they are), with a floor for sampling error (about one
 * sample per class issue cycle).  About 0 for unknown values.
 */
static double est_weight(double val, enum calc_conf conf, double class_m, double scale)
{
	double rel = rel_error(conf), floor = class_m > 0 ? 1.0 / class_m : 1.0, mag, sigma;

	if (conf == CALC_CONF_NONE || val < 0)
		return 1e-9;
	mag = scale > val ? scale : val;
	sigma = sqrt(rel * mag * rel * mag + floor * floor);
	return 1.0 / sigma;
}

struct netb {
	uint32_t *from, *to;
	double *est, *w;
	/* per arc while building: confidence, class issue cycles, scale */
	enum calc_conf *conf;
	double *cm, *scale;
	size_t n, alloc[7];
	long *block_arc, *edge_arc;
	long inv_arc;
};

static size_t net_arc(struct netb *n, uint32_t u, uint32_t v, double est, enum calc_conf conf,
		      double cm, double scale)
{
	ALLOC_GROW(n->from, n->n + 1, n->alloc[0]);
	ALLOC_GROW(n->to, n->n + 1, n->alloc[1]);
	ALLOC_GROW(n->est, n->n + 1, n->alloc[2]);
	ALLOC_GROW(n->w, n->n + 1, n->alloc[3]);
	ALLOC_GROW(n->conf, n->n + 1, n->alloc[4]);
	ALLOC_GROW(n->cm, n->n + 1, n->alloc[5]);
	ALLOC_GROW(n->scale, n->n + 1, n->alloc[6]);
	n->from[n->n] = u;
	n->to[n->n] = v;
	n->est[n->n] = est > 0 ? est : 0;
	n->conf[n->n] = est >= 0 ? conf : CALC_CONF_NONE;
	n->cm[n->n] = cm;
	n->scale[n->n] = scale;
	return n->n++;
}

/* Node of block b: 2b (in), 2b+1 (out); EXIT is one node, 2*exit. */
static uint32_t node_in(const struct cfg *cfg, size_t b)
{
	(void)cfg;
	return (uint32_t)(2 * b);
}

static uint32_t node_out(const struct cfg *cfg, size_t b)
{
	return b == cfg->exit ? (uint32_t)(2 * b) : (uint32_t)(2 * b + 1);
}

static double class_m(const struct work *w, int cls)
{
	return cls >= 0 ? w->cls_m[cls] : 0;
}

static double class_scale(const struct work *w, int cls)
{
	return cls >= 0 ? w->cls_scale[cls] : 0;
}

/*
 * The weights: an estimate's error is taken relative to the flow around
 * it (the largest value on the arcs of its two nodes), not to itself.  A
 * frequency estimated far too low (a short block whose time the out-of-
 * order core hid: M overstated) would otherwise be the cheapest value to
 * keep, and the correction would cut every loop through it.
 */
static void net_weights(struct netb *n, size_t n_nodes)
{
	double *mag = xcalloc(n_nodes + 1, sizeof(*mag));

	for (size_t k = 0; k < n->n; k++) {
		if (n->est[k] > mag[n->from[k]])
			mag[n->from[k]] = n->est[k];
		if (n->est[k] > mag[n->to[k]])
			mag[n->to[k]] = n->est[k];
	}
	for (size_t k = 0; k < n->n; k++) {
		double local = mag[n->from[k]] > mag[n->to[k]] ? mag[n->from[k]] : mag[n->to[k]];

		n->w[k] = est_weight(n->est[k], n->conf[k], n->cm[k],
				     n->scale[k] > local ? n->scale[k] : local);
	}
	free(mag);
}

static void build_net(struct work *w, struct netb *n)
{
	const struct cfg *cfg = w->cfg;
	const struct calc *c = w->c;

	n->block_arc = xmalloc((cfg->n_blocks + 1) * sizeof(long));
	n->edge_arc = xmalloc((cfg->n_edges + 1) * sizeof(long));
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct calc_block *cb = &c->blocks[b];
		int cls = cfg->blocks[b].cls;

		n->block_arc[b] = -1;
		if (!reachable(cfg, b))
			continue;
		n->block_arc[b] = (long)net_arc(n, node_in(cfg, b), node_out(cfg, b), cb->freq, cb->conf,
						class_m(w, cls), class_scale(w, cls));
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		const struct calc_edge *ce = &c->edges[e];

		n->edge_arc[e] = -1;
		if (!(ed->from == cfg->exit || reachable(cfg, ed->from)) ||
		    !(ed->to == cfg->exit || reachable(cfg, ed->to)))
			continue;
		n->edge_arc[e] = (long)net_arc(n, node_out(cfg, ed->from), node_in(cfg, ed->to),
					       ce->freq, ce->conf, class_m(w, ed->cls),
					       class_scale(w, ed->cls));
	}
	n->inv_arc = (long)net_arc(n, node_out(cfg, cfg->exit), node_in(cfg, cfg->entry),
				   c->invocations, c->blocks[cfg->exit].conf,
				   class_m(w, cfg->blocks[cfg->exit].cls),
				   class_scale(w, cfg->blocks[cfg->exit].cls));
	net_weights(n, 2 * cfg->n_blocks);
}

static void take_flow(double old, double nv, double *freq, enum calc_how *how)
{
	if (old < 0 || fabs(nv - old) > 0.02 * (old > 0 ? old : 1e-12))
		*how = CALC_HOW_FLOW;
	*freq = nv;
}

static void flow(struct work *w)
{
	const struct cfg *cfg = w->cfg;
	struct calc *c = w->c;
	struct netb n = { 0 };
	struct flow_net net;
	double *x;
	bool any = false;

	for (size_t cls = 0; cls < cfg->n_classes; cls++)
		any |= w->cls_state[cls] != FREQ_UNKNOWN;
	if (!any || (cfg->flags & CFG_MISSING_EDGES) || !c->opts.flow)
		return;
	build_net(w, &n);
	net = (struct flow_net){ 2 * cfg->n_blocks, n.n, n.from, n.to, n.est, n.w, 0 };
	x = xcalloc(n.n + 1, sizeof(*x));
	if (!flow_correct(&net, x)) {
		for (size_t b = 0; b < cfg->n_blocks; b++)
			if (n.block_arc[b] >= 0)
				take_flow(c->blocks[b].freq, x[n.block_arc[b]], &c->blocks[b].freq,
					  &c->blocks[b].how);
		for (size_t e = 0; e < cfg->n_edges; e++)
			if (n.edge_arc[e] >= 0)
				take_flow(c->edges[e].freq, x[n.edge_arc[e]], &c->edges[e].freq,
					  &c->edges[e].how);
		c->invocations = x[n.inv_arc];
		c->blocks[cfg->exit].freq = c->invocations;
		for (size_t b = 0; b < cfg->n_blocks; b++)
			if (c->blocks[b].conf == CALC_CONF_NONE && c->blocks[b].freq >= 0)
				c->blocks[b].conf = CALC_CONF_LOW;
		for (size_t e = 0; e < cfg->n_edges; e++)
			if (c->edges[e].conf == CALC_CONF_NONE && c->edges[e].freq >= 0)
				c->edges[e].conf = CALC_CONF_LOW;
	}
	free(x);
	free(n.from);
	free(n.to);
	free(n.est);
	free(n.w);
	free(n.conf);
	free(n.cm);
	free(n.scale);
	free(n.block_arc);
	free(n.edge_arc);
}

/* True if block b is entered from a conditional or indirect branch. */
static bool after_branch(const struct cfg *cfg, size_t b)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	for (uint32_t k = 0; k < blk->n_pred; k++) {
		const struct cfg_edge *ed = &cfg->edges[cfg->pred[blk->pred + k]];
		const struct cfg_block *p;

		if (ed->from == cfg->exit)
			continue;
		p = &cfg->blocks[ed->from];
		if (p->n_insns && (cfg->insns[p->first + p->n_insns - 1].kind == INSN_CJUMP ||
				   cfg->insns[p->first + p->n_insns - 1].kind == INSN_IJUMP))
			return true;
	}
	return false;
}

/*
 * Local repair of inflated estimates (freq_repair, beyond the paper): the
 * weight of a class is its samples minus those at the heads of blocks a
 * conditional or indirect branch leads to, where a mispredict's penalty
 * shows; a class whose samples are mostly there is suspect.  Repaired
 * classes are low confidence (their value comes from their neighbours'
 * and a guess at which side of a branch took the penalty).
 */
static void repair(struct work *w)
{
	const struct cfg *cfg = w->cfg;
	size_t n = cfg->n_classes;
	struct fgraph g;
	int *ncls, *acls;
	uint32_t *from, *to;
	double *wt, *susp;
	unsigned char *ok, *changed;
	double tol = est_params_of(w)->repair;

	if (!(tol > 0) || !n || (cfg->flags & CFG_MISSING_EDGES))
		return;
	wt = xcalloc(n, sizeof(*wt));
	susp = xcalloc(n, sizeof(*susp));
	ok = xcalloc(n, 1);
	changed = xcalloc(n, 1);
	for (size_t c = 0; c < n; c++) {
		ok[c] = w->cls_state[c] == FREQ_ESTIMATED && w->cls_est[c].method == EST_CLUSTER;
		wt[c] = w->cls_est[c].total_s;
	}
	/* samples at heads a conditional or indirect branch leads to: mispredicts */
	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->cls < 0 || !blk->n_insns || !after_branch(cfg, b))
			continue;
		wt[blk->cls] -= w->c->insns[blk->first].samples;
		if (wt[blk->cls] < 0)
			wt[blk->cls] = 0;
	}
	for (size_t c = 0; c < n; c++)
		susp[c] = w->cls_est[c].total_s > 0 ? 1 - wt[c] / w->cls_est[c].total_s : 0;
	fgraph_make(cfg, &g, &ncls, &acls, &from, &to);
	freq_repair(&g, w->cls_val, ok, wt, susp, tol, changed);
	for (size_t c = 0; c < n; c++) {
		w->cls_repaired[c] = changed[c];
		if (changed[c])
			w->cls_conf[c] = CALC_CONF_LOW;
	}
	free(ncls);
	free(acls);
	free(from);
	free(to);
	free(wt);
	free(susp);
	free(ok);
	free(changed);
}

/* Bursts: a branch's outcomes counted at least this often give its edges' values. */
#define BRANCH_MIN 12

/* A class whose value branch outcomes may give: none yet, or a low-confidence estimate. */
static bool overridable(const struct work *w, const unsigned char *valued, int cls)
{
	return cls >= 0 && !valued[cls] && w->cls_est[cls].method != EST_MEASURED &&
	       (w->cls_state[cls] == FREQ_UNKNOWN || w->cls_conf[cls] <= CALC_CONF_LOW);
}

/*
 * Confidence conf (at most), and the outcomes behind the value in samples:
 * medium only where the share's binomial error, sqrt((1 - p) / n), is 5%
 * or less and the value it multiplies is medium or better.
 */
static void set_branch_value(struct work *w, unsigned char *valued, int cls, double v,
			     double outcomes, enum calc_conf conf)
{
	w->cls_val[cls] = v;
	w->cls_state[cls] = FREQ_ESTIMATED;
	w->cls_conf[cls] = conf;
	w->cls_est[cls].method = EST_BRANCHES;
	w->cls_est[cls].samples = outcomes;
	w->cls_repaired[cls] = 0;
	valued[cls] = 1;
}

/* The outgoing edges of block b, from its branch's outcomes; returns how many were valued. */
static size_t branch_edges(struct work *w, unsigned char *valued, size_t b)
{
	const struct cfg *cfg = w->cfg;
	const struct burstview *bv = &w->c->bursts;
	const struct cfg_block *blk = &cfg->blocks[b];
	size_t last = blk->first + blk->n_insns - 1, n = 0;
	uint64_t total = bv->taken[last] + bv->fallthrough[last];

	if (cfg->insns[last].kind != INSN_CJUMP || total < BRANCH_MIN)
		return 0;
	for (uint32_t k = 0; k < blk->n_succ; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->succ[blk->succ + k]];
		uint64_t c = e->kind == CFG_TAKEN ? bv->taken[last] : bv->fallthrough[last];
		double p, rel;

		if ((e->kind != CFG_TAKEN && e->kind != CFG_FALLTHROUGH) || e->cls == blk->cls ||
		    !overridable(w, valued, e->cls))
			continue;
		p = (double)c / (double)total;
		rel = c ? sqrt((1 - p) / (double)c) : INFINITY;
		set_branch_value(w, valued, e->cls, w->cls_val[blk->cls] * p, (double)c,
				 rel <= 0.05 && w->cls_conf[blk->cls] >= CALC_CONF_MEDIUM ? CALC_CONF_MEDIUM
											  : CALC_CONF_LOW);
		n++;
	}
	return n;
}

/* Block b's value as the sum of its incoming edges, when branch outcomes or counts gave them all. */
static size_t sum_of_edges(struct work *w, unsigned char *valued, size_t b)
{
	const struct cfg *cfg = w->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	double sum = 0, least = INFINITY;
	enum calc_conf conf = CALC_CONF_MEDIUM;
	bool any = false;

	if (!overridable(w, valued, blk->cls))
		return 0;
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->pred[blk->pred + k]];

		if (e->from == cfg->exit || !reachable(cfg, e->from))
			continue;
		if (e->cls < 0 || !valued[e->cls])
			return 0;
		sum += w->cls_val[e->cls];
		if (w->cls_est[e->cls].samples < least)
			least = w->cls_est[e->cls].samples;
		if (w->cls_conf[e->cls] < conf)
			conf = w->cls_conf[e->cls];
		any = true;
	}
	if (!any)
		return 0;
	set_branch_value(w, valued, blk->cls, sum, least, conf);
	return 1;
}

/*
 * Exact branch outcomes from bursts (burstview.h): where a block's value is
 * measured, at least medium confidence, or itself from outcomes, and its
 * conditional branch was stepped BRANCH_MIN times, each outgoing edge
 * without a better value (unknown, or low confidence) takes the block's
 * value times the edge's share of the outcomes; a block all of whose
 * incoming edges got values so takes their sum; repeated while it values
 * more.
 * Returns the number of classes valued.
 */
static size_t branch_outcomes(struct work *w)
{
	const struct cfg *cfg = w->cfg;
	unsigned char *valued;
	size_t changed = 0, round;

	if (!w->c->bursts.steps || !est_params_of(w)->branches)
		return 0;
	valued = xcalloc(cfg->n_classes + 1, 1);
	for (size_t c = 0; c < cfg->n_classes; c++)
		valued[c] = w->cls_est[c].method == EST_MEASURED && w->cls_state[c] == FREQ_ESTIMATED;
	do {
		round = 0;
		for (size_t b = 0; b < cfg->exit; b++) {
			const struct cfg_block *blk = &cfg->blocks[b];
			int cls = blk->cls;

			if (!blk->n_insns || cls < 0)
				continue;
			round += sum_of_edges(w, valued, b);
			if (w->cls_state[cls] != FREQ_UNKNOWN &&
			    (valued[cls] || w->cls_conf[cls] >= CALC_CONF_MEDIUM))
				round += branch_edges(w, valued, b);
		}
		changed += round;
	} while (round);
	free(valued);
	return changed;
}

/* Bursts: a class stepped at least this often is scaled from its steps. */
#define STEPS_MIN 24

static int by_ratio(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Classes scaled from their steps in bursts: a burst follows the program
 * for a few hundred instructions from a random moment, so within a
 * procedure the times each class was stepped are proportional to how
 * often it ran.  The scale comes from a measured class if there is one,
 * else from the classes valued from samples: the sample-weighted median of
 * value over steps (their errors go both ways; the median takes the
 * middle).  Low-confidence classes stepped STEPS_MIN times take scale x
 * steps, low confidence still.  Returns the number of classes valued.
 */
static size_t steps_scale(struct work *w)
{
	const struct cfg *cfg = w->cfg;
	const struct burstview *bv = &w->c->bursts;
	double *steps, (*q)[2], scale = 0, total = 0, acc = 0;
	size_t n = 0, valued = 0;

	if (!bv->steps || !est_params_of(w)->steps)
		return 0;
	steps = xcalloc(cfg->n_classes + 1, sizeof(*steps));
	q = xcalloc(cfg->n_classes + 1, sizeof(*q));
	for (size_t b = 0; b < cfg->exit; b++)
		if (cfg->blocks[b].n_insns && cfg->blocks[b].cls >= 0)
			steps[cfg->blocks[b].cls] += (double)bv->stepped[cfg->blocks[b].first];
	for (size_t c = 0; c < cfg->n_classes; c++) {
		if (steps[c] < STEPS_MIN || w->cls_state[c] != FREQ_ESTIMATED || !(w->cls_val[c] > 0))
			continue;
		if (w->cls_est[c].method == EST_MEASURED) {
			scale = w->cls_val[c] / steps[c];
			break;
		}
		if (w->cls_est[c].method != EST_CLUSTER && w->cls_est[c].method != EST_SUM)
			continue;
		q[n][0] = w->cls_val[c] / steps[c];
		q[n++][1] = w->cls_est[c].total_s;
		total += w->cls_est[c].total_s;
	}
	if (!(scale > 0) && n) {
		qsort(q, n, sizeof(*q), by_ratio);
		for (size_t k = 0; k < n && !(scale > 0); k++)
			if ((acc += q[k][1]) >= total / 2)
				scale = q[k][0];
	}
	for (size_t c = 0; scale > 0 && c < cfg->n_classes; c++) {
		if (steps[c] < STEPS_MIN || w->cls_est[c].method == EST_MEASURED ||
		    w->cls_est[c].method == EST_BRANCHES ||
		    (w->cls_state[c] != FREQ_UNKNOWN && w->cls_conf[c] > CALC_CONF_LOW))
			continue;
		w->cls_val[c] = scale * steps[c];
		w->cls_state[c] = FREQ_ESTIMATED;
		w->cls_conf[c] = CALC_CONF_LOW;
		w->cls_est[c].method = EST_BRANCHES;
		w->cls_est[c].samples = steps[c];
		w->cls_repaired[c] = 0;
		valued++;
	}
	free(steps);
	free(q);
	return valued;
}

static void frequencies(struct work *w)
{
	estimate_classes(w);
	repair(w);
	propagate(w);
	if (branch_outcomes(w))
		propagate(w);
	if (steps_scale(w))
		propagate(w);
	bound_unknown(w);
	spread_values(w);
	flow(w);
}

/* ---- CPI, stalls, culprits -------------------------------------------------------------- */

/* True if a difference of d cycles per execution at i is beyond sampling noise. */
static bool significant(const struct calc_insn *ci, double freq, double d)
{
	double noise = freq > 0 ? 2.0 * sqrt(ci->samples > 1 ? ci->samples : 1) / freq : INFINITY;

	return fabs(d) >= 0.5 && fabs(d) > noise;
}

/*
 * The memory-ordering conflicts the bursts saw at load i (burstview.h):
 * culprits of its dynamic stall, each store a culprit instruction; they
 * explain what was unexplained.
 */
static void burst_culprits(struct calc *c, size_t i, struct calc_insn *ci)
{
	unsigned bits = 0;

	for (size_t k = 0; k < c->bursts.n_conflicts; k++) {
		const struct burst_conflict *bc = &c->bursts.conflicts[k];
		enum calc_culprit kind = bc->kind == BURST_STORE_FORWARD ? CULPRIT_STORE_FWD
									 : CULPRIT_ALIAS_4K;

		if (bc->load != i)
			continue;
		bits |= 1u << kind;
		ci->causes = xreallocarray(ci->causes, ci->n_causes + 1, sizeof(*ci->causes));
		ci->causes[ci->n_causes++] = (struct calc_cause){ bc->store, 1u << kind };
	}
	if (bits)
		ci->culprits = (ci->culprits & ~(1u << CULPRIT_UNEXPLAINED)) | bits;
}

static void insn_figures(struct work *w, size_t i, const struct culprit_ctx *cx)
{
	struct calc *c = w->c;
	struct calc_insn *ci = &c->insns[i];
	const struct calc_block *cb = &c->blocks[ci->block];
	double d;

	ci->freq = cb->freq;
	ci->conf = cb->conf;
	ci->execs = cb->freq >= 0 && c->period > 0 ? cb->freq * c->period : -1;
	ci->stall_static = ci->m > 1 ? ci->m - 1 : 0;
	ci->cpi = -1;
	ci->stall_dynamic = 0;
	ci->culprits = 0;
	ci->flags &= ~(CALC_I_GAIN | CALC_I_CAPPED);
	if ((ci->flags & CALC_I_UNMEASURED) || !(cb->freq > 0) || !c->has_time)
		return;
	ci->cpi = ci->samples / cb->freq;
	/*
	 * An uncertain M is no lower bound: a placeholder for a system
	 * instruction (syscall: llvm-mca's 100 cycles, while the kernel's time
	 * is sampled in the kernel) or a guess for bytes the decoder could not
	 * follow.  Where the samples say it took less, what it took is its
	 * best case, so that the best case of its block and procedure never
	 * rests on the guess (issue 10: read, best-case CPI 31.5, CPI 0.5).
	 */
	if ((ci->flags & CALC_I_UNCERTAIN) && ci->cpi < ci->m) {
		ci->m = ci->cpi;
		ci->stall_static = ci->m > 1 ? ci->m - 1 : 0;
		ci->flags |= CALC_I_CAPPED;
	}
	d = ci->cpi - ci->m;
	if (!significant(ci, cb->freq, d))
		return;
	ci->stall_dynamic = d;
	if (d < 0) {
		ci->flags |= CALC_I_GAIN;
		return;
	}
	ci->culprits = culprit_find(cx, i, d, cb->freq, &ci->causes, &ci->n_causes,
				    &(size_t){ ci->n_causes }, NULL);
	burst_culprits(c, i, ci);
}

/* The static culprit: the producer of a static stall, as a cause. */
static void static_cause(struct calc *c, size_t i)
{
	struct calc_insn *ci = &c->insns[i];
	const struct calc_block *cb = &c->blocks[ci->block];
	const struct cfg_block *blk = cb->cfg;
	const struct sched_insn *x;
	size_t k = i - blk->first, p;

	if (ci->sreason == CALC_STATIC__COUNT || !cb->sched.insn || k >= cb->sched.n)
		return;
	x = &cb->sched.insn[k];
	if (x->producer.kind == SREF_BLOCK || x->producer.kind == SREF_PREV_ITER)
		p = blk->first + x->producer.index;
	else
		return;
	if (p >= c->n_insns)
		return;
	ci->causes = xreallocarray(ci->causes, ci->n_causes + 1, sizeof(*ci->causes));
	ci->causes[ci->n_causes++] = (struct calc_cause){ c->insns[p].insn->addr,
							  1u << (16 + ci->sreason) };
}

struct cctx {
	struct culprit_ctx cx;
	double *bf, *ef, *ev[EVENT__COUNT];
	struct block_schedule *sched;
};

static void cctx_init(struct work *w, struct cctx *x)
{
	struct calc *c = w->c;
	struct culprit_ctx *cx = &x->cx;

	memset(x, 0, sizeof(*x));
	x->bf = xcalloc(c->n_blocks + 1, sizeof(double));
	x->ef = xcalloc(c->n_edges + 1, sizeof(double));
	x->sched = xcalloc(c->n_blocks + 1, sizeof(*x->sched));
	cx->cfg = w->cfg;
	cx->model = c->model;
	for (size_t b = 0; b < c->n_blocks; b++) {
		x->bf[b] = c->blocks[b].freq;
		x->sched[b] = c->blocks[b].sched;
	}
	for (size_t e = 0; e < c->n_edges; e++)
		x->ef[e] = c->edges[e].freq;
	cx->block_freq = x->bf;
	cx->edge_freq = x->ef;
	cx->sched = x->sched;
	cx->time_period = c->period;
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		const struct epoch_event *ee = w->meta ? epoch_meta_event(w->meta, (enum dcpi_event)ev) : NULL;

		if (ev == c->time_event || !w->rec[ev] || !ee || ee->period_in_ns || !ee->period)
			continue;
		cx->ev_period[ev] = (double)ee->period;
		x->ev[ev] = xmalloc((c->n_insns + 1) * sizeof(double));
		for (size_t i = 0; i < c->n_insns; i++)
			x->ev[ev][i] = c->insns[i].attributed[ev];
		cx->ev[ev] = x->ev[ev];
	}
}

static void cctx_release(struct cctx *x)
{
	for (size_t ev = 0; ev < EVENT__COUNT; ev++)
		free(x->ev[ev]);
	free(x->sched);
	free(x->bf);
	free(x->ef);
}

static void insn_results(struct work *w)
{
	struct calc *c = w->c;
	struct cctx x;

	cctx_init(w, &x);
	for (size_t i = 0; i < c->n_insns; i++) {
		free(c->insns[i].causes);
		c->insns[i].causes = NULL;
		c->insns[i].n_causes = 0;
		if (c->insns[i].block < 0 || (size_t)c->insns[i].block >= c->n_blocks)
			continue;
		static_cause(c, i);
		insn_figures(w, i, &x.cx);
	}
	cctx_release(&x);
}

/*
 * The machine's latency ladder (collect/ladder.h: counters in ps), in
 * cycles: at the calibration loop's clock, else the recorded MHz.
 */
static void ladder_of(struct calc *c, const struct epoch_meta *meta)
{
	static const char *const names[CALC_LEVEL__COUNT] = {
		"lat_l1_ps", "lat_l2_ps", "lat_l3_ps", "lat_mem_ps",
	};
	const struct epoch_calib *cal = meta ? epoch_meta_calib(meta, c->time_event) : NULL;
	double mhz = cal && cal->mhz > 0 ? cal->mhz : meta ? meta->cpu_mhz : 0;

	for (int k = 0; k < CALC_LEVEL__COUNT; k++)
		c->ladder[k] = mhz > 0 && meta ? (double)epoch_meta_counter(meta, names[k]) / 1e6 * mhz
					       : 0;
}

/*
 * Loads whose executions are counted (measured classes): their cycles an
 * execution are a measured latency, not an estimate; the level of the
 * ladder it is nearest to (geometrically) says where the data came from on
 * average.  A load as fast as an L1 hit rules the D-cache and DTLB
 * culprits out at it; one at L2 latency or more confirms the D-cache.
 */
static void load_latencies(struct work *w)
{
	struct calc *c = w->c;

	for (size_t i = 0; i < c->n_insns; i++) {
		struct calc_insn *ci = &c->insns[i];
		int cls, level = 0;

		ci->latency = -1;
		ci->latency_level = -1;
		if (ci->block < 0 || !(ci->insn->flags & INSN_F_LOAD) || ci->cpi < 0 ||
		    (cls = w->cfg->blocks[ci->block].cls) < 0 || w->cls_est[cls].method != EST_MEASURED)
			continue;
		ci->latency = ci->cpi;
		if (!(c->ladder[CALC_L1] > 0))
			continue;
		for (int k = 1; k < CALC_LEVEL__COUNT; k++)
			if (c->ladder[k] > 0 && ci->cpi >= sqrt(c->ladder[k - 1] * c->ladder[k]))
				level = k;
		ci->latency_level = level;
		if (ci->cpi <= 1.5 * c->ladder[CALC_L1] + 1)
			ci->culprits &= ~((1u << CULPRIT_DCACHE) | (1u << CULPRIT_DTLB));
		else if (level >= CALC_L2 && (ci->culprits & (1u << CULPRIT_DCACHE)))
			ci->culprits &= ~(1u << CULPRIT_UNEXPLAINED);
		if (ci->stall_dynamic > 0 && !ci->culprits)
			ci->culprits = 1u << CULPRIT_UNEXPLAINED;
	}
}

static void block_results(struct calc *c)
{
	for (size_t e = 0; e < c->n_edges; e++)
		c->edges[e].execs = c->edges[e].freq >= 0 && c->period > 0 ? c->edges[e].freq * c->period : -1;
	for (size_t b = 0; b < c->n_blocks; b++) {
		struct calc_block *cb = &c->blocks[b];
		const struct cfg_block *blk = cb->cfg;
		bool known = cb->freq > 0;

		cb->execs = cb->freq >= 0 && c->period > 0 ? cb->freq * c->period : -1;
		cb->samples = cb->best_cycles = cb->cycles = 0;
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			const struct calc_insn *ci = &c->insns[blk->first + k];

			cb->samples += ci->samples;
			cb->best_cycles += ci->m;
			if (ci->cpi >= 0)
				cb->cycles += ci->cpi;
			else if (ci->flags & CALC_I_UNMEASURED)
				cb->cycles += ci->m;
			else
				known = false;
		}
		if (!known || !c->has_time)
			cb->cycles = -1;
		cb->best_cpi = blk->n_insns ? cb->best_cycles / blk->n_insns : 0;
		cb->cpi = cb->cycles >= 0 && blk->n_insns ? cb->cycles / blk->n_insns : -1;
	}
}

/* ---- summary ------------------------------------------------------------------------------ */

static void summary_insn(struct calc *c, const struct calc_insn *ci, const struct culprit_ctx *cx,
			 size_t i)
{
	struct calc_summary *s = &c->summary;
	double f = ci->freq, dyn;

	if (ci->flags & CALC_I_UNMEASURED)
		return;
	s->samples += ci->samples;
	if (!(f > 0) || ci->cpi < 0) {
		s->unestimated += ci->samples;
		return;
	}
	s->execution += f * (ci->m < 1 ? ci->m : 1);
	if (ci->sreason != CALC_STATIC__COUNT)
		s->stat[ci->sreason] += f * ci->stall_static;
	dyn = f * ci->stall_dynamic;
	if (ci->flags & CALC_I_GAIN) {
		s->gain += dyn;
	} else if (ci->culprits) {
		double bound[CULPRIT__COUNT];
		struct calc_cause *tmp = NULL;
		size_t nt = 0, at = 0;
		unsigned n = 0;

		culprit_find(cx, i, ci->stall_dynamic, f, &tmp, &nt, &at, bound);
		free(tmp);
		for (size_t k = 0; k < CULPRIT__COUNT; k++)
			n += !!(ci->culprits & (1u << k));
		for (size_t k = 0; k < CULPRIT__COUNT; k++) {
			double hi;

			if (!(ci->culprits & (1u << k)))
				continue;
			hi = isinf(bound[k]) || bound[k] * f > dyn ? dyn : bound[k] * f;
			s->dyn_hi[k] += hi;
			if (n == 1)
				s->dyn_lo[k] += hi;
		}
	}
	s->dynamic += dyn;
	if (ci->conf == CALC_CONF_HIGH)
		s->high_share += ci->samples;
	if (ci->conf <= CALC_CONF_LOW)
		s->low_share += ci->samples;
}

static void summarise(struct work *w, double epoch_total)
{
	struct calc *c = w->c;
	struct calc_summary *s = &c->summary;
	struct cctx x;
	double unmeasured = 0, best = 0;

	memset(s, 0, sizeof(*s));
	cctx_init(w, &x);
	for (size_t i = 0; i < c->n_insns; i++) {
		const struct calc_insn *ci = &c->insns[i];

		if (ci->freq > 0) {
			s->insns += ci->freq;
			best += ci->freq * ci->m;
			if (ci->flags & CALC_I_UNMEASURED)
				unmeasured += ci->freq * ci->m;
		}
		summary_insn(c, ci, &x.cx, i);
	}
	s->recorded = (double)c->list.totals[c->time_event];
	s->moved_out = w->moved_out;
	s->epoch_share = epoch_total > 0 ? s->recorded / epoch_total : 0;
	s->best_cycles = best;
	s->best_cpi = s->insns > 0 ? best / s->insns : -1;
	s->cpi = s->insns > 0 && c->has_time ? (s->samples - s->unestimated + unmeasured) / s->insns : -1;
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		s->static_total += s->stat[k];
	s->net_error = s->samples - (s->execution + s->static_total + s->dynamic + s->unestimated);
	if (s->samples > 0) {
		s->high_share /= s->samples;
		s->low_share /= s->samples;
	}
	s->dominant = -1;
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if (s->dyn_hi[k] > 0 && (s->dominant < 0 || s->dyn_hi[k] > s->dyn_hi[s->dominant]))
			s->dominant = (int)k;
	for (size_t cls = 0; cls < w->cfg->n_classes; cls++) {
		s->n_classes++;
		s->n_estimated += w->cls_state[cls] == FREQ_ESTIMATED;
		s->n_propagated += w->cls_state[cls] == FREQ_PROPAGATED;
	}
	for (size_t b = 0; b < c->n_blocks; b++)
		s->n_flow += c->blocks[b].how == CALC_HOW_FLOW;
	cctx_release(&x);
}

/* ---- driver ---------------------------------------------------------------------------------- */

static void work_init(struct work *w, struct calc *c, const struct epoch_meta *meta)
{
	const struct cfg *cfg = &c->list.cfg;
	size_t nc = cfg->n_classes + 1;

	memset(w, 0, sizeof(*w));
	w->c = c;
	w->meta = meta;
	w->cfg = cfg;
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		if (!c->list.totals[ev])
			continue;
		w->rec[ev] = xcalloc(cfg->n_insns + 1, sizeof(double));
		for (size_t i = 0; i < cfg->n_insns; i++)
			w->rec[ev][i] = (double)c->list.insns[i].samples[ev];
	}
	w->skflags = xcalloc(cfg->n_insns + 1, sizeof(unsigned));
	w->bs = xcalloc(cfg->n_blocks + 1, sizeof(*w->bs));
	w->cls_val = xcalloc(nc, sizeof(double));
	w->cls_state = xcalloc(nc, 1);
	w->cls_conf = xcalloc(nc, sizeof(enum calc_conf));
	w->cls_est = xcalloc(nc, sizeof(struct est_result));
	w->cls_m = xcalloc(nc, sizeof(double));
	w->cls_scale = xcalloc(nc, sizeof(double));
	w->alt_m = xcalloc(cfg->n_blocks + 1, sizeof(double));
	w->cls_agree = xcalloc(nc, sizeof(double));
	w->cls_loads = xcalloc(nc, sizeof(double));
	w->cls_repaired = xcalloc(nc, 1);
}

static void work_release(struct work *w)
{
	for (size_t ev = 0; ev < EVENT__COUNT; ev++)
		free(w->rec[ev]);
	for (size_t b = 0; b < w->cfg->n_blocks; b++) {
		for (size_t k = 0; k < w->bs[b].n; k++)
			block_schedule_release(&w->bs[b].s[k]);
		free(w->bs[b].s);
		free(w->bs[b].pred_edge);
	}
	free(w->bs);
	free(w->skflags);
	free(w->cls_val);
	free(w->cls_state);
	free(w->cls_conf);
	free(w->cls_est);
	free(w->cls_m);
	free(w->cls_scale);
	free(w->alt_m);
	free(w->cls_agree);
	free(w->cls_loads);
	free(w->cls_repaired);
}

static bool can_schedule(const struct calc *c)
{
	return c->model && c->model->arch == c->list.cfg.arch;
}

/*
 * Says once per process (not in every report) that the epoch's CPU has no
 * model of its own, and which one its schedules use instead.
 */
static void note_inexact_model(const struct calc *c, const struct epoch_meta *meta)
{
	static int said;
	char cpu[128];

	if (c->model_exact || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	if (meta && meta->cpu_vendor)
		snprintf(cpu, sizeof(cpu), "%s family %d model %d", meta->cpu_vendor,
			 meta->cpu_family, meta->cpu_model_id);
	else
		snprintf(cpu, sizeof(cpu), "an unknown CPU");
	warning("no processor model for %s: the schedules use %s%s", cpu,
		c->model == cpu_model_generic() ? "the generic one, " : "the closest one, ",
		c->model->name);
}

int calc_from_listing(struct calc *c, const struct epoch_meta *meta, const uint64_t *epoch_totals,
		      const struct calc_opts *o)
{
	static const struct calc_opts defaults = CALC_OPTS_INIT;
	struct work w;

	c->opts = o ? *o : defaults;
	c->model = c->opts.model ? c->opts.model : cpu_model_for(meta, &c->model_exact);
	if (c->opts.model)
		c->model_exact = true;
	note_inexact_model(c, meta);
	choose_event(c, meta);
	choose_period(c, meta);
	alloc_results(c);
	if (c->vprof && c->has_time && (!c->opts.est || c->opts.est->measure))
		c->n_measured = measure_loops(&c->list, c->vprof, c->time_event, c->period,
					      c->model ? c->model->retire_width : 0, &c->measured);
	/* Samples lost (rings overrun): a count from the loop's samples misses theirs. */
	for (size_t k = 0; k < c->n_measured; k++)
		c->measured[k].lost = meta ? epoch_meta_counter(meta, "lost") : 0;
	work_init(&w, c, meta);
	if (can_schedule(c))
		for (size_t b = 0; b < w.cfg->exit; b++)
			if (w.cfg->blocks[b].n_insns)
				schedule_all(&w, b);
	/* pass 1: unweighted schedules, head samples split evenly */
	schedules(&w, false);
	apply_schedules(&w);
	attribute(&w, false);
	frequencies(&w);
	/* pass 2: with the edge frequencies of pass 1 */
	if (can_schedule(c) && c->opts.sched == CALC_SCHED_LOOP)
		cycle_schedules(&w);
	schedules(&w, true);
	apply_schedules(&w);
	attribute(&w, true);
	frequencies(&w);
	insn_results(&w);
	ladder_of(c, meta);
	load_latencies(&w);
	block_results(c);
	summarise(&w, epoch_totals ? (double)epoch_totals[c->time_event] : 0);
	work_release(&w);
	return 0;
}

int calc_build(struct calc *c, struct epoch_view *v, const struct proc_ref *ref,
	       const struct calc_opts *o)
{
	struct listing_opts lo = LISTING_OPTS_INIT;

	memset(c, 0, sizeof(*c));
	if (o) {
		lo.source = o->source;
		lo.src = o->src;
	}
	if (listing_build(&c->list, v, ref, &lo))
		return -1;
	c->vprof = epoch_view_values(v, ref->image);
	valprof_build(&c->vals, &c->list, c->vprof);
	burstview_build(&c->bursts, &c->list, epoch_view_bursts(v));
	return calc_from_listing(c, v->meta_ok ? &v->meta : NULL, v->totals, o);
}

void calc_release(struct calc *c)
{
	for (size_t i = 0; i < c->n_insns; i++)
		free(c->insns[i].causes);
	for (size_t b = 0; b < c->n_blocks; b++)
		block_schedule_release(&c->blocks[b].sched);
	free(c->insns);
	free(c->blocks);
	free(c->edges);
	free(c->measured);
	burstview_release(&c->bursts);
	valprof_release(&c->vals);
	listing_release(&c->list);
	memset(c, 0, sizeof(*c));
}
