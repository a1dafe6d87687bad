/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-est.c - each frequency-equivalence class's own estimate: from its
 * samples over the schedules' M (freq.h), counted from retired-instruction
 * samples or an induction register (measure.h), or a pointer chase's
 * burst estimate; and its relative error (calc-conf.h).
 */
#include "config.h"

#include "analysis/calc-int.h"
#include "analysis/calc-conf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "db/meta.h"

/*
 * The model's error in an estimate from samples (sampled_error()),
 * measured over the accuracy harness (docs/analysis.md, "Confidence"):
 * EST_ERR_STEADY for a class whose blocks the schedule takes in their
 * loop's steady state, EST_ERR_COLD for one it takes cold or after its
 * predecessors (on an out-of-order core a cold M is a guess at how much
 * of the block overlaps the code around it), in proportion to their issue
 * cycles; plus EST_ERR_AGREE per unit of the schedule models'
 * disagreement (|log| of their ratio; EST_ERR_SINGLE when the class has
 * one schedule, nothing to agree with), EST_ERR_LOADS per unit of the
 * share of loads (a miss is a stall every window shares), and
 * EST_ERR_SPILL over the class's issue cycles (samples spill across its
 * boundaries: a class of one cycle is as much its neighbours' as its
 * own); the sum ratio over a sparse class adds EST_ERR_SUM.
 */
#define EST_ERR_STEADY 0.02
#define EST_ERR_COLD 0.3
#define EST_ERR_AGREE 1.0
#define EST_ERR_SINGLE 1.0
#define EST_ERR_LOADS 1.0
#define EST_ERR_SPILL 0.08
#define EST_ERR_SUM 0.3
/*
 * A pointer chase's burst estimate: the samples the rest of an iteration
 * gets measure interrupt delivery around the burst as much as time (0.5x
 * to 2.4x the truth measured): a factor of two.
 */
#define EST_ERR_BURST 1.0

/*
 * The relative error of a class's estimate from its samples over the
 * schedules' M (calc-conf.h): the samples' Poisson error, and the
 * model's (above).  agree: the schedule models' agreement (0: one
 * schedule); loads: the share of loads; steady: the share of the class's
 * issue cycles scheduled in a loop's steady state.
 */
static double sampled_error(const struct est_result *r, double agree, double loads, double steady)
{
	double dev = agree > 0 ? EST_ERR_AGREE * fabs(log(agree)) : EST_ERR_SINGLE, model;

	if (!(r->samples > 0) || !(r->total_m > 0))
		return CALC_ERR_UNBOUNDED;
	model = EST_ERR_STEADY * steady + EST_ERR_COLD * (1 - steady) + dev + EST_ERR_LOADS * loads +
		EST_ERR_SPILL / r->total_m;
	if (r->method == EST_SUM)
		model = calc_err_add(model, EST_ERR_SUM);
	return calc_err_add(1 / sqrt(r->samples), model);
}

/*
 * What the error of class cls's estimate rests on: the agreement of the
 * schedule models, the share of loads, and the share of its issue cycles
 * scheduled in a loop's steady state.  A class none of whose blocks has a
 * schedule besides the cold one (a procedure's entry, blocks entered only
 * from outside or after calls) has nothing to compare: its agreement is
 * 0, not a trivial 1 (sort's compare() prologue was medium at 0.35x).
 */
static void class_features(const struct calc_work *w, int cls, double *agree, double *loads,
			   double *steady)
{
	const struct cfg *cfg = w->cfg;
	double used = 0, alt = 0, n = 0, ld = 0, in_loop = 0;
	bool compared = false;

	for (uint32_t k = w->cls_first[cls]; k < w->cls_first[cls + 1]; k++) {
		uint32_t b = w->cls_blocks[k];
		const struct cfg_block *blk = &cfg->blocks[b];
		const struct block_schedule *s = &w->c->blocks[b].sched;

		compared |= w->bs[b].n > 1;
		used += s->cycles;
		alt += w->alt_m[b];
		if (s->entry == SCHED_ENTRY_LOOP)
			in_loop += s->cycles;
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++) {
			n++;
			ld += !!(cfg->insns[i].flags & INSN_F_LOAD);
		}
	}
	*agree = used > 0 && compared ? alt / used : 0;
	*loads = n > 0 ? ld / n : 0;
	*steady = used > 0 ? in_loop / used : 0;
}

/* The points of class cls, block by block. */
static size_t class_points(struct calc_work *w, int cls, struct est_point *p, size_t *idx)
{
	const struct cfg *cfg = w->cfg;
	size_t n = 0;

	for (uint32_t j = w->cls_first[cls]; j < w->cls_first[cls + 1]; j++) {
		uint32_t b = w->cls_blocks[j];
		const struct cfg_block *blk = &cfg->blocks[b];
		const struct block_schedule *s = &w->c->blocks[b].sched;
		size_t base = n;

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
	/* a Poisson count of events; the executions do not rest on the period */
	r->rel_error = s > 0 ? 1 / sqrt(s) : CALC_ERR_UNBOUNDED;
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

	if (w->cls_first[cls + 1] - w->cls_first[cls] != 1)
		return false;
	blk = &cfg->blocks[w->cls_blocks[w->cls_first[cls]]];
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
	r->rel_error = EST_ERR_BURST;
	return true;
}

/*
 * A count measured from an induction register (measure.h) for class cls:
 * executions over the cycles of a sample (the count itself does not rest
 * on them).  Its error is the measurement's (measure_rel_error()).
 */
static bool measured_estimate(struct calc_work *w, int cls, struct est_result *r)
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
	r->rel_error = measure_rel_error(best);
	return true;
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
		double steady;
		size_t n;

		w->cls_state[cls] = FREQ_UNKNOWN;
		w->cls_val[cls] = 0;
		w->cls_err[cls] = -1;
		w->cls_pshare[cls] = 0;
		if (!has[cls] || !w->c->has_time)
			continue;
		n = class_points(w, (int)cls, p, idx);
		freq_estimate_class(p, n, w->c->opts.est, r, used);
		w->cls_m[cls] = r->total_m;
		class_features(w, (int)cls, &w->cls_agree[cls], &w->cls_loads[cls], &steady);
		/* counts (measured, instructions) do not rest on the period; estimates do */
		if (measured_estimate(w, (int)cls, r) || instructions_estimate(w, idx, n, r)) {
			memset(used, 0, n);
		} else if (burst_estimate(w, (int)cls, r)) {
			memset(used, 0, n);
			w->cls_pshare[cls] = 1;
		} else if (r->method != EST_NONE) {
			r->rel_error = sampled_error(r, w->cls_agree[cls], w->cls_loads[cls], steady);
			w->cls_pshare[cls] = 1;
		} else {
			continue;
		}
		if (!(r->rel_error >= 0))
			r->rel_error = CALC_ERR_UNBOUNDED;
		w->cls_err[cls] = r->rel_error;
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
