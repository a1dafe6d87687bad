/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-burst.c - class values from bursts (burstview.h): edges from their
 * branch's outcomes, and classes scaled from how often bursts stepped them.
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <math.h>
#include <stdlib.h>

#include "core/xalloc.h"

/* Bursts: a branch's outcomes counted at least this often give its edges' values. */
#define BRANCH_MIN 12

/* A class whose value branch outcomes may give: none yet, or a low-confidence estimate. */
static bool overridable(const struct calc_work *w, const unsigned char *valued, int cls)
{
	return cls >= 0 && !valued[cls] && w->cls_est[cls].method != EST_MEASURED &&
	       (w->cls_state[cls] == FREQ_UNKNOWN || w->cls_conf[cls] <= CALC_CONF_LOW);
}

/*
 * Confidence conf (at most), and the outcomes behind the value in samples:
 * medium only where the share's binomial error, sqrt((1 - p) / n), is 5%
 * or less and the value it multiplies is medium or better.
 */
static void set_branch_value(struct calc_work *w, unsigned char *valued, int cls, double v,
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
static size_t branch_edges(struct calc_work *w, unsigned char *valued, size_t b)
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
static size_t sum_of_edges(struct calc_work *w, unsigned char *valued, size_t b)
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

		if (e->from == cfg->exit || !calc_reachable(cfg, e->from))
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
size_t calc_branch_outcomes(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	unsigned char *valued;
	size_t changed = 0, round;

	if (!w->c->bursts.steps || !calc_est_params(w)->branches)
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
size_t calc_steps_scale(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	const struct burstview *bv = &w->c->bursts;
	double *steps, (*q)[2], scale = 0, total = 0, acc = 0;
	size_t n = 0, valued = 0;

	if (!bv->steps || !calc_est_params(w)->steps)
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
