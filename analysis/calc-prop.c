/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-prop.c - class values from their neighbours, locally: the repair of
 * estimates inflated by mispredicts (freq_repair), propagation over the
 * flow constraints (freq_propagate), bounds for what is left, and the
 * values put on blocks and edges, each with its relative error
 * (calc-conf.h) and the level it makes.
 */
#include "config.h"

#include "analysis/calc-int.h"
#include "analysis/calc-conf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/*
 * What the repair adds to the error of a class it lowered: its value is
 * the other side of a cut's, shared among the suspect classes in the
 * proportions of their own inflated estimates, a guess at which of them
 * took the penalty (docs/analysis.md: 3.5% of the repaired samples within
 * 15% on one recording of the suite, 100% of wl-branchy's on another).
 */
#define REPAIR_ERR 0.3

/* The flow graph of the procedure for propagation. */
static void fgraph_make(const struct cfg *cfg, struct fgraph *g, int **ncls, int **acls,
			uint32_t **from, uint32_t **to)
{
	*ncls = xmalloc((cfg->n_blocks + 1) * sizeof(int));
	*acls = xmalloc((cfg->n_edges + 1) * sizeof(int));
	*from = xmalloc((cfg->n_edges + 1) * sizeof(uint32_t));
	*to = xmalloc((cfg->n_edges + 1) * sizeof(uint32_t));
	for (size_t b = 0; b < cfg->n_blocks; b++)
		(*ncls)[b] = b == cfg->exit || calc_reachable(cfg, b) ? cfg->blocks[b].cls : -1;
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		bool live = (ed->from == cfg->exit || calc_reachable(cfg, ed->from)) &&
			    (ed->to == cfg->exit || calc_reachable(cfg, ed->to));

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

double calc_class_error(const struct calc_work *w, int cls)
{
	return calc_err_total(w->cls_err[cls], w->cls_pshare[cls], w->c->period_error);
}

void calc_propagate(struct calc_work *w)
{
	struct fgraph g;
	int *ncls, *acls;
	uint32_t *from, *to;

	fgraph_make(w->cfg, &g, &ncls, &acls, &from, &to);
	for (size_t c = 0; c < w->cfg->n_classes; c++)
		w->cls_scale[c] = w->cls_val[c];
	freq_propagate(&g, w->cls_val, w->cls_state, w->cls_scale,
		       &(struct freq_errors){ w->cls_err, w->cls_pshare });
	free(ncls);
	free(acls);
	free(from);
	free(to);
}

/* Class cls's value if known, else -1. */
static double known_val(const struct calc_work *w, int cls)
{
	return cls >= 0 && w->cls_state[cls] != FREQ_UNKNOWN ? w->cls_val[cls] : -1;
}

/*
 * Flow bounds on block b's frequency from its neighbours: each incoming
 * edge at most its source's frequency (all known: an upper bound), the
 * known edges on either side together at most the block's (a lower bound).
 */
static void block_bounds(const struct calc_work *w, size_t b, double *lo, double *hi)
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
 * its predecessor's frequency).  Its error: the deviation of a value
 * anywhere between the bounds, evenly; with no lower bound, the upper one
 * is a guess: an error of 1 (a factor of two).
 */
void calc_bound_unknown(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;

	for (size_t cls = 0; cls < cfg->n_classes; cls++) {
		double lo = 0, hi = INFINITY, samples = 0;

		if (w->cls_state[cls] != FREQ_UNKNOWN)
			continue;
		for (uint32_t j = w->cls_first[cls]; j < w->cls_first[cls + 1]; j++) {
			uint32_t b = w->cls_blocks[j];
			const struct cfg_block *blk = &cfg->blocks[b];
			double l, h;

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
		w->cls_err[cls] = lo > 0 && hi > lo ? (hi - lo) / sqrt(12) / w->cls_val[cls] : 1;
		w->cls_pshare[cls] = 1;
	}
}

/* How class cls got its value. */
static enum calc_how how_of(const struct calc_work *w, int cls)
{
	if (w->cls_repaired[cls])
		return CALC_HOW_REPAIRED;
	if (w->cls_state[cls] != FREQ_ESTIMATED)
		return CALC_HOW_PROPAGATED;
	switch (w->cls_est[cls].method) {
	case EST_PATHS:
		return w->c->pscale.source == CALC_PSCALE_WINDOWS ? CALC_HOW_PATHS : CALC_HOW_PATHS_SHARES;
	case EST_MEASURED:
		return CALC_HOW_MEASURED;
	default:
		return CALC_HOW_SAMPLES;
	}
}

/* Puts the class values on blocks and edges. */
void calc_spread_values(struct calc_work *w)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;

	for (size_t b = 0; b < cfg->n_blocks; b++) {
		int cls = cfg->blocks[b].cls;
		struct calc_block *cb = &c->blocks[b];

		cb->freq = -1;
		cb->period_share = 0;
		cb->conf = CALC_CONF_NONE;
		cb->how = CALC_HOW_NONE;
		memset(&cb->est, 0, sizeof(cb->est));
		cb->rel_error = -1;
		if (cls >= 0) {
			const struct est_result *r = &w->cls_est[cls];

			cb->est = (struct calc_estimate){ (int)r->method, r->windows, r->points, r->spread,
							  r->support, r->samples, r->total_s, r->total_m,
							  w->cls_agree[cls], w->cls_loads[cls],
							  r->method != EST_NONE ? r->rel_error : -1 };
		}
		if (cls < 0 || w->cls_state[cls] == FREQ_UNKNOWN)
			continue;
		cb->freq = w->cls_val[cls];
		cb->rel_error = calc_class_error(w, cls);
		cb->period_share = w->cls_pshare[cls];
		cb->conf = calc_conf_of(cb->rel_error);
		cb->how = how_of(w, cls);
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		int cls = cfg->edges[e].cls;
		struct calc_edge *ce = &c->edges[e];

		ce->freq = -1;
		ce->rel_error = -1;
		ce->period_share = 0;
		ce->conf = CALC_CONF_NONE;
		ce->how = CALC_HOW_NONE;
		if (cls < 0 || w->cls_state[cls] == FREQ_UNKNOWN)
			continue;
		ce->freq = w->cls_val[cls];
		ce->rel_error = calc_class_error(w, cls);
		ce->period_share = w->cls_pshare[cls];
		ce->conf = calc_conf_of(ce->rel_error);
		ce->how = how_of(w, cls);
	}
	c->invocations = c->blocks[cfg->exit].freq;
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
 * shows; a class whose samples are mostly there is suspect.  A repaired
 * class's value comes from its neighbours' and a guess at which side of a
 * branch took the penalty: REPAIR_ERR.
 */
void calc_repair(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	size_t n = cfg->n_classes;
	struct fgraph g;
	int *ncls, *acls;
	uint32_t *from, *to;
	double *wt, *susp;
	unsigned char *ok, *changed;
	double tol = calc_est_params(w)->repair;

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
			w->cls_err[c] = calc_err_add(w->cls_err[c], REPAIR_ERR);
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
