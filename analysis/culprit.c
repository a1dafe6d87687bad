/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/culprit.c - the dynamic stall reasons that cannot be
 * ruled out (culprit.h).
 */
#include "config.h"

#include "analysis/culprit.h"

#include <math.h>
#include <stdlib.h>

#include "core/xalloc.h"

struct found {
	unsigned mask;
	struct calc_cause **v;
	size_t *n, *alloc;
};

static void blame(struct found *f, enum calc_culprit k, uint64_t addr, bool with_addr)
{
	f->mask |= 1u << k;
	if (!with_addr)
		return;
	for (size_t j = 0; j < *f->n; j++)
		if ((*f->v)[j].addr == addr) {
			(*f->v)[j].what |= 1u << k;
			return;
		}
	ALLOC_GROW(*f->v, *f->n + 1, *f->alloc);
	(*f->v)[(*f->n)++] = (struct calc_cause){ addr, 1u << k };
}

static long block_of(const struct culprit_ctx *x, size_t i)
{
	return cfg_block_at(x->cfg, x->cfg->insns[i].addr);
}

static bool is_call(const struct insn *in)
{
	return in->kind == INSN_CALL || in->kind == INSN_ICALL;
}

static uint64_t unit_of(uint64_t addr, unsigned size)
{
	return addr / size;
}

/* True if in's bytes reach a line (page) that prev's last byte is not in. */
static bool new_unit(const struct insn *prev, const struct insn *in, unsigned size)
{
	uint64_t last_prev = unit_of(prev->addr + prev->len - 1, size);

	return unit_of(in->addr, size) != last_prev || unit_of(in->addr + in->len - 1, size) != last_prev;
}

static bool frequent(const struct culprit_ctx *x, uint32_t e, long b)
{
	double bf = x->block_freq ? x->block_freq[b] : -1, ef = x->edge_freq ? x->edge_freq[e] : -1;

	if (bf <= 0 || ef < 0)
		return true;    /* unknown: keep it (pessimistic) */
	return ef >= CULPRIT_FREQUENT_EDGE * bf;
}

static const struct insn *last_insn(const struct cfg *cfg, uint32_t b)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	return blk->n_insns ? &cfg->insns[blk->first + blk->n_insns - 1] : NULL;
}

/* I-cache and ITLB: by lines and pages against whatever ran just before. */
static void fetch_rules(const struct culprit_ctx *x, size_t i, long b, struct found *f)
{
	const struct cfg *cfg = x->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	const struct insn *in = &cfg->insns[i];
	unsigned line = x->model && x->model->cache_line ? x->model->cache_line : 64;

	if (i > blk->first && !is_call(&cfg->insns[i - 1])) {
		if (new_unit(&cfg->insns[i - 1], in, line))
			blame(f, CULPRIT_ICACHE, 0, false);
		if (new_unit(&cfg->insns[i - 1], in, 4096))
			blame(f, CULPRIT_ITLB, 0, false);
		return;
	}
	if (i > blk->first || (size_t)b == cfg->entry) {
		/* after a call, or entered from callers: the code before is elsewhere */
		blame(f, CULPRIT_ICACHE, 0, false);
		blame(f, CULPRIT_ITLB, 0, false);
		if (i > blk->first)
			return;
	}
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = cfg->pred[blk->pred + k];
		const struct insn *src;

		if (!frequent(x, e, b))
			continue;
		if (cfg->edges[e].from == cfg->exit || !(src = last_insn(cfg, cfg->edges[e].from))) {
			blame(f, CULPRIT_ICACHE, 0, false);
			blame(f, CULPRIT_ITLB, 0, false);
			continue;
		}
		if (is_call(src)) {
			blame(f, CULPRIT_ICACHE, src->addr, true);
			blame(f, CULPRIT_ITLB, src->addr, true);
			continue;
		}
		if (new_unit(src, in, line))
			blame(f, CULPRIT_ICACHE, src->addr, true);
		if (new_unit(src, in, 4096))
			blame(f, CULPRIT_ITLB, src->addr, true);
	}
}

