/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pathview.c - a path profile mapped onto one procedure's CFG
 * (pathview.h).
 */
#include "config.h"

#include "analysis/pathview.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* The procedure's code as file offsets: [lo, hi), and the offset-to-address shift. */
struct range {
	uint64_t lo, hi;
	const struct listing *l;
};

static bool to_addr(const struct range *r, uint64_t off, uint64_t *addr)
{
	return off >= r->lo && off < r->hi && image_offset_to_addr(r->l->img, off, addr);
}

/* The listing index of the instruction at offset off of the procedure, or -1. */
static long insn_at(const struct range *r, uint64_t off)
{
	uint64_t a;

	return to_addr(r, off, &a) ? cfg_insn_at(&r->l->cfg, a) : -1;
}

/* True if instruction i ends its block (*b). */
static bool block_last(const struct listing *l, long i, long *b)
{
	const struct cfg_block *blk;

	*b = l->insns[i].block;
	if (*b < 0)
		return false;
	blk = &l->cfg.blocks[*b];
	return (uint32_t)i == blk->first + blk->n_insns - 1;
}

/* The edge of block b that goes to block t (not leaving), or -1. */
static long edge_to(const struct cfg *cfg, size_t b, size_t t)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	for (uint32_t k = 0; k < blk->n_succ; k++) {
		uint32_t e = cfg->succ[blk->succ + k];

		if (cfg->edges[e].to == t && !cfg_edge_kind_leaves(cfg->edges[e].kind))
			return e;
	}
	return -1;
}

/* The edge of block b of kind `kind` (the first), or -1. */
static long edge_kind(const struct cfg *cfg, size_t b, enum cfg_edge_kind kind)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	for (uint32_t k = 0; k < blk->n_succ; k++)
		if (cfg->edges[cfg->succ[blk->succ + k]].kind == kind)
			return cfg->succ[blk->succ + k];
	return -1;
}

/* The first edge of block b that leaves the procedure, or -1. */
static long edge_out(const struct cfg *cfg, size_t b)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	for (uint32_t k = 0; k < blk->n_succ; k++)
		if (cfg->edges[cfg->succ[blk->succ + k]].to == cfg->exit)
			return cfg->succ[blk->succ + k];
	return -1;
}

/* A translation block: coverage of the instructions it spans, and the joins it runs across. */
static void add_block(struct pathview *pv, const struct range *r, const struct paths_block *pb)
{
	const struct cfg *cfg = &r->l->cfg;
	long i = insn_at(r, pb->offset), prev = -1;
	uint64_t end;

	if (i < 0)
		return;
	end = cfg->insns[i].addr + pb->bytes;
	for (; (size_t)i < cfg->n_insns && cfg->insns[i].addr < end; i++) {
		const struct insn *in = &cfg->insns[i];

		if (prev >= 0 && cfg->insns[prev].addr + cfg->insns[prev].len != in->addr)
			break;  /* a gap in the decoded code: the block cannot run across it */
		if (in->addr + in->len > end)
			break;
		if (prev >= 0 && r->l->insns[prev].block != r->l->insns[i].block &&
		    r->l->insns[prev].block >= 0 && r->l->insns[i].block >= 0) {
			long e = edge_to(cfg, (size_t)r->l->insns[prev].block, (size_t)r->l->insns[i].block);

			if (e >= 0)
				pv->ecount[e] += pb->count;
		}
		pv->count[i] += pb->count;
		pv->wcount[i] += pb->wcount;
		pv->followed += pb->count;
		pv->wfollowed += pb->wcount;
		prev = i;
	}
}

/* A recorded edge from an instruction of the procedure. */
static void add_edge(struct pathview *pv, const struct range *r, const struct paths_edge *pe)
{
	const struct cfg *cfg = &r->l->cfg;
	long i = insn_at(r, pe->from), b, e = -1, t;
	uint64_t a;

	if (i < 0)
		return;
	if (cfg->insns[i].kind == INSN_CALL)
		pv->calls += pe->count;
	if (!block_last(r->l, i, &b))
		return;  /* a call inside a block, or a cut at no branch */
	if (cfg->insns[i].kind == INSN_CALL) {
		/* the call's return comes back where the CFG goes on (if it returns) */
		e = edge_kind(cfg, (size_t)b, CFG_CALL_RETURN);
	} else if (pe->to != PATHS_ELSEWHERE && to_addr(r, pe->to, &a) && a >= cfg->start &&
		   a < cfg->end && (t = cfg_block_at(cfg, a)) >= 0 && cfg->blocks[t].start == a) {
		e = edge_to(cfg, (size_t)b, (size_t)t);
	} else {
		e = edge_out(cfg, (size_t)b);
	}
	if (e >= 0)
		pv->ecount[e] += pe->count;
}

