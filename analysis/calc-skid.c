/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-skid.c - the analysis' skid step: the samples of every event moved
 * back to the instructions they measured (skid.h), split at block heads
 * by how hot each predecessor looks (pass 1) or by edge frequency (pass 2).
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <stdlib.h>

#include "analysis/skid.h"
#include "core/xalloc.h"

/* Samples recorded in block b past its head (not split by the skid model). */
static double inner_samples(const struct calc_work *w, size_t b)
{
	const struct cfg_block *blk = &w->cfg->blocks[b];
	double s = 0;

	for (uint32_t i = blk->first + 1; i < blk->first + blk->n_insns; i++)
		s += w->rec[w->c->time_event] ? w->rec[w->c->time_event][i] : 0;
	return s;
}

/*
 * Before any frequency is known (pass 1), a block head's samples are split
 * by how hot each predecessor looks: the samples recorded inside it (a
 * loop's back edge is far hotter than its entry); the invocations weigh
 * as the blocks that return.
 */
static double prior_weights(const struct calc_work *w, double *ew)
{
	const struct cfg *cfg = w->cfg;
	double inv = 0;

	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];

		ew[e] = ed->from == cfg->exit ? 0 : inner_samples(w, ed->from);
		if (ed->kind == CFG_RETURN)
			inv += inner_samples(w, ed->from);
	}
	return inv;
}

void calc_skid_attribute(struct calc_work *w, bool weighted)
{
	struct calc *c = w->c;
	const struct cfg *cfg = w->cfg;
	double *ew = xcalloc(cfg->n_edges + 1, sizeof(*ew)), *out = xcalloc(cfg->n_insns + 1, sizeof(*out));
	double inv = c->invocations;

	if (weighted) {
		for (size_t e = 0; e < cfg->n_edges; e++)
			ew[e] = c->edges[e].freq > 0 ? c->edges[e].freq : 0;
	} else {
		inv = prior_weights(w, ew);
	}
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		double gone;

		if (!w->rec[ev])
			continue;
		gone = skid_attribute(cfg, w->rec[ev], ew, inv, ev == c->time_event ? c->skid
				      : skid_default(w->meta, (enum dcpi_event)ev), out,
				      ev == c->time_event ? w->skflags : NULL);
		for (size_t i = 0; i < cfg->n_insns; i++)
			c->insns[i].attributed[ev] = out[i];
		if (ev == c->time_event) {
			w->moved_out = gone;
			for (size_t i = 0; i < cfg->n_insns; i++) {
				struct calc_insn *ci = &c->insns[i];

				ci->samples = out[i];
				ci->flags &= ~(CALC_I_UNMEASURED | CALC_I_AFTER_CALL | CALC_I_ENTRY);
				if (w->skflags[i] & SKID_UNMEASURED)
					ci->flags |= CALC_I_UNMEASURED;
				if (w->skflags[i] & SKID_AFTER_CALL)
					ci->flags |= CALC_I_AFTER_CALL;
				if (w->skflags[i] & SKID_ENTRY)
					ci->flags |= CALC_I_ENTRY;
			}
		}
	}
	free(ew);
	free(out);
}