/* Branch mispredicts: heads entered by conditional or indirect branches. */
static void branch_rules(const struct culprit_ctx *x, size_t i, long b, struct found *f)
{
	const struct cfg *cfg = x->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];

	if (i > blk->first) {
		if (is_call(&cfg->insns[i - 1]))
			blame(f, CULPRIT_BRANCH, cfg->insns[i - 1].addr, true);  /* the return */
		return;
	}
	if ((size_t)b == cfg->entry)
		blame(f, CULPRIT_BRANCH, 0, false);  /* an indirect call, or a return predicted wrong */
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = cfg->pred[blk->pred + k];
		const struct cfg_edge *ed = &cfg->edges[e];
		const struct insn *src;

		if (!frequent(x, e, b))
			continue;
		if (ed->from == cfg->exit || !(src = last_insn(cfg, ed->from))) {
			blame(f, CULPRIT_BRANCH, 0, false);
			continue;
		}
		if (src->kind == INSN_CJUMP || src->kind == INSN_IJUMP)
			blame(f, CULPRIT_BRANCH, src->addr, true);
		else if (is_call(src))
			blame(f, CULPRIT_BRANCH, src->addr, true);  /* the callee's return */
	}
}

static bool writes_read_by(const struct insn *producer, const struct insn *in)
{
	struct regset w = producer->writes;

	/* the stack pointer of push/pop is renamed away: no data dependence */
	if (w.w[0] & (1ull << DREG_RSP))
		w.w[0] &= ~(1ull << DREG_RSP);
	return regset_intersects(&w, &in->reads);
}

/* D-cache and DTLB: the instruction loads, or a load just before feeds it. */
static void memory_rules(const struct culprit_ctx *x, size_t i, long b, struct found *f)
{
	const struct cfg *cfg = x->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	const struct insn *in = &cfg->insns[i];

	if ((in->flags & INSN_F_LOAD) && !(in->flags & INSN_F_PREFETCH)) {
		blame(f, CULPRIT_DCACHE, in->addr, true);
		blame(f, CULPRIT_DTLB, in->addr, true);
	}
	if (in->flags & INSN_F_STORE) {
		blame(f, CULPRIT_DTLB, in->addr, true);
		blame(f, CULPRIT_STORE_BUF, in->addr, true);
	}
	for (size_t j = i, back = 0; j > blk->first && back < 2; back++) {
		const struct insn *p = &cfg->insns[--j];

		if ((p->flags & INSN_F_LOAD) && !(p->flags & INSN_F_PREFETCH) && !is_call(p) &&
		    writes_read_by(p, in)) {
			blame(f, CULPRIT_DCACHE, p->addr, true);
			blame(f, CULPRIT_DTLB, p->addr, true);
		}
	}
}

static enum model_fu fu_of(const struct culprit_ctx *x, long b, size_t i)
{
	const struct cfg_block *blk = &x->cfg->blocks[b];
	const struct block_schedule *s = x->sched ? &x->sched[b] : NULL;

	if (s && s->insn && i - blk->first < s->n)
		return s->insn[i - blk->first].timing.fu;
	return FU_NONE;
}

static bool self_loop(const struct cfg *cfg, long b)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	for (uint32_t k = 0; k < blk->n_pred; k++)
		if (cfg->edges[cfg->pred[blk->pred + k]].from == (uint32_t)b)
			return true;
	return false;
}

