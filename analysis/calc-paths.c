/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-paths.c - execution counts from the paths bursts followed
 * (pathview.h), without a processor model.
 *
 * A class's count is its procedure's instructions times the class's share
 * of them (docs/analysis.md, "Counts from paths"):
 *
 *  - the share: a burst follows the program for thousands of instructions
 *    from a sampled moment, so inside a procedure the executions it saw of
 *    each block are in proportion to the true ones (the moments are
 *    time-weighted, which biases which procedures bursts see, not the
 *    proportions within one whose code they pass through together).  A
 *    class's count in bursts is the mean over its blocks (each block's the
 *    mean coverage of its instructions), or over its edges' transitions for
 *    a class of edges only; its share is that count over all the
 *    instructions bursts followed in the procedure;
 *
 *  - the scale, the procedure's instructions, from up to three sources
 *    combined by their errors (procedure_scale()):
 *    - matched windows (the path from one ordinary sample of a thread, B1,
 *      to its next, B2: one sampling period): the factor of the procedure's
 *      region (pathscale.h: the time samples over the windows that began
 *      there, a ratio estimator that holds whatever makes some periods
 *      match less) times its instructions in bursts;
 *    - a loop counted from its registers (measure.h), over its share;
 *    - the model: the sample-weighted median of its classes' estimates
 *      from their samples over their shares (70% error);
 *    sources that disagree beyond three times their joint error are not
 *    averaged (consistent()), and a region's windows fewer than
 *    PATHS_MIN_WINDOWS count only if nothing else can say.
 *
 * The relative error of a count (calc-conf.h): the scale's, the share's
 * (Poisson in its count in bursts, and the bursts' own sampling: kappa
 * (1 - s) / (s n) for a share s of the procedure's instructions seen in
 * about n bursts).  The period's error is in the model's scale, the one
 * source that rests on it.
 */
#include "config.h"

#include "analysis/calc-int.h"
#include "analysis/calc-conf.h"
#include "analysis/pathscale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* The model's scale: a factor of two either way is common (docs/analysis.md). */
#define PATHS_MODEL_ERR 0.7
/* Sources that disagreed leave the scale at least this error: low confidence. */
#define PATHS_CONFLICT_ERR (2 * CALC_ERR_MEDIUM)
/*
 * Matched windows that began in a region, fewer than which its windows are
 * left out when another source can say (their spread cannot be told from
 * a bias: the period after a burst's stop runs slow where caches matter),
 * and fewer than which they give way to the model when the two disagree.
 */
#define PATHS_MIN_WINDOWS 10
#define PATHS_TRUSTED_WINDOWS 20

/* A class's executions in bursts and in matched windows, and its instructions. */
struct pclass {
	double count, wcount, insns;
	bool seen;
};

static void class_counts(const struct calc_work *w, struct pclass *pc)
{
	const struct cfg *cfg = w->cfg;
	const struct pathview *pv = &w->c->paths;
	double *ew = xcalloc(cfg->n_classes + 1, sizeof(double));

	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];
		double n = blk->n_insns;

		if (!blk->n_insns || blk->cls < 0)
			continue;
		pc[blk->cls].count += n * pathview_block_count(pv, cfg, b, false);
		pc[blk->cls].wcount += n * pathview_block_count(pv, cfg, b, true);
		pc[blk->cls].insns += n;
		pc[blk->cls].seen = true;
	}
	for (size_t c = 0; c < cfg->n_classes; c++) {
		if (!(pc[c].insns > 0))
			continue;
		pc[c].count /= pc[c].insns;
		pc[c].wcount /= pc[c].insns;
	}
	/* classes of edges only: the mean of their transitions (bursts record no edges in windows) */
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		int cls = ed->cls;

		if (cls < 0 || pc[cls].insns > 0 ||
		    (ed->from != cfg->exit && !calc_reachable(cfg, ed->from)))
			continue;
		pc[cls].count += (double)pv->ecount[e];
		ew[cls]++;
		pc[cls].seen = true;
	}
	for (size_t c = 0; c < cfg->n_classes; c++)
		if (!(pc[c].insns > 0) && ew[c] > 0) {
			pc[c].count /= ew[c];
			pc[c].wcount = -1;
		}
	free(ew);
}

/* A scale of the procedure: its instructions in the epoch, their relative error, whence. */
struct scale {
	double x, r;
	enum calc_pathscale_source src;
	bool own;
	double windows;
};

/*
 * The scale from matched windows: the factor of the procedure's region
 * (pathscale.h) times its instructions in bursts.  Without the epoch view
 * (tests), the procedure alone is the region.
 */
