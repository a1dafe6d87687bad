/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-est.c - each frequency-equivalence class's own estimate: from its
 * samples over the schedules' M (freq.h), counted from retired-instruction
 * samples or an induction register (measure.h), or a pointer chase's
 * burst estimate; and its confidence.
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "db/meta.h"

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
static void class_features(const struct calc_work *w, int cls, double *agree, double *loads)
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
static size_t class_points(struct calc_work *w, int cls, struct est_point *p, size_t *idx)
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
static bool instructions_estimate(struct calc_work *w, const size_t *idx, size_t n,
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
const struct est_params *calc_est_params(const struct calc_work *w)
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
static bool burst_estimate(struct calc_work *w, int cls, struct est_result *r)
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
	if (!blk || !calc_est_params(w)->burst)
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
static bool measured_estimate(struct calc_work *w, int cls, struct est_result *r,
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

void calc_estimate_classes(struct calc_work *w)
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
