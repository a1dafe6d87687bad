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
 *  - the scale: a matched window is the path from one ordinary sample of a
 *    thread (B1) to its next (B2), one sampling period; the windows are a
 *    sample of the periods, and the instructions of the procedure in all
 *    of them, times the periods each window stands for, estimate the
 *    procedure's instructions.  Which windows match is not uniform (a
 *    period with a system call, or an instruction the emulator lacks,
 *    never matches), so the periods a window stands for are counted per
 *    procedure where its own windows allow: the time samples recorded in
 *    it over the matched windows that began there (a ratio estimator:
 *    instructions in the procedure per sample landing in it); else the
 *    image's (windows_scale());
 *
 *  - where no matched window ran the procedure's code, its scale comes
 *    from a loop counted from the registers (measure.h), or the
 *    sample-weighted median of the model's estimates of its classes over
 *    their shares (low confidence), or the image's instructions per sample.
 *
 * Confidence from the relative standard error: the scale's (the windows'
 * instructions per window vary: their coefficient of variation over the
 * windows that began here), the share's (Poisson in its count in bursts,
 * and the bursts' own sampling: kappa (1 - s) / (s n) for a share s of the
 * procedure's instructions seen in about n bursts).
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* Relative standard errors at most these: high, medium confidence. */
#define PATHS_HIGH 0.03
#define PATHS_MEDIUM 0.07
/* The least coefficient of variation assumed of the instructions in a window. */
#define PATHS_MIN_CV 0.05

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

/* The image's time samples (0 when the listing has no view: tests). */
static double image_samples(const struct calc *c)
{
	const struct listing *l = &c->list;

	return l->view ? (double)l->view->images[l->ref.image].samples[c->time_event] : 0;
}

/*
 * The scale from matched windows: the procedure's instructions in them
 * times the time samples each window stands for (*k).  False if no window
 * ran its code.
 *
 * The windows are a sample of the sampling periods, each standing for the
 * period that began at its B1.  Two estimates:
 *  - the ratio: the samples recorded in the procedure over the windows
 *    that began in it (instructions of the procedure per sample landing in
 *    it, as measure.h counts a loop).  It holds whatever makes some
 *    periods match less (a system call, an instruction the emulator
 *    lacks), as long as the procedure's code runs in the windows that begin
 *    in it: its error is the spread of the instructions a window runs
 *    there over the root of their number;
 *  - the image's: the image's samples over its windows, the same for all
 *    its procedures (unbiased only if every period of the image matches as
 *    often); for a procedure whose code the windows of others run (a
 *    callee), with an error of about one over the root of the windows it
 *    ran in, and never less than 10%.
 * The ratio is taken when the windows that began in the procedure hold at
 * least half of its instructions in windows (at most: `here` counts the
 * whole image's).
 */
static bool windows_scale(struct calc_work *w, double *k)
{
	struct calc *c = w->c;
	const struct pathview *pv = &c->paths;
	struct calc_pathscale *ps = &c->pscale;
	double s = (double)c->list.totals[c->time_event], simg = image_samples(c);
	double x = (double)pv->wfollowed, m = pv->win_b1, self, cv, n;

	if (!pv->wfollowed || !(s > 0))
		return false;
	self = pv->win_b1_here / x;
	cv = pv->win_here_cv > PATHS_MIN_CV ? pv->win_here_cv : PATHS_MIN_CV;
	if (m > 0 && self >= 0.5 && calc_est_params(w)->paths_prior <= 0) {
		*k = s / m;
		ps->own = true;
		ps->rel_error = sqrt(cv * cv / (pv->kept_b1 ? (double)pv->kept_b1 : 1) +
				     (self < 1 ? (1 - self) * (1 - self) : 0));
	} else if (pv->img_windows && simg > 0) {
		*k = simg / (double)pv->img_windows;
		n = pv->img_here_mean > 0 ? x / pv->img_here_mean : 1;
		ps->rel_error = 1 / sqrt(n > 1 ? n : 1);
		if (ps->rel_error < 0.1)
			ps->rel_error = 0.1;
	} else {
		return false;
	}
	ps->source = CALC_PSCALE_WINDOWS;
	ps->insns = *k * x;
	ps->per_sample = ps->insns / s;
	ps->windows = m;
	return true;
}