static bool windows_scale(struct calc_work *w, struct scale *sc)
{
	struct calc *c = w->c;
	const struct pathview *pv = &c->paths;
	const struct listing *l = &c->list;
	double s = (double)l->totals[c->time_event], x = (double)pv->wfollowed, self, cv;

	if (!pv->wfollowed || !(s > 0))
		return false;
	if (l->view && l->ref.proc) {
		const struct pathscale *ps = pathscale_of(l->view, l->ref.image, c->time_event);
		const struct pathscale_proc *pp = pathscale_find(ps, l->ref.proc->start);
		const struct pathscale_region *r = pp ? &ps->regions[pp->region] : NULL;

		if (!r || !(r->sigma > 0))
			return false;
		sc->x = r->sigma * (double)pv->followed;
		sc->r = r->rel_error;
		sc->own = r->own;
		sc->windows = r->win_b1;
	} else {
		/* the procedure alone, its own windows (see pathscale.h) */
		self = pv->win_b1_here / x;
		if (!(pv->win_b1 > 0) || self < 0.5)
			return false;
		cv = pv->win_here_cv > PATHSCALE_WINDOW_CV ? pv->win_here_cv : PATHSCALE_WINDOW_CV;
		sc->x = s / pv->win_b1 * x;
		sc->r = sqrt(cv * cv / (double)pv->kept_b1 + (self < 1 ? (1 - self) * (1 - self) : 0));
		sc->own = true;
		sc->windows = pv->win_b1;
	}
	sc->src = CALC_PSCALE_WINDOWS;
	return true;
}

/*
 * Blocks of the loop around block b (its strongly connected part of the
 * CFG): marked in in_loop.
 */
static void loop_around(const struct cfg *cfg, size_t b, unsigned char *in_loop)
{
	unsigned char *fw = xcalloc(cfg->n_blocks + 1, 1), *bw = xcalloc(cfg->n_blocks + 1, 1);
	size_t *stack = xmalloc((cfg->n_blocks + 1) * sizeof(size_t)), n;

	for (int dir = 0; dir < 2; dir++) {
		unsigned char *mark = dir ? bw : fw;

		n = 0;
		stack[n++] = b;
		mark[b] = 1;
		while (n) {
			const struct cfg_block *blk = &cfg->blocks[stack[--n]];
			uint32_t m = dir ? blk->n_pred : blk->n_succ;

			for (uint32_t k = 0; k < m; k++) {
				const struct cfg_edge *e = &cfg->edges[dir ? cfg->pred[blk->pred + k]
									  : cfg->succ[blk->succ + k]];
				size_t o = dir ? e->from : e->to;

				if (o == cfg->exit || mark[o])
					continue;
				mark[o] = 1;
				stack[n++] = o;
			}
		}
	}
	for (size_t k = 0; k < cfg->n_blocks; k++)
		in_loop[k] = fw[k] && bw[k];
	free(fw);
	free(bw);
	free(stack);
}

/*
 * The scale from a loop counted from its registers (measure.h): its count
 * over its class's share.  Exact for the loop; for the rest as good as the
 * shares across the loop's boundary, which bursts over-sample where the
 * loop runs at another pace than the code around (phases): half the share
 * of the procedure's paths outside the loop adds to the error.
 */
static bool measured_scale(struct calc_work *w, const struct pclass *pc, struct scale *sc)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	double followed = (double)c->paths.followed, inside = 0;
	unsigned char *in_loop;
	long best = -1;

	for (size_t k = 0; k < cfg->n_classes; k++)
		if (w->cls_est[k].method == EST_MEASURED && w->cls_state[k] == FREQ_ESTIMATED &&
		    w->cls_err[k] <= CALC_ERR_MEDIUM && pc[k].count > 0 && pc[k].insns > 0 &&
		    (best < 0 || w->cls_err[k] < w->cls_err[best]))
			best = (long)k;
	if (best < 0)
		return false;
	in_loop = xcalloc(cfg->n_blocks + 1, 1);
	for (size_t b = 0; b < cfg->exit; b++)
		if (cfg->blocks[b].cls == best && cfg->blocks[b].n_insns) {
			loop_around(cfg, b, in_loop);
			break;
		}
	for (size_t b = 0; b < cfg->exit; b++)
		if (in_loop[b])
			inside += cfg->blocks[b].n_insns * pathview_block_count(&c->paths, cfg, b, false);
	free(in_loop);
	sc->x = w->cls_val[best] * c->period * followed / pc[best].count;
	sc->r = w->cls_err[best] + 0.5 * (inside < followed ? 1 - inside / followed : 0);
	sc->src = CALC_PSCALE_MEASURED;
	return true;
}

