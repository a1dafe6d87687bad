/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/skid.c - the per-event skid model (skid.h).
 */
#include "config.h"

#include "analysis/skid.h"

#include <string.h>

#include "db/meta.h"

int skid_default(const struct epoch_meta *meta, enum dcpi_event ev)
{
	/*
	 * Every event dcpi asks the kernel for is sampled without precise_ip:
	 * the timer (clock, and cycles where it stands in) and the non-precise
	 * hardware counters all record the instruction after the one that was
	 * oldest when the interrupt came.  The metadata only matters once dcpi
	 * records precise sampling.
	 */
	(void)meta;
	(void)ev;
	return 1;
}

static bool is_call(const struct insn *in)
{
	return in->kind == INSN_CALL || in->kind == INSN_ICALL;
}

/* True if some execution of block b's last instruction continues outside the procedure. */
static bool leaves(const struct cfg *cfg, const struct cfg_block *b)
{
	for (uint32_t k = 0; k < b->n_succ; k++)
		if (cfg->edges[cfg->succ[b->succ + k]].to == cfg->exit)
			return true;
	return false;
}

/* Marks the instructions whose time was recorded outside the procedure. */
static void mark_unmeasured(const struct cfg *cfg, unsigned *flags)
{
	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (!blk->n_insns || (blk->flags & CFG_BLOCK_UNREACHABLE))
			continue;
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++)
			if (is_call(&cfg->insns[i]))
				flags[i] |= SKID_UNMEASURED;
		if (leaves(cfg, blk))
			flags[blk->first + blk->n_insns - 1] |= SKID_UNMEASURED;
	}
}

/* The weight of edge e for splitting head samples. */
static double weight(const double *edge_w, size_t e)
{
	if (!edge_w)
		return 1;
	return edge_w[e] > 0 ? edge_w[e] : 0;
}

/*
 * Splits the samples recorded at the head of block b over its incoming
 * edges; returns the share that measured other procedures.
 */
static double split_head(const struct cfg *cfg, size_t b, double s, const double *edge_w,
			 double inv_w, double *out)
{
	const struct cfg_block *blk = &cfg->blocks[b];
	double total = 0, gone = 0, inv = 0;

	if (b == cfg->entry)
		inv = edge_w ? (inv_w > 0 ? inv_w : 0) : 1;
	for (uint32_t k = 0; k < blk->n_pred; k++)
		total += weight(edge_w, cfg->pred[blk->pred + k]);
	total += inv;
	if (total <= 0) {
		/* nothing known: equal shares */
		if (edge_w)
			return split_head(cfg, b, s, NULL, 0, out);
		return s;
	}
	gone = s * inv / total;
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		uint32_t e = cfg->pred[blk->pred + k];
		const struct cfg_edge *ed = &cfg->edges[e];
		double share = s * weight(edge_w, e) / total;
		const struct cfg_block *from = &cfg->blocks[ed->from];
		size_t last;

		if (ed->from == cfg->exit || !from->n_insns) {
			gone += share;
			continue;
		}
		last = from->first + from->n_insns - 1;
		if (is_call(&cfg->insns[last]))
			gone += share;          /* the callee's return */
		else
			out[last] += share;
	}
	return gone;
}

double skid_attribute(const struct cfg *cfg, const double *recorded, const double *edge_w,
		      double inv_w, int skid, double *out, unsigned *flags)
{
	double gone = 0;

	memset(out, 0, cfg->n_insns * sizeof(*out));
	if (flags) {
		memset(flags, 0, cfg->n_insns * sizeof(*flags));
		if (skid > 0)
			mark_unmeasured(cfg, flags);
	}
	if (skid <= 0) {
		memcpy(out, recorded, cfg->n_insns * sizeof(*out));
		return 0;
	}
	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (!blk->n_insns)
			continue;
		for (uint32_t i = blk->first; i < blk->first + blk->n_insns; i++) {
			double s = recorded[i];

			if (blk->flags & CFG_BLOCK_UNREACHABLE) {
				out[i] += s;
			} else if (i > blk->first && is_call(&cfg->insns[i - 1])) {
				gone += s;
				if (flags)
					flags[i] |= SKID_AFTER_CALL;
			} else if (i > blk->first) {
				out[i - 1] += s;
			} else {
				if (flags && b == cfg->entry)
					flags[i] |= SKID_ENTRY;
				if (flags && blk->n_pred == 1 &&
				    cfg->edges[cfg->pred[blk->pred]].kind == CFG_CALL_RETURN)
					flags[i] |= SKID_AFTER_CALL;
				if (s > 0)
					gone += split_head(cfg, b, s, edge_w, inv_w, out);
			}
		}
	}
	return gone;
}
