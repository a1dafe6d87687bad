/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-flow.c - the global flow correction (flow.h, opts.flow): block and
 * edge frequencies made to conserve flow at the least weighted change, each
 * weighed by its relative error (calc-conf.h), and its error after.
 */
#include "config.h"

#include "analysis/calc-int.h"
#include "analysis/calc-conf.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/flow.h"
#include "core/xalloc.h"

/*
 * The weight of an estimate: one over its expected error, relative to the
 * magnitude it comes from (a propagated difference of large values is as
 * uncertain as they are: its error, carried relative to itself, is
 * taken back to that scale), with a floor for sampling error (about one
 * sample per class issue cycle).  About 0 for unknown values.
 */
static double est_weight(double val, double err, double class_m, double scale)
{
	double floor = class_m > 0 ? 1.0 / class_m : 1.0, mag, rel, sigma;

	if (!(err >= 0) || val < 0)
		return 1e-9;
	rel = scale > val ? err * val / scale : err;
	mag = scale > val ? scale : val;
	sigma = sqrt(rel * mag * rel * mag + floor * floor);
	return 1.0 / sigma;
}

struct netb {
	uint32_t *from, *to;
	double *est, *w;
	/* per arc while building: relative error, class issue cycles, scale */
	double *err;
	double *cm, *scale;
	size_t n, alloc[7];
	long *block_arc, *edge_arc;
	long inv_arc;
};

static size_t net_arc(struct netb *n, uint32_t u, uint32_t v, double est, double err,
		      double cm, double scale)
{
	ALLOC_GROW(n->from, n->n + 1, n->alloc[0]);
	ALLOC_GROW(n->to, n->n + 1, n->alloc[1]);
	ALLOC_GROW(n->est, n->n + 1, n->alloc[2]);
	ALLOC_GROW(n->w, n->n + 1, n->alloc[3]);
	ALLOC_GROW(n->err, n->n + 1, n->alloc[4]);
	ALLOC_GROW(n->cm, n->n + 1, n->alloc[5]);
	ALLOC_GROW(n->scale, n->n + 1, n->alloc[6]);
	n->from[n->n] = u;
	n->to[n->n] = v;
	n->est[n->n] = est > 0 ? est : 0;
	n->err[n->n] = est >= 0 ? err : -1;
	n->cm[n->n] = cm;
	n->scale[n->n] = scale;
	return n->n++;
}

/* Node of block b: 2b (in), 2b+1 (out); EXIT is one node, 2*exit. */
static uint32_t node_in(const struct cfg *cfg, size_t b)
{
	(void)cfg;
	return (uint32_t)(2 * b);
}

static uint32_t node_out(const struct cfg *cfg, size_t b)
{
	return b == cfg->exit ? (uint32_t)(2 * b) : (uint32_t)(2 * b + 1);
}

static double class_m(const struct calc_work *w, int cls)
{
	return cls >= 0 ? w->cls_m[cls] : 0;
}

static double class_scale(const struct calc_work *w, int cls)
{
	return cls >= 0 ? w->cls_scale[cls] : 0;
}

/*
 * The weights: an estimate's error is taken relative to the flow around
 * it (the largest value on the arcs of its two nodes), not to itself.  A
 * frequency estimated far too low (a short block whose time the out-of-
 * order core hid: M overstated) would otherwise be the cheapest value to
 * keep, and the correction would cut every loop through it.
 */
static void net_weights(struct netb *n, size_t n_nodes)
{
	double *mag = xcalloc(n_nodes + 1, sizeof(*mag));

	for (size_t k = 0; k < n->n; k++) {
		if (n->est[k] > mag[n->from[k]])
			mag[n->from[k]] = n->est[k];
		if (n->est[k] > mag[n->to[k]])
			mag[n->to[k]] = n->est[k];
	}
	for (size_t k = 0; k < n->n; k++) {
		double local = mag[n->from[k]] > mag[n->to[k]] ? mag[n->from[k]] : mag[n->to[k]];

		n->w[k] = est_weight(n->est[k], n->err[k], n->cm[k],
				     n->scale[k] > local ? n->scale[k] : local);
	}
	free(mag);
}