/* Multiplier and divider: a recent multiply or divide in the block (or the loop). */
static void unit_rules(const struct culprit_ctx *x, size_t i, long b, struct found *f)
{
	const struct cfg_block *blk = &x->cfg->blocks[b];
	enum model_fu fu = fu_of(x, b, i);
	bool loop = self_loop(x->cfg, b);
	size_t n = blk->n_insns, pos = i - blk->first;

	if (fu == FU_DIV || fu == FU_FP_DIV)
		blame(f, CULPRIT_DIV, x->cfg->insns[i].addr, true);
	for (size_t back = 1; back <= CULPRIT_WINDOW && (loop || back <= pos) && back < n + 1; back++) {
		size_t j = blk->first + (pos + n - back % n) % n;
		enum model_fu pf = fu_of(x, b, j);

		if (j == i)
			continue;
		if (fu == FU_MUL && pf == FU_MUL)
			blame(f, CULPRIT_MUL, x->cfg->insns[j].addr, true);
		if ((fu == FU_DIV || fu == FU_FP_DIV) && (pf == FU_DIV || pf == FU_FP_DIV))
			blame(f, CULPRIT_DIV, x->cfg->insns[j].addr, true);
	}
}

static void sync_rules(const struct culprit_ctx *x, size_t i, long b, struct found *f)
{
	const struct insn *in = &x->cfg->insns[i];

	if ((in->flags & INSN_F_LOCK) || fu_of(x, b, i) == FU_SYSTEM)
		blame(f, CULPRIT_SYNC, in->addr, true);
}

/* Events at i and at the next instruction (a longer skid), plus one for sampling error. */
static double evidence(const struct culprit_ctx *x, enum dcpi_event ev, size_t i)
{
	double s = x->ev[ev][i];

	if (i + 1 < x->cfg->n_insns)
		s += x->ev[ev][i + 1];
	return s + 1;
}

static void bounds(const struct culprit_ctx *x, size_t i, double freq, double *bound)
{
	static const struct { enum dcpi_event ev; enum calc_culprit k; } map[] = {
		{ EVENT_IMISS, CULPRIT_ICACHE }, { EVENT_ITLBMISS, CULPRIT_ITLB },
		{ EVENT_DMISS, CULPRIT_DCACHE }, { EVENT_DTLBMISS, CULPRIT_DTLB },
		{ EVENT_BRANCHMP, CULPRIT_BRANCH },
	};

	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		bound[k] = INFINITY;
	if (!(freq > 0) || !(x->time_period > 0))
		return;
	for (size_t k = 0; k < ARRAY_SIZE(map); k++) {
		double execs = freq * x->time_period, misses, cost;

		if (!x->ev[map[k].ev] || !(x->ev_period[map[k].ev] > 0))
			continue;
		misses = evidence(x, map[k].ev, i) * x->ev_period[map[k].ev] / execs;
		cost = map[k].k == CULPRIT_BRANCH && x->model ? 2.0 * x->model->mispredict_penalty
							      : CULPRIT_MISS_CYCLES;
		bound[map[k].k] = misses * cost;
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct calc_cause *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

unsigned culprit_find(const struct culprit_ctx *x, size_t i, double stall, double freq,
		      struct calc_cause **causes, size_t *n, size_t *alloc, double *bound)
{
	struct found f = { 0, causes, n, alloc };
	long b = block_of(x, i);
	double bd[CULPRIT__COUNT];
	size_t first = *n;

	if (b < 0)
		return 0;
	fetch_rules(x, i, b, &f);
	branch_rules(x, i, b, &f);
	memory_rules(x, i, b, &f);
	unit_rules(x, i, b, &f);
	sync_rules(x, i, b, &f);
	bounds(x, i, freq, bd);
	/* an event that bounds a culprit to a negligible share of the stall rules it out */
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if ((f.mask & (1u << k)) && bd[k] < 0.05 * stall)
			f.mask &= ~(1u << k);
	for (size_t j = first; j < *n; j++)
		(*causes)[j].what &= f.mask;
	for (size_t j = first; j < *n;)
		if (!(*causes)[j].what)
			(*causes)[j] = (*causes)[--*n];
		else
			j++;
	if (*n > first + 1)
		qsort(*causes + first, *n - first, sizeof(**causes), by_addr);
	if (!f.mask)
		f.mask = 1u << CULPRIT_UNEXPLAINED;
	if (bound)
		for (size_t k = 0; k < CULPRIT__COUNT; k++)
			bound[k] = bd[k];
	return f.mask;
}