static int by_ratio(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The scale from the model, pooled over the procedure: every instruction's
 * samples over its M times its block's share in bursts, as one class of
 * the estimator (freq.h: the cluster of the smallest ratios over windows
 * of the blocks).
 */
static bool pooled_model_scale(struct calc_work *w, const struct pclass *pc, struct scale *sc)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	struct est_point *p = xmalloc((cfg->n_insns + 1) * sizeof(*p));
	struct est_result r;
	double top = 0, followed = (double)c->paths.followed;
	size_t n = 0;

	for (size_t cls = 0; cls < cfg->n_classes; cls++)
		if (pc[cls].insns > 0 && pc[cls].count > top)
			top = pc[cls].count;
	for (size_t b = 0; top > 0 && b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];
		double rel;

		if (!blk->n_insns || blk->cls < 0 || !(pc[blk->cls].count > 0))
			continue;
		rel = pc[blk->cls].count / top;
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			const struct calc_insn *ci = &c->insns[blk->first + k];

			p[n].s = ci->samples;
			p[n].m = ci->m * rel;
			p[n].seg = (unsigned)b;
			p[n].usable = !(ci->flags & (CALC_I_UNMEASURED | CALC_I_UNCERTAIN));
			p[n].producer = -1;
			n++;
		}
	}
	memset(&r, 0, sizeof(r));
	freq_estimate_class(p, n, c->opts.est, &r, NULL);
	free(p);
	if (r.method == EST_NONE || !(r.f > 0))
		return false;
	sc->x = r.f * c->period * followed / top;
	sc->r = calc_err_add(PATHS_MODEL_ERR, c->period_error);
	sc->src = CALC_PSCALE_MODEL;
	return true;
}

/*
 * The scale from the model: the sample-weighted median of the classes'
 * estimates from their samples over their shares.  Its error: the
 * model's, PATHS_MODEL_ERR, and the period's.
 */
static bool model_scale(struct calc_work *w, const struct pclass *pc, struct scale *sc)
{
	if (calc_est_params(w)->paths_fallback == 3)
		return pooled_model_scale(w, pc, sc);
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	double (*q)[2], total = 0, acc = 0, x = -1, followed = (double)c->paths.followed;
	size_t n = 0;

	q = xcalloc(cfg->n_classes + 1, sizeof(*q));
	for (size_t k = 0; k < cfg->n_classes; k++) {
		const struct est_result *r = &w->cls_est[k];

		if ((r->method != EST_CLUSTER && r->method != EST_SUM && r->method != EST_BURST) ||
		    w->cls_state[k] != FREQ_ESTIMATED || !(w->cls_val[k] > 0) ||
		    !(pc[k].count > 0) || !(pc[k].insns > 0) || !(r->total_s > 0))
			continue;
		q[n][0] = w->cls_val[k] * c->period * followed / pc[k].count;
		q[n++][1] = r->total_s;
		total += r->total_s;
	}
	qsort(q, n, sizeof(*q), by_ratio);
	for (size_t k = 0; k < n && x < 0; k++)
		if ((acc += q[k][1]) >= total / 2)
			x = q[k][0];
	free(q);
	if (!(x > 0))
		return false;
	sc->x = x;
	sc->r = calc_err_add(PATHS_MODEL_ERR, w->c->period_error);
	sc->src = CALC_PSCALE_MODEL;
	return true;
}

/*
 * Candidates that disagree beyond three times their joint error cannot
 * both be right: one is broken, not noisy (a window that matched in the
 * wrong place, a period slowed by the burst's stop before it, a model far
 * off).  The windows give way to a measured loop, and to the model while
 * they are fewer than PATHS_TRUSTED_WINDOWS (then they outweigh it); what
 * is left is low confidence (ps->conflict).  Windows fewer than
 * PATHS_MIN_WINDOWS are left out whenever another source can say.
 * Returns the candidates kept (the windows first, as they came).
 */