static void add_windows(struct pathview *pv, const struct range *r, const struct paths_profile *p)
{
	double s = 0, s2 = 0, all = 0;

	pv->img_windows = p->windows;
	pv->img_kept = p->n_win;
	for (size_t k = 0; k < p->n_win; k++) {
		const struct paths_window *w = &p->win[k];

		all += (double)w->here;
		if (w->b1 < r->lo || w->b1 >= r->hi)
			continue;
		pv->kept_b1++;
		s += (double)w->here;
		s2 += (double)w->here * (double)w->here;
	}
	if (p->n_win) {
		pv->win_b1 = (double)pv->kept_b1 * (double)p->windows / (double)p->n_win;
		pv->win_b1_here = s * (double)p->windows / (double)p->n_win;
		pv->img_here_mean = all / (double)p->n_win;
	}
	if (pv->kept_b1) {
		double n = (double)pv->kept_b1, mean = s / n, var = s2 / n - mean * mean;

		pv->win_here_mean = mean;
		pv->win_here_cv = mean > 0 && var > 0 && n > 1 ? sqrt(var * n / (n - 1)) / mean : 0;
	}
	for (size_t k = 0; k < p->n_blocks; k++)
		pv->img_wfollowed += p->blocks[k].wcount * p->blocks[k].insns;
}

static void add_conflicts(struct pathview *pv, const struct range *r, const struct paths_profile *p)
{
	for (size_t k = paths_conflicts_lower_bound(p, r->lo); k < p->n_conflicts; k++) {
		const struct paths_conflict *c = &p->conflicts[k];
		long i;
		uint64_t store;

		if (c->load >= r->hi)
			break;
		if ((i = insn_at(r, c->load)) < 0 || !image_offset_to_addr(r->l->img, c->store, &store))
			continue;
		pv->conflicts = xreallocarray(pv->conflicts, pv->n_conflicts + 1, sizeof(*pv->conflicts));
		pv->conflicts[pv->n_conflicts++] = (struct pathview_conflict){
			(size_t)i, store, (enum paths_conflict_kind)c->kind, c->count };
	}
	for (size_t k = paths_stops_lower_bound(p, r->lo); k < p->n_stops; k++) {
		const struct paths_stop *s = &p->stops[k];
		long i;

		if (s->offset >= r->hi)
			break;
		if ((i = insn_at(r, s->offset)) < 0)
			continue;
		pv->stops = xreallocarray(pv->stops, pv->n_stops + 1, sizeof(*pv->stops));
		pv->stops[pv->n_stops++] = (struct pathview_stop){ (size_t)i, (enum paths_end)s->reason,
								   s->count };
	}
}

void pathview_build(struct pathview *pv, const struct listing *l, const struct paths_profile *prof)
{
	const struct cfg *cfg = &l->cfg;
	struct range r = { 0, 0, l };

	memset(pv, 0, sizeof(*pv));
	pv->count = xcalloc(l->n_insns + 1, sizeof(uint64_t));
	pv->wcount = xcalloc(l->n_insns + 1, sizeof(uint64_t));
	pv->ecount = xcalloc(cfg->n_edges + 1, sizeof(uint64_t));
	if (!prof || paths_profile_empty(prof) || !l->img || cfg->end <= cfg->start ||
	    !image_addr_to_offset(l->img, cfg->start, &r.lo))
		return;
	r.hi = r.lo + (cfg->end - cfg->start);
	pv->present = true;
	pv->img_bursts = prof->bursts;
	pv->img_insns = prof->insns;
	/* a translation block starting before the procedure does not run into it (no fall-in) */
	for (size_t k = paths_blocks_lower_bound(prof, r.lo); k < prof->n_blocks; k++) {
		if (prof->blocks[k].offset >= r.hi)
			break;
		add_block(pv, &r, &prof->blocks[k]);
	}
	for (size_t k = paths_edges_lower_bound(prof, r.lo); k < prof->n_edges; k++) {
		if (prof->edges[k].from >= r.hi)
			break;
		add_edge(pv, &r, &prof->edges[k]);
	}
	add_windows(pv, &r, prof);
	add_conflicts(pv, &r, prof);
}

void pathview_release(struct pathview *pv)
{
	free(pv->count);
	free(pv->wcount);
	free(pv->ecount);
	free(pv->conflicts);
	free(pv->stops);
	memset(pv, 0, sizeof(*pv));
}

double pathview_block_count(const struct pathview *pv, const struct cfg *cfg, size_t b, bool windows)
{
	const struct cfg_block *blk = &cfg->blocks[b];
	const uint64_t *c = windows ? pv->wcount : pv->count;
	double s = 0;

	if (b == cfg->exit || !blk->n_insns || !c)
		return -1;
	for (uint32_t k = 0; k < blk->n_insns; k++)
		s += (double)c[blk->first + k];
	return s / blk->n_insns;
}
