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
	calc_cctx_release(&x);
}

double calc_summary_pct(const struct calc *c, double v)
{
	return c->summary.samples > 0 ? 100.0 * v / c->summary.samples : 0;
}

void calc_procrow(const struct calc *c, struct calc_procrow *row)
{
	const struct calc_summary *s = &c->summary;

	row->samples = s->samples;
	row->cpi = s->cpi;
	row->best_cpi = s->best_cpi;
	row->dominant = s->dominant;
	row->dominant_share = s->dominant >= 0 && s->samples > 0 ? s->dyn_hi[s->dominant] / s->samples : 0;
	row->high_share = s->high_share;
}
