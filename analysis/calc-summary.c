/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-summary.c - the procedure summary (the DCPI paper's Figure 4):
 * where the cycles went, with the culprits' ranges; and a procedure's
 * figures for a table of procedures.
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The dynamic stall is what the samples show beyond the model's best
 * case, net: an instruction's stall and another's gain (samples below its
 * M: skid moves samples between neighbours, and M can be wrong) offset each
 * other.  The subtotal is never negative, and the culprits' ranges are of
 * it (scaled from the gross stalls they explain).  What the gains leave
 * below zero is sampling noise when within 2 sqrt(samples) (it counts in
 * the net sampling error), else a disagreement of the model and the
 * samples, said in words.
 */
static void net_dynamic(struct calc_summary *s)
{
	double gross = s->dynamic - s->gain, net = s->dynamic, scale;

	s->noise = s->samples > 0 ? 2 * sqrt(s->samples) : 0;
	s->dynamic = net > 0 ? net : 0;
	s->disagreement = net < 0 && -net > s->noise ? -net : 0;
	scale = gross > 0 ? s->dynamic / gross : 0;
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		s->dyn_lo[k] *= scale;
		s->dyn_hi[k] *= scale;
	}
	s->net_error = s->samples - (s->execution + s->static_total + s->dynamic + s->unestimated) +
		       s->disagreement;
}

/*
 * The culprits that may lead (an upper bound at least every other's lower
 * bound), and the dominant one when it alone can and the estimate is
 * confident enough to say so.
 */
static void find_dominant(struct calc_summary *s)
{
	double max_lo = 0, least = 0.0005 * s->samples;  /* what shows as 0.0% is none */
	unsigned n = 0;

	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if (s->dyn_lo[k] > max_lo)
			max_lo = s->dyn_lo[k];
	s->candidates = 0;
	s->dominant = -1;
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if (s->dyn_hi[k] > least && s->dyn_hi[k] >= max_lo) {
			s->candidates |= 1u << k;
			n++;
			s->dominant = (int)k;
		}
	if (n != 1 || s->high_share < CALC_DOMINANT_CONF)
		s->dominant = -1;
}

void calc_summarise(struct calc_work *w, double epoch_total)
{
	struct calc *c = w->c;
	struct calc_summary *s = &c->summary;
	struct calc_cctx x;
	double unmeasured = 0, best = 0;

	memset(s, 0, sizeof(*s));
	calc_cctx_init(w, &x);
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
	net_dynamic(s);
	if (s->samples > 0) {
		s->high_share /= s->samples;
		s->low_share /= s->samples;
	}
	find_dominant(s);
	for (size_t cls = 0; cls < w->cfg->n_classes; cls++) {
		s->n_classes++;
		s->n_estimated += w->cls_state[cls] == FREQ_ESTIMATED;
		s->n_propagated += w->cls_state[cls] == FREQ_PROPAGATED;
	}
	for (size_t b = 0; b < c->n_blocks; b++)
		s->n_flow += c->blocks[b].how == CALC_HOW_FLOW;
	calc_cctx_release(&x);
}

double calc_summary_pct(const struct calc *c, double v)
{
	return c->summary.samples > 0 ? 100.0 * v / c->summary.samples : 0;
}

void calc_procrow(const struct calc *c, struct calc_procrow *row)
{
	const struct calc_summary *s = &c->summary;

	int lead = s->dominant;

	row->samples = s->samples;
	row->cpi = s->cpi;
	row->best_cpi = s->best_cpi;
	row->dominant = s->dominant;
	row->candidates = s->dominant >= 0 ? 0 : s->candidates;
	/* unknown: the share of the candidate with the largest upper bound */
	for (size_t k = 0; k < CULPRIT__COUNT && s->dominant < 0; k++)
		if ((s->candidates & (1u << k)) && (lead < 0 || s->dyn_hi[k] > s->dyn_hi[lead]))
			lead = (int)k;
	row->dominant_share = lead >= 0 && s->samples > 0 ? s->dyn_hi[lead] / s->samples : 0;
	row->high_share = s->high_share;
}