static size_t consistent(struct scale *cand, size_t n, struct calc_pathscale *ps)
{
	bool drop[3] = { false, false, false };
	size_t kept = 0;

	/* too few windows to tell their spread from a bias: only if nothing else can say */
	if (n > 1 && cand[0].src == CALC_PSCALE_WINDOWS && cand[0].windows < PATHS_MIN_WINDOWS)
		drop[0] = true;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double d = fabs(log(cand[i].x / cand[j].x));

			if (drop[i] || drop[j])
				continue;
			double e = sqrt(cand[i].r * cand[i].r + cand[j].r * cand[j].r);

			if (d <= 3 * e)
				continue;
			ps->conflict = true;
			if (cand[i].src == CALC_PSCALE_WINDOWS &&
			    (cand[j].src == CALC_PSCALE_MEASURED || cand[i].windows < PATHS_TRUSTED_WINDOWS))
				drop[i] = true;
			else
				drop[j] = true;
		}
	for (size_t k = 0; k < n; k++) {
		if (drop[k]) {
			ps->cand[cand[k].src] = cand[k].x;
			ps->cand_error[cand[k].src] = -1;   /* left out */
			continue;
		}
		cand[kept++] = cand[k];
	}
	return kept;
}

/*
 * The procedure's scale: the candidates combined by their errors (a mean
 * of logarithms weighted by 1 / error^2); the source named is the
 * weightiest.
 */
static bool procedure_scale(struct calc_work *w, const struct pclass *pc)
{
	struct calc_pathscale *ps = &w->c->pscale;
	int fallback = calc_est_params(w)->paths_fallback;
	struct scale cand[3];
	size_t n = 0, best = 0;
	double sw = 0, sl = 0;

	memset(cand, 0, sizeof(cand));
	n += windows_scale(w, &cand[n]);
	if (fallback) {
		n += measured_scale(w, pc, &cand[n]);
		n += model_scale(w, pc, &cand[n]);
	}
	if (n && cand[0].src == CALC_PSCALE_WINDOWS) {
		ps->windows = cand[0].windows;
		ps->own = cand[0].own;
	}
	n = consistent(cand, n, ps);
	for (size_t k = 0; k < n; k++) {
		double wt = 1 / (cand[k].r * cand[k].r);

		sw += wt;
		sl += wt * log(cand[k].x);
		if (cand[k].r < cand[best].r)
			best = k;
		ps->cand[cand[k].src] = cand[k].x;
		ps->cand_error[cand[k].src] = cand[k].r;
	}
	if (!n)
		return false;
	ps->source = cand[best].src;
	ps->insns = exp(sl / sw);
	ps->rel_error = 1 / sqrt(sw);
	if (ps->conflict && ps->rel_error < PATHS_CONFLICT_ERR)
		ps->rel_error = PATHS_CONFLICT_ERR;
	ps->per_sample = ps->insns / (double)w->c->list.totals[w->c->time_event];
	return true;
}

size_t calc_paths_estimate(struct calc_work *w)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	const struct pathview *pv = &c->paths;
	const struct est_params *par = calc_est_params(w);
	struct pclass *pc;
	double followed = (double)pv->followed, bursts, x;
	size_t valued = 0;

	memset(&c->pscale, 0, sizeof(c->pscale));
	if (!par->paths || !pv->present || !(c->period > 0) || !c->has_time || !pv->followed)
		return 0;
	pc = xcalloc(cfg->n_classes + 1, sizeof(*pc));
	class_counts(w, pc);
	if (!procedure_scale(w, pc)) {
		free(pc);
		return 0;
	}
	x = c->pscale.insns;
	/* the bursts that went through the procedure, about */
	bursts = pv->img_insns ? followed * (double)pv->img_bursts / (double)pv->img_insns : 1;
	if (bursts < 1)
		bursts = 1;
	for (size_t cls = 0; cls < cfg->n_classes; cls++) {
		double execs, share, var, n = pc[cls].count;

		if (!pc[cls].seen || !(n > 0))
			continue;
		/* a loop counted from its registers with confidence stays counted */
		if (w->cls_est[cls].method == EST_MEASURED && w->cls_state[cls] == FREQ_ESTIMATED &&
		    w->cls_err[cls] <= CALC_ERR_MEDIUM)
			continue;
		execs = x * n / followed;
		share = pc[cls].insns * n / followed;
		if (share > 1)
			share = 1;
		var = c->pscale.rel_error * c->pscale.rel_error + 1 / n;
		if (share > 0)
			var += par->paths_kappa * (1 - share) / (share * bursts);
		w->cls_val[cls] = execs / c->period;
		w->cls_state[cls] = FREQ_ESTIMATED;
		w->cls_est[cls].method = EST_PATHS;
		w->cls_est[cls].samples = n;
		w->cls_est[cls].rel_error = sqrt(var);
		w->cls_err[cls] = sqrt(var);
		w->cls_pshare[cls] = 0;
		w->cls_repaired[cls] = 0;
		valued++;
	}
	free(pc);
	return valued;
}