static int by_ratio(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The scale without windows: from a measured loop (its count over its
 * class's share), or the sample-weighted median of the model's estimates
 * over their shares, or the image's instructions per sample.  Instructions
 * of the procedure in the epoch, or -1.
 */
static double fallback_scale(struct calc_work *w, const struct pclass *pc, double followed)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	const struct pathview *pv = &c->paths;
	struct calc_pathscale *ps = &c->pscale;
	int how = calc_est_params(w)->paths_fallback;
	double (*q)[2], total = 0, acc = 0, x = -1;
	size_t n = 0;

	if (!how)
		return -1;
	for (size_t k = 0; k < cfg->n_classes; k++) {
		if (w->cls_est[k].method != EST_MEASURED || w->cls_state[k] != FREQ_ESTIMATED ||
		    w->cls_conf[k] < CALC_CONF_MEDIUM || !(pc[k].count > 0) || !(pc[k].insns > 0))
			continue;
		ps->source = CALC_PSCALE_MEASURED;
		ps->rel_error = w->cls_conf[k] == CALC_CONF_HIGH ? 0.02 : 0.05;
		return w->cls_val[k] * c->period * followed / pc[k].count;
	}
	if (how == 1) {
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
		ps->source = CALC_PSCALE_MODEL;
	} else if (pv->img_windows && pv->img_wfollowed) {
		x = (double)c->list.totals[c->time_event] * (double)pv->img_wfollowed /
		    (double)pv->img_windows;
		ps->source = CALC_PSCALE_IMAGE;
	}
	if (!(x > 0)) {
		ps->source = CALC_PSCALE_NONE;
		return -1;
	}
	ps->rel_error = 0.5;  /* the model's error, or another procedure's rate: unknown */
	return x;
}

static enum calc_conf conf_of(double rel)
{
	return rel <= PATHS_HIGH ? CALC_CONF_HIGH : rel <= PATHS_MEDIUM ? CALC_CONF_MEDIUM : CALC_CONF_LOW;
}

size_t calc_paths_estimate(struct calc_work *w)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	const struct pathview *pv = &c->paths;
	const struct est_params *par = calc_est_params(w);
	struct pclass *pc;
	double k = 0, x = -1, followed = (double)pv->followed, bursts;
	bool win, by_windows;
	size_t valued = 0;

	memset(&c->pscale, 0, sizeof(c->pscale));
	if (!par->paths || !pv->present || !(c->period > 0) || !c->has_time || !pv->followed)
		return 0;
	pc = xcalloc(cfg->n_classes + 1, sizeof(*pc));
	class_counts(w, pc);
	win = windows_scale(w, &k);
	if (win)
		x = k * (double)pv->wfollowed;
	else
		x = fallback_scale(w, pc, followed);
	by_windows = win && par->paths_shares == 1;
	/* the bursts that went through the procedure, about */
	bursts = pv->img_insns ? followed * (double)pv->img_bursts / (double)pv->img_insns : 1;
	if (bursts < 1)
		bursts = 1;
	for (size_t cls = 0; x > 0 && cls < cfg->n_classes; cls++) {
		double execs, share, var, n = by_windows ? pc[cls].wcount : pc[cls].count;

		if (!pc[cls].seen || !(n > 0))
			continue;
		/* a loop counted from its registers with confidence stays counted */
		if (w->cls_est[cls].method == EST_MEASURED && w->cls_state[cls] == FREQ_ESTIMATED &&
		    w->cls_conf[cls] >= CALC_CONF_MEDIUM)
			continue;
		if (by_windows) {
			execs = k * n;
			share = pc[cls].insns * n / (double)pv->wfollowed;
		} else {
			execs = x * n / followed;
			share = pc[cls].insns * n / followed;
		}
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
		w->cls_conf[cls] = c->pscale.source == CALC_PSCALE_WINDOWS ||
				   c->pscale.source == CALC_PSCALE_MEASURED
				   ? conf_of(sqrt(var)) : CALC_CONF_LOW;
		w->cls_repaired[cls] = 0;
		valued++;
	}
	free(pc);
	return valued;
}