static void build_net(struct calc_work *w, struct netb *n)
{
	const struct cfg *cfg = w->cfg;
	const struct calc *c = w->c;

	n->block_arc = xmalloc((cfg->n_blocks + 1) * sizeof(long));
	n->edge_arc = xmalloc((cfg->n_edges + 1) * sizeof(long));
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct calc_block *cb = &c->blocks[b];
		int cls = cfg->blocks[b].cls;

		n->block_arc[b] = -1;
		if (!calc_reachable(cfg, b))
			continue;
		n->block_arc[b] = (long)net_arc(n, node_in(cfg, b), node_out(cfg, b), cb->freq,
						cb->rel_error, class_m(w, cls), class_scale(w, cls));
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];
		const struct calc_edge *ce = &c->edges[e];

		n->edge_arc[e] = -1;
		if (!(ed->from == cfg->exit || calc_reachable(cfg, ed->from)) ||
		    !(ed->to == cfg->exit || calc_reachable(cfg, ed->to)))
			continue;
		n->edge_arc[e] = (long)net_arc(n, node_out(cfg, ed->from), node_in(cfg, ed->to),
					       ce->freq, ce->rel_error, class_m(w, ed->cls),
					       class_scale(w, ed->cls));
	}
	n->inv_arc = (long)net_arc(n, node_out(cfg, cfg->exit), node_in(cfg, cfg->entry),
				   c->invocations, c->blocks[cfg->exit].rel_error,
				   class_m(w, cfg->blocks[cfg->exit].cls),
				   class_scale(w, cfg->blocks[cfg->exit].cls));
	net_weights(n, 2 * cfg->n_blocks);
}

/*
 * A value the correction changed: the change is the disagreement between
 * it and its neighbours, which its error must cover; one it gave a value
 * to had no estimate: a guess (an error of 1, a factor of two).  Its
 * share resting on the period stays (or is the whole, for a guess).
 */
static void take_flow(double old, double nv, double *freq, double *err, double *share,
		      enum calc_conf *conf, enum calc_how *how)
{
	if (old < 0 || fabs(nv - old) > 0.02 * (old > 0 ? old : 1e-12))
		*how = CALC_HOW_FLOW;
	if (old < 0 || !(*err >= 0)) {
		*err = 1;
		*share = 1;
	} else if (nv != old) {
		*err = calc_err_add(*err, nv > 0 ? fabs(nv - old) / nv : CALC_ERR_UNBOUNDED);
	}
	*conf = calc_conf_of(*err);
	*freq = nv;
}

void calc_flow_correct(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	struct calc *c = w->c;
	struct netb n = { 0 };
	struct flow_net net;
	double *x;
	bool any = false;

	for (size_t cls = 0; cls < cfg->n_classes; cls++)
		any |= w->cls_state[cls] != FREQ_UNKNOWN;
	if (!any || (cfg->flags & CFG_MISSING_EDGES) || !c->opts.flow)
		return;
	build_net(w, &n);
	net = (struct flow_net){ 2 * cfg->n_blocks, n.n, n.from, n.to, n.est, n.w, 0 };
	x = xcalloc(n.n + 1, sizeof(*x));
	if (!flow_correct(&net, x)) {
		for (size_t b = 0; b < cfg->n_blocks; b++) {
			struct calc_block *cb = &c->blocks[b];

			if (n.block_arc[b] >= 0)
				take_flow(cb->freq, x[n.block_arc[b]], &cb->freq, &cb->rel_error,
					  &cb->period_share, &cb->conf, &cb->how);
		}
		for (size_t e = 0; e < cfg->n_edges; e++) {
			struct calc_edge *ce = &c->edges[e];

			if (n.edge_arc[e] >= 0)
				take_flow(ce->freq, x[n.edge_arc[e]], &ce->freq, &ce->rel_error,
					  &ce->period_share, &ce->conf, &ce->how);
		}
		struct calc_block *ex = &c->blocks[cfg->exit];

		take_flow(ex->freq, x[n.inv_arc], &ex->freq, &ex->rel_error, &ex->period_share,
			  &ex->conf, &ex->how);
		c->invocations = ex->freq;
	}
	free(x);
	free(n.from);
	free(n.to);
	free(n.est);
	free(n.w);
	free(n.err);
	free(n.cm);
	free(n.scale);
	free(n.block_arc);
	free(n.edge_arc);
}
