/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the instruction-level analysis (analysis/calc.h and
 * the modules under it): the frequency estimator on synthetic sample
 * vectors with known frequencies, local propagation and the min-cost flow
 * correction on CFG shapes, the skid model and the culprit rules on real
 * machine code (decoded by disasm/, CFGs built by cfg_build), and the
 * whole analysis on a synthetic listing whose samples follow a known
 * frequency.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/calc.h"
#include "analysis/calc-conf.h"
#include "analysis/calc-dot.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-json.h"
#include "analysis/calc-nav.h"
#include "analysis/culprit.h"
#include "analysis/flow.h"
#include "analysis/freq.h"
#include "analysis/skid.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/decode.h"
#include "disasm/image.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define assert_rel(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

/* ---- the estimator ------------------------------------------------------------------ */

/* Points of one segment per block; S = F x M x factor[block]. */
static size_t make_points(struct est_point *p, const double *m, size_t n, size_t per_block,
			  double f, const double *factor)
{
	for (size_t i = 0; i < n; i++) {
		p[i].m = m[i];
		p[i].s = f * m[i] * factor[i / per_block];
		p[i].seg = (unsigned)(i / per_block);
		p[i].producer = -1;
		p[i].usable = true;
	}
	return n;
}

static const double shape_m[] = { 1, 0, 2, 1, 0, 1, 3, 0, 1, 1, 0, 2 };

static void estimator_exact(void **state)
{
	struct est_point p[12];
	double factor[3] = { 1, 1, 1 };
	struct est_result r;

	(void)state;
	make_points(p, shape_m, 12, 4, 250, factor);
	freq_estimate_class(p, 12, NULL, &r, NULL);
	assert_int_equal(r.method, EST_CLUSTER);
	assert_near(r.f, 250, 1e-9);
	assert_near(r.spread, 1, 1e-9);
	assert_near(r.support, 1, 1e-9);
}

/* A block with a dynamic stall: its ratio is high, the cluster of small ones wins. */
static void estimator_ignores_stalled_window(void **state)
{
	struct est_point p[12];
	double factor[3] = { 1, 3.0, 1.02 };
	unsigned char used[12];
	struct est_result r;

	(void)state;
	make_points(p, shape_m, 12, 4, 400, factor);
	freq_estimate_class(p, 12, NULL, &r, used);
	assert_int_equal(r.method, EST_CLUSTER);
	assert_rel(r.f, 400, 0.02);
	/* the stalled block is not among the windows used */
	for (size_t i = 4; i < 8; i++)
		assert_int_equal(used[i], 0);
	assert_int_equal(used[0], 1);
}

/* Few samples: the sum ratio over every usable point. */
static void estimator_sparse_sum_ratio(void **state)
{
	struct est_point p[12];
	double factor[3] = { 1, 2, 1 };
	struct est_result r;
	double s = 0, m = 0;

	(void)state;
	make_points(p, shape_m, 12, 4, 1.0, factor);
	for (size_t i = 0; i < 12; i++) {
		s += p[i].s;
		m += p[i].m;
	}
	freq_estimate_class(p, 12, NULL, &r, NULL);
	assert_int_equal(r.method, EST_SUM);
	assert_near(r.f, s / m, 1e-12);
}

/*
 * Anomaly rejection: an isolated window with a ratio far below the rest
 * (samples lost to a neighbour, or an M the schedule overstated) holds
 * too small a share of the class's issue cycles to be believed.
 */
static void estimator_rejects_isolated_low_window(void **state)
{
	struct est_point p[13];
	double factor[3] = { 1, 1, 1 };
	struct est_result r;

	(void)state;
	make_points(p, shape_m, 12, 4, 300, factor);
	p[12] = (struct est_point){ 30, 1, -1, 7, true };  /* ratio 30 in its own segment */
	freq_estimate_class(p, 13, NULL, &r, NULL);
	assert_int_equal(r.method, EST_CLUSTER);
	assert_true(r.rejected >= 1);
	assert_rel(r.f, 300, 0.01);
}

static void estimator_nothing_to_estimate(void **state)
{
	struct est_point p[3] = {
		{ 100, 1, -1, 0, false },  /* unmeasured */
		{ 50, 0, -1, 0, true },    /* no issue cycles */
		{ 0, 0, -1, 1, true },
	};
	struct est_result r;

	(void)state;
	freq_estimate_class(p, 3, NULL, &r, NULL);
	assert_int_equal(r.method, EST_NONE);
	assert_near(r.f, 0, 0);
}

/* Unusable points split segments: windows never span them. */
static void estimator_unusable_splits_windows(void **state)
{
	struct est_point p[5] = {
		{ 100, 1, -1, 0, true }, { 100, 1, -1, 0, true },
		{ 9000, 1, -1, 0, false },   /* a call: its samples are not its own */
		{ 100, 1, -1, 0, true }, { 100, 1, -1, 0, true },
	};
	struct est_result r;
	unsigned char used[5];

	(void)state;
	freq_estimate_class(p, 5, NULL, &r, used);
	assert_near(r.f, 100, 1e-9);
	assert_int_equal(used[2], 0);
}

/* Poisson-like noise on many windows: the estimate stays within a few percent. */
static void estimator_noisy_many_windows(void **state)
{
	struct est_point p[200];
	unsigned seed = 12345;
	struct est_result r;
	const double f = 500;

	(void)state;
	for (size_t i = 0; i < 200; i++) {
		double noise;

		seed = seed * 1103515245u + 12345u;
		noise = 1 + ((double)(seed >> 16 & 0xffff) / 65535.0 - 0.5) * 0.08;  /* +-4% */
		p[i].m = 1 + (double)(i % 3);
		/* stalls in every other segment of 20 */
		p[i].s = f * p[i].m * noise * (i % 40 < 20 && i % 10 == 3 ? 2.5 : 1);
		p[i].seg = (unsigned)(i / 20);
		p[i].producer = -1;
		p[i].usable = true;
	}
	freq_estimate_class(p, 200, NULL, &r, NULL);
	printf("# noisy: f %.1f (true %.0f), %u windows, %u used, spread %.2f\n", r.f, f, r.windows,
	       r.used, r.spread);
	assert_rel(r.f, f, 0.05);
}

/*
 * The paper's fine windows and dependence windows (6.1.3, "fourth"): i
 * waits 4 cycles for j; k, between them, stalls 3 cycles, which i's wait
 * then overlaps: S_i / M_i is a quarter of F, but the window (j, i] keeps
 * the static latency.
 */
static void estimator_dependence_windows(void **state)
{
	struct est_params par = EST_PARAMS_INIT;
	struct est_point p[4] = {
		{ 100, 1, -1, 0, true },   /* j */
		{ 400, 1, -1, 0, true },   /* k: 3 cycles of dynamic stall */
		{ 100, 4, 0, 0, true },    /* i: M 4 waiting for j, one cycle left */
		{ 100, 1, -1, 1, true },
	};
	struct est_result r;

	(void)state;
	par.window = 0;
	par.pairs = true;
	par.dep_windows = true;
	freq_estimate_class(p, 4, &par, &r, NULL);
	assert_int_equal(r.method, EST_CLUSTER);
	assert_near(r.f, 100, 1e-9);
	/* without them, the group of i alone (25) holds most of the class's cycles */
	par.dep_windows = false;
	freq_estimate_class(p, 4, &par, &r, NULL);
	assert_near(r.f, 25, 1e-9);
}

/* ---- propagation ------------------------------------------------------------------------- */

struct shape {
	size_t n_nodes, n_arcs, n_classes;
	uint32_t from[16], to[16];
	int node_cls[16], arc_cls[16];
};

static void shape_graph(const struct shape *s, struct fgraph *g)
{
	g->n_nodes = s->n_nodes;
	g->n_arcs = s->n_arcs;
	g->n_classes = s->n_classes;
	g->from = s->from;
	g->to = s->to;
	g->node_cls = s->node_cls;
	g->arc_cls = s->arc_cls;
	g->entry = 0;
	g->exit = (uint32_t)s->n_nodes - 1;
	g->in_constraints = true;
}

/*
 * if/else: 0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> EXIT(4).  Classes as cycle
 * equivalence gives them: {0, 3, 4, 0->? no: the entry, the join, the
 * exit and 3->4} = 0, {1, 0->1, 1->3} = 1, {2, 0->2, 2->3} = 2.
 */
static const struct shape diamond = {
	5, 5, 3,
	{ 0, 0, 1, 2, 3 }, { 1, 2, 3, 3, 4 },
	{ 0, 1, 2, 0, 0 }, { 1, 2, 1, 2, 0 },
};

static void propagation_diamond(void **state)
{
	struct fgraph g;
	double val[3] = { 10, 3, 0 }, scale[3] = { 10, 3, 0 };
	unsigned char st[3] = { FREQ_ESTIMATED, FREQ_ESTIMATED, FREQ_UNKNOWN };

	(void)state;
	shape_graph(&diamond, &g);
	assert_int_equal(freq_propagate(&g, val, st, scale, NULL), 1);
	assert_int_equal(st[2], FREQ_PROPAGATED);
	assert_near(val[2], 7, 1e-12);
	assert_near(scale[2], 10, 1e-12);   /* a difference of values up to 10 */
}

/*
 * Errors carried through propagation: the arm solved from the whole and
 * the other arm gets their absolute errors added as independent
 * deviations, relative to itself, and the shares resting on the period
 * added as they are (a difference of two values that both rest on it
 * rests on it as much; one of a measured whole, more).
 */
static void propagation_carries_errors(void **state)
{
	struct fgraph g;
	double val[3] = { 100, 60, 0 }, err[3] = { 0.02, 0.05, -1 }, share[3] = { 1, 1, 0 };
	unsigned char st[3] = { FREQ_ESTIMATED, FREQ_ESTIMATED, FREQ_UNKNOWN };

	(void)state;
	shape_graph(&diamond, &g);
	assert_int_equal(freq_propagate(&g, val, st, NULL, &(struct freq_errors){ err, share }), 1);
	assert_near(val[2], 40, 1e-12);
	/* sqrt((100 x 0.02)^2 + (60 x 0.05)^2) / 40 */
	assert_near(err[2], sqrt(13) / 40, 1e-12);
	assert_near(share[2], 1, 1e-12);
	assert_int_equal(calc_conf_of(err[2]), CALC_CONF_MEDIUM);

	/* the whole counted (no share of the period), the arm estimated */
	val[2] = 0, err[2] = -1, share[0] = 0, st[2] = FREQ_UNKNOWN;
	freq_propagate(&g, val, st, NULL, &(struct freq_errors){ err, share });
	assert_near(share[2], -60.0 / 40, 1e-12);
	assert_near(calc_err_total(err[2], share[2], 0.1), hypot(sqrt(13) / 40, 0.15), 1e-12);

	/* an arm above the whole: the other is clamped at 0, with no bound */
	val[1] = 130, val[2] = 0, err[2] = -1, st[2] = FREQ_UNKNOWN;
	freq_propagate(&g, val, st, NULL, &(struct freq_errors){ err, NULL });
	assert_near(val[2], 0, 0);
	assert_near(err[2], FREQ_ERR_UNBOUNDED, 0);
	assert_int_equal(calc_conf_of(err[2]), CALC_CONF_LOW);

	/* a value made of one with no error (< 0) has no bound */
	val[1] = 60, val[2] = 0, err[1] = -1, err[2] = -1, st[2] = FREQ_UNKNOWN;
	freq_propagate(&g, val, st, NULL, &(struct freq_errors){ err, NULL });
	assert_near(val[2], 40, 1e-12);
	assert_near(err[2], FREQ_ERR_UNBOUNDED, 0);
}

/* The one mapping from a relative error to a level, and the period's part. */
static void confidence_from_error(void **state)
{
	(void)state;
	assert_int_equal(calc_conf_of(0), CALC_CONF_HIGH);
	assert_int_equal(calc_conf_of(CALC_ERR_HIGH), CALC_CONF_HIGH);
	assert_int_equal(calc_conf_of(CALC_ERR_HIGH * 1.01), CALC_CONF_MEDIUM);
	assert_int_equal(calc_conf_of(CALC_ERR_MEDIUM), CALC_CONF_MEDIUM);
	assert_int_equal(calc_conf_of(CALC_ERR_MEDIUM * 1.01), CALC_CONF_LOW);
	assert_int_equal(calc_conf_of(CALC_ERR_UNBOUNDED), CALC_CONF_LOW);
	assert_int_equal(calc_conf_of(-1), CALC_CONF_NONE);
	assert_int_equal(calc_conf_of(NAN), CALC_CONF_NONE);
	/* the levels keep their promise's order: high within 15% 19 times in 20 */
	assert_true(CALC_ERR_HIGH < CALC_ERR_MEDIUM && 2 * CALC_ERR_HIGH <= 0.15);
	/* independent deviations add in quadrature; the period's share scales its error */
	assert_near(calc_err_add(0.03, 0.04), 0.05, 1e-12);
	assert_near(calc_err_total(0.03, 1, 0.04), 0.05, 1e-12);
	assert_near(calc_err_total(0.03, 0, 1.0), 0.03, 1e-12);
	assert_near(calc_err_total(0.03, -2, 0.02), 0.05, 1e-12);
	assert_near(calc_err_total(-1, 1, 0.1), -1, 0);
	assert_near(calc_err_add(INFINITY, 0), CALC_ERR_UNBOUNDED, 0);
	/* an estimate resting on a clock of unknown error (an add-immediate loop) is low */
	assert_int_equal(calc_conf_of(calc_err_total(0.01, 1, CALC_PERIOD_ERROR_ADDLOOP)), CALC_CONF_LOW);
	assert_int_equal(calc_conf_of(calc_err_total(0.01, 0, CALC_PERIOD_ERROR_ADDLOOP)), CALC_CONF_HIGH);
}

/* No negative estimates: an arm estimated above the whole gives the other arm 0. */
static void propagation_never_negative(void **state)
{
	struct fgraph g;
	double val[3] = { 10, 13, 0 };
	unsigned char st[3] = { FREQ_ESTIMATED, FREQ_ESTIMATED, FREQ_UNKNOWN };

	(void)state;
	shape_graph(&diamond, &g);
	freq_propagate(&g, val, st, NULL, NULL);
	assert_near(val[2], 0, 0);
}

/*
 * A loop: 0 -> 1 (header), 1 -> 2 (body), 2 -> 1 (back), 1 -> 3 (exit
 * block), 3 -> EXIT(4).  Classes: {0, 3, 4, 0->1, 1->3, 3->4} = 0,
 * {1} = 1, {2, 1->2, 2->1} = 2.
 */
static const struct shape loop = {
	5, 5, 3,
	{ 0, 1, 2, 1, 3 }, { 1, 2, 1, 3, 4 },
	{ 0, 1, 2, 0, 0 }, { 0, 2, 2, 0, 0 },
};

static void propagation_loop_body(void **state)
{
	struct fgraph g;
	double val[3] = { 5, 105, 0 };
	unsigned char st[3] = { FREQ_ESTIMATED, FREQ_ESTIMATED, FREQ_UNKNOWN };

	(void)state;
	shape_graph(&loop, &g);
	freq_propagate(&g, val, st, NULL, NULL);
	assert_near(val[2], 100, 1e-12);

	/* from the body and the exit, the header */
	val[0] = 5, val[1] = 0, val[2] = 100;
	st[0] = st[2] = FREQ_ESTIMATED;
	st[1] = FREQ_UNKNOWN;
	freq_propagate(&g, val, st, NULL, NULL);
	assert_near(val[1], 105, 1e-12);
}

/* Propagation through a long chain of diamonds takes one pass (linear time). */
static void propagation_long_chain(void **state)
{
	const size_t k = 20000;  /* diamonds */
	size_t nodes = 3 * k + 2, arcs = 4 * k + 1, nc = 2 * k + 1;
	uint32_t *from = xmalloc(arcs * sizeof(*from)), *to = xmalloc(arcs * sizeof(*to));
	int *ncls = xmalloc(nodes * sizeof(*ncls)), *acls = xmalloc(arcs * sizeof(*acls));
	double *val = xcalloc(nc, sizeof(*val));
	unsigned char *st = xcalloc(nc, 1);
	struct fgraph g = { nodes, arcs, nc, from, to, ncls, acls, 0, (uint32_t)(nodes - 1), true };
	size_t a = 0;

	(void)state;
	/* node 3d: the fork of diamond d, 3d+1 / 3d+2 its arms, 3d+3 the next fork */
	for (size_t d = 0; d < k; d++) {
		uint32_t f = (uint32_t)(3 * d);

		ncls[f] = 0;
		ncls[f + 1] = (int)(1 + 2 * d);
		ncls[f + 2] = (int)(2 + 2 * d);
		from[a] = f, to[a] = f + 1, acls[a++] = (int)(1 + 2 * d);
		from[a] = f, to[a] = f + 2, acls[a++] = (int)(2 + 2 * d);
		from[a] = f + 1, to[a] = f + 3, acls[a++] = (int)(1 + 2 * d);
		from[a] = f + 2, to[a] = f + 3, acls[a++] = (int)(2 + 2 * d);
		val[1 + 2 * d] = (double)(d % 7);
		st[1 + 2 * d] = FREQ_ESTIMATED;
	}
	ncls[3 * k] = 0;
	ncls[nodes - 1] = 0;
	from[a] = (uint32_t)(3 * k), to[a] = (uint32_t)(nodes - 1), acls[a++] = 0;
	val[0] = 10;
	st[0] = FREQ_ESTIMATED;
	assert_int_equal(freq_propagate(&g, val, st, NULL, NULL), k);
	for (size_t d = 0; d < k; d++)
		assert_near(val[2 + 2 * d], 10 - (double)(d % 7), 1e-9);
	free(from);
	free(to);
	free(ncls);
	free(acls);
	free(val);
	free(st);
}

/* With missing edges only out-constraints hold: nothing is learnt from inflows. */
static void propagation_missing_edges(void **state)
{
	struct fgraph g;
	double val[3] = { 5, 0, 100 };
	unsigned char st[3] = { FREQ_ESTIMATED, FREQ_UNKNOWN, FREQ_ESTIMATED };

	(void)state;
	shape_graph(&loop, &g);
	g.in_constraints = false;
	freq_propagate(&g, val, st, NULL, NULL);
	/* the header = its outflow: the body's 100 and the exit's 5 */
	assert_int_equal(st[1], FREQ_PROPAGATED);
	assert_near(val[1], 105, 1e-12);
}

/* ---- the flow correction ------------------------------------------------------------------- */

/* ---- repair ------------------------------------------------------------------------------ */

/*
 * A loop around a hard-to-predict branch (wl-branchy): 0 entry -> 1 header,
 * 1 -> 2 | 3 (the arms), 2, 3 -> 4 (the latch), 4 -> 1 back, 4 -> EXIT(5).
 * Classes: {0, 5, 0->1, 4->5} = 0, {1, 4} = 1, {2, 1->2, 2->4} = 2,
 * {3, 1->3, 3->4} = 3, {4->1} = 4.
 */
static const struct shape branchy_shape = {
	6, 7, 5,
	{ 0, 1, 1, 2, 3, 4, 4 }, { 1, 2, 3, 4, 4, 1, 5 },
	{ 0, 1, 2, 3, 1, 0 }, { 0, 2, 3, 2, 3, 4, 0 },
};

/* The arms, inflated by the mispredicts at their heads, come down to the header. */
static void repair_branch_arms(void **state)
{
	struct fgraph g;
	double val[5] = { 1, 100, 150, 130, 0 }, w[5] = { 10, 1000, 15, 13, 0 };
	double susp[5] = { 0, 0.1, 0.9, 0.9, 0 };
	unsigned char ok[5] = { 1, 1, 1, 1, 0 }, changed[5] = { 0 };

	(void)state;
	shape_graph(&branchy_shape, &g);
	assert_int_equal(freq_repair(&g, val, ok, w, susp, 0.15, changed), 2);
	assert_near(val[1], 100, 0);
	assert_near(val[2] + val[3], 100, 1e-9);
	assert_near(val[2] / val[3], 150.0 / 130.0, 1e-9);
	assert_true(changed[2] && changed[3] && !changed[1] && !changed[0]);
}

/*
 * A chain of 20000 diamonds (as propagation_long_chain): every pair of arms,
 * suspect and estimated at twice the fork, comes down to it.  Quadratic
 * work would take minutes here.
 */
static void repair_long_chain(void **state)
{
	const size_t k = 20000;
	size_t nodes = 3 * k + 2, arcs = 4 * k + 1, nc = 2 * k + 1;
	uint32_t *from = xmalloc(arcs * sizeof(*from)), *to = xmalloc(arcs * sizeof(*to));
	int *ncls = xmalloc(nodes * sizeof(*ncls)), *acls = xmalloc(arcs * sizeof(*acls));
	double *val = xcalloc(nc, sizeof(*val)), *w = xcalloc(nc, sizeof(*w));
	double *susp = xcalloc(nc, sizeof(*susp));
	unsigned char *ok = xcalloc(nc, 1), *changed = xcalloc(nc, 1);
	struct fgraph g = { nodes, arcs, nc, from, to, ncls, acls, 0, (uint32_t)(nodes - 1), true };
	size_t a = 0;

	(void)state;
	for (size_t d = 0; d < k; d++) {
		uint32_t f = (uint32_t)(3 * d);

		ncls[f] = 0;
		ncls[f + 1] = (int)(1 + 2 * d);
		ncls[f + 2] = (int)(2 + 2 * d);
		from[a] = f, to[a] = f + 1, acls[a++] = (int)(1 + 2 * d);
		from[a] = f, to[a] = f + 2, acls[a++] = (int)(2 + 2 * d);
		from[a] = f + 1, to[a] = f + 3, acls[a++] = (int)(1 + 2 * d);
		from[a] = f + 2, to[a] = f + 3, acls[a++] = (int)(2 + 2 * d);
		for (int arm = 1; arm <= 2; arm++) {
			val[arm + 2 * d] = arm == 1 ? 12 : 8;
			w[arm + 2 * d] = 1;
			susp[arm + 2 * d] = 0.9;
			ok[arm + 2 * d] = 1;
		}
	}
	ncls[3 * k] = 0;
	ncls[nodes - 1] = 0;
	from[a] = (uint32_t)(3 * k), to[a] = (uint32_t)(nodes - 1), acls[a++] = 0;
	val[0] = 10;
	w[0] = 1000;
	ok[0] = 1;
	assert_int_equal(freq_repair(&g, val, ok, w, susp, 0.15, changed), 2 * k);
	for (size_t d = 0; d < k; d++) {
		assert_near(val[1 + 2 * d], 6, 1e-9);
		assert_near(val[2 + 2 * d], 4, 1e-9);
	}
	free(from);
	free(to);
	free(ncls);
	free(acls);
	free(val);
	free(w);
	free(susp);
	free(ok);
	free(changed);
}

/* Nothing moves when the arms are not suspect, the header is lighter, or within tolerance. */
static void repair_leaves_alone(void **state)
{
	struct fgraph g;
	double val[5], w[5] = { 10, 1000, 15, 13, 0 }, susp[5] = { 0, 0.1, 0.9, 0.9, 0 };
	unsigned char ok[5] = { 1, 1, 1, 1, 0 }, changed[5] = { 0 };
	double clean[5] = { 0, 0.1, 0.2, 0.2, 0 }, heavy[5] = { 10, 10, 1500, 1300, 0 };
	const double v0[5] = { 1, 100, 150, 130, 0 };

	(void)state;
	shape_graph(&branchy_shape, &g);
	memcpy(val, v0, sizeof(val));
	assert_int_equal(freq_repair(&g, val, ok, w, clean, 0.15, changed), 0);
	assert_int_equal(freq_repair(&g, val, ok, heavy, susp, 0.15, changed), 0);
	val[2] = 55, val[3] = 55;
	assert_int_equal(freq_repair(&g, val, ok, w, susp, 0.15, changed), 0);
	assert_near(val[2], 55, 0);
	/* an arm without an estimate: nothing to compare */
	memcpy(val, v0, sizeof(val));
	ok[3] = 0;
	assert_int_equal(freq_repair(&g, val, ok, w, susp, 0.15, changed), 0);
	assert_near(val[2], 150, 0);
}

static void conserved(size_t n_nodes, size_t n_arcs, const uint32_t *from, const uint32_t *to,
		      const double *x, double tol)
{
	double *bal = xcalloc(n_nodes, sizeof(*bal));

	for (size_t k = 0; k < n_arcs; k++) {
		bal[from[k]] -= x[k];
		bal[to[k]] += x[k];
	}
	for (size_t v = 0; v < n_nodes; v++)
		assert_true(fabs(bal[v]) <= tol);
	free(bal);
}

/* A cycle whose arcs disagree: the cheap (uncertain) arc gives way. */
static void flow_cycle_cheap_arc_moves(void **state)
{
	uint32_t from[3] = { 0, 1, 2 }, to[3] = { 1, 2, 0 };
	double est[3] = { 100, 100, 40 }, w[3] = { 1, 1, 0.01 }, x[3];
	struct flow_net net = { 3, 3, from, to, est, w, 0 };

	(void)state;
	assert_int_equal(flow_correct(&net, x), 0);
	assert_near(x[0], 100, 1e-3);
	assert_near(x[1], 100, 1e-3);
	assert_near(x[2], 100, 1e-3);
}

/* The diamond with an inconsistent split: the arms are adjusted, the total kept. */
static void flow_diamond(void **state)
{
	/* split nodes: in/out per block; block arcs 0..3, edges, and exit->entry */
	uint32_t from[] = { 0, 2, 4, 6, 1, 1, 3, 5, 7, 8 };
	uint32_t to[] = { 1, 3, 5, 7, 2, 4, 6, 6, 8, 0 };
	double est[] = { 10, 3, 9, 10, 3, 9, 3, 9, 10, 10 };
	double w[] = { 1, 0.1, 0.1, 1, 0.1, 0.1, 0.1, 0.1, 1, 1 }, x[10];
	struct flow_net net = { 9, 10, from, to, est, w, 0 };

	(void)state;
	assert_int_equal(flow_correct(&net, x), 0);
	conserved(9, 10, from, to, x, 1e-6);
	assert_near(x[0], 10, 1e-6);
	assert_near(x[1] + x[2], 10, 1e-6);
}

/* Random strongly connected graphs with random estimates: always conserved. */
static void flow_random_graphs_conserve(void **state)
{
	unsigned seed = 7;

	(void)state;
	for (int t = 0; t < 50; t++) {
		size_t n = 3 + (size_t)t % 20, m = 0;
		uint32_t from[128], to[128];
		double est[128], w[128], x[128];
		struct flow_net net;

		/* a ring makes it strongly connected; then random chords */
		for (size_t v = 0; v < n; v++) {
			from[m] = (uint32_t)v;
			to[m++] = (uint32_t)((v + 1) % n);
		}
		while (m < 3 * n) {
			seed = seed * 1103515245u + 12345u;
			from[m] = (uint32_t)((seed >> 8) % n);
			seed = seed * 1103515245u + 12345u;
			to[m] = (uint32_t)((seed >> 8) % n);
			if (from[m] != to[m])
				m++;
		}
		for (size_t k = 0; k < m; k++) {
			seed = seed * 1103515245u + 12345u;
			est[k] = (double)((seed >> 8) % 1000) / 10.0;
			w[k] = k % 4 == 0 ? 0 : 1.0 / (1 + est[k]);
		}
		net = (struct flow_net){ n, m, from, to, est, w, 0 };
		assert_int_equal(flow_correct(&net, x), 0);
		conserved(n, m, from, to, x, 1e-6 * 1000);
		for (size_t k = 0; k < m; k++)
			assert_true(x[k] >= 0);
	}
}

/* A correction beyond the allowed factor is refused. */
static void flow_bounded_refuses(void **state)
{
	uint32_t from[2] = { 0, 1 }, to[2] = { 1, 0 };
	double est[2] = { 100, 10 }, w[2] = { 1, 1 }, x[2];
	struct flow_net net = { 2, 2, from, to, est, w, 2.0 };

	(void)state;
	assert_int_equal(flow_correct(&net, x), -1);
	net.bound = 0;
	assert_int_equal(flow_correct(&net, x), 0);
	assert_near(x[0], x[1], 1e-6);
}

/* ---- machine code: skid and culprits ---------------------------------------------------------- */

#define BASE 0x1000

static void build_cfg(const uint8_t *code, size_t len, struct cfg *cfg)
{
	struct decoder *d = decoder_new(ARCH_X86_64);
	struct insn *v = NULL;
	size_t n = 0, alloc = 0;

	assert_non_null(d);
	decode_range(d, code, len, BASE, &v, &n, &alloc);
	decoder_free(d);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(v[i].kind, INSN_INVALID);
	cfg_build(cfg, v, n, BASE, BASE + len, ARCH_X86_64, NULL);
	cfg_classify(cfg);
}

/*
 * 0x1000  mov eax, 1            block 0 (entry)
 * 0x1005  call 0x2000           block 1 (loop head; the call does not end it)
 * 0x100a  add eax, 2
 * 0x100d  cmp eax, 10
 * 0x1010  jne 0x1005            (self-loop)
 * 0x1012  ret                   block 2
 */
static const uint8_t call_loop[] = {
	0xb8, 0x01, 0x00, 0x00, 0x00,
	0xe8, 0xf6, 0x0f, 0x00, 0x00,
	0x83, 0xc0, 0x02,
	0x83, 0xf8, 0x0a,
	0x75, 0xf3,
	0xc3,
};

static long insn_index(const struct cfg *cfg, uint64_t addr)
{
	long i = cfg_insn_at(cfg, addr);

	assert_true(i >= 0);
	return i;
}

static void skid_moves_samples_back(void **state)
{
	struct cfg cfg;
	double rec[6] = { 0 }, out[6], *ew;
	unsigned flags[6];
	double gone;

	(void)state;
	build_cfg(call_loop, sizeof(call_loop), &cfg);
	assert_int_equal(cfg.n_insns, 6);
	rec[insn_index(&cfg, 0x1000)] = 7;    /* measured the callers' call */
	rec[insn_index(&cfg, 0x1005)] = 40;   /* head: from block 0 or from the jne */
	rec[insn_index(&cfg, 0x100a)] = 500;  /* after the call: the callee's return */
	rec[insn_index(&cfg, 0x100d)] = 30;   /* measures the add */
	rec[insn_index(&cfg, 0x1010)] = 20;   /* measures the cmp */
	rec[insn_index(&cfg, 0x1012)] = 4;    /* head of block 2: measures the jne */

	/* edge weights: block 0 -> 1 once, the self-loop 9 times, 1 invocation */
	ew = xcalloc(cfg.n_edges, sizeof(*ew));
	for (size_t e = 0; e < cfg.n_edges; e++)
		ew[e] = cfg.edges[e].from == cfg.edges[e].to ? 9 : 1;
	gone = skid_attribute(&cfg, rec, ew, 1, 1, out, flags);
	assert_near(out[insn_index(&cfg, 0x100a)], 30, 1e-12);   /* add */
	assert_near(out[insn_index(&cfg, 0x100d)], 20, 1e-12);   /* cmp */
	assert_near(out[insn_index(&cfg, 0x1010)], 4 + 36, 1e-12); /* jne: block 2's, 9/10 of the head's */
	assert_near(out[insn_index(&cfg, 0x1000)], 4, 1e-12);    /* mov: 1/10 of the head's */
	assert_near(gone, 7 + 500, 1e-12);
	assert_true(flags[insn_index(&cfg, 0x1005)] & SKID_UNMEASURED);   /* the call */
	assert_true(flags[insn_index(&cfg, 0x1012)] & SKID_UNMEASURED);   /* the ret */
	assert_true(flags[insn_index(&cfg, 0x100a)] & SKID_AFTER_CALL);
	assert_true(flags[insn_index(&cfg, 0x1000)] & SKID_ENTRY);

	/* skid 0 (precise events): nothing moves */
	gone = skid_attribute(&cfg, rec, ew, 1, 0, out, flags);
	assert_near(gone, 0, 0);
	assert_near(out[insn_index(&cfg, 0x100a)], 500, 0);
	free(ew);
	cfg_release(&cfg);
}

/*
 * 0x1000  mov rax, qword ptr [rdi]     a load
 * 0x1003  add rcx, rax                 reads the load's result
 * 0x1006  mov qword ptr [rsi], rcx     a store
 * 0x1009  imul rdx, rdx
 * 0x100d  imul r8, r8                  a multiply after a multiply
 * 0x1011  cmp rcx, 5
 * 0x1015  jne 0x1000                   (self-loop)
 * 0x1017  xor edx, edx                 block 2: after a conditional branch
 * 0x1019  div r9
 * 0x101c  ret
 */
static const uint8_t mem_loop[] = {
	0x48, 0x8b, 0x07,
	0x48, 0x01, 0xc1,
	0x48, 0x89, 0x0e,
	0x48, 0x0f, 0xaf, 0xd2,
	0x4d, 0x0f, 0xaf, 0xc0,
	0x48, 0x83, 0xf9, 0x05,
	0x75, 0xe9,
	0x31, 0xd2,
	0x49, 0xf7, 0xf1,
	0xc3,
};

struct culprit_env {
	struct cfg cfg;
	struct block_schedule sched[4];
	double bf[4], ef[8];
	struct culprit_ctx cx;
};

static void culprit_env(struct culprit_env *e, const uint8_t *code, size_t len)
{
	const struct cpu_model *m = cpu_model_by_name("znver4");

	memset(e, 0, sizeof(*e));
	build_cfg(code, len, &e->cfg);
	assert_true(e->cfg.n_blocks <= 4 && e->cfg.n_edges <= 8);
	for (size_t b = 0; b + 1 < e->cfg.n_blocks; b++) {
		const struct cfg_block *blk = &e->cfg.blocks[b];

		block_schedule_init(&e->sched[b]);
		assert_int_equal(schedule_block(m, &e->cfg.insns[blk->first], blk->n_insns, NULL,
						&e->sched[b]), 0);
		e->bf[b] = 100;
	}
	for (size_t k = 0; k < e->cfg.n_edges; k++)
		e->ef[k] = 50;
	e->cx.cfg = &e->cfg;
	e->cx.model = m;
	e->cx.sched = e->sched;
	e->cx.block_freq = e->bf;
	e->cx.edge_freq = e->ef;
	e->cx.time_period = 100000;
}

static void culprit_env_release(struct culprit_env *e)
{
	for (size_t b = 0; b + 1 < e->cfg.n_blocks; b++)
		block_schedule_release(&e->sched[b]);
	cfg_release(&e->cfg);
}

static unsigned culprits_at(struct culprit_env *e, uint64_t addr, uint64_t *cause, unsigned want)
{
	struct calc_cause *v = NULL;
	size_t n = 0, alloc = 0;
	unsigned mask = culprit_find(&e->cx, (size_t)insn_index(&e->cfg, addr), 20, 100, &v, &n,
				     &alloc, NULL);

	if (cause) {
		*cause = 0;
		for (size_t k = 0; k < n; k++)
			if (v[k].what & (1u << want))
				*cause = v[k].addr;
	}
	free(v);
	return mask;
}

#define HAS(mask, k) ((mask) & (1u << (k)))

static void culprit_rules(void **state)
{
	struct culprit_env e;
	uint64_t cause;
	unsigned m;

	(void)state;
	culprit_env(&e, mem_loop, sizeof(mem_loop));
	/* the load: D-cache and DTLB, itself the culprit */
	m = culprits_at(&e, 0x1000, &cause, CULPRIT_DCACHE);
	assert_true(HAS(m, CULPRIT_DCACHE) && HAS(m, CULPRIT_DTLB));
	assert_int_equal(cause, 0x1000);
	/* the head of a self-loop entered by a jne: branch mispredict, the jne is the culprit */
	m = culprits_at(&e, 0x1000, &cause, CULPRIT_BRANCH);
	assert_true(HAS(m, CULPRIT_BRANCH));
	assert_int_equal(cause, 0x1015);
	/* the add reads the loaded register: D-cache through its producer */
	m = culprits_at(&e, 0x1003, &cause, CULPRIT_DCACHE);
	assert_true(HAS(m, CULPRIT_DCACHE));
	assert_int_equal(cause, 0x1000);
	assert_false(HAS(m, CULPRIT_BRANCH));
	/* the store: store queue and DTLB, not D-cache */
	m = culprits_at(&e, 0x1006, &cause, CULPRIT_STORE_BUF);
	assert_true(HAS(m, CULPRIT_STORE_BUF) && HAS(m, CULPRIT_DTLB));
	assert_false(HAS(m, CULPRIT_DCACHE));
	assert_int_equal(cause, 0x1006);
	/* a multiply after a multiply */
	m = culprits_at(&e, 0x100d, &cause, CULPRIT_MUL);
	assert_true(HAS(m, CULPRIT_MUL));
	assert_int_equal(cause, 0x1009);
	/* nothing explains a stall of the compare (no load, no line start) */
	m = culprits_at(&e, 0x1011, NULL, 0);
	assert_int_equal(m, 1u << CULPRIT_UNEXPLAINED);
	/* the divide: divider (value-dependent latency); after a conditional branch */
	m = culprits_at(&e, 0x1019, &cause, CULPRIT_DIV);
	assert_true(HAS(m, CULPRIT_DIV));
	assert_int_equal(cause, 0x1019);
	m = culprits_at(&e, 0x1017, &cause, CULPRIT_BRANCH);
	assert_true(HAS(m, CULPRIT_BRANCH));
	assert_int_equal(cause, 0x1015);
	culprit_env_release(&e);
}

/* I-cache: only where the bytes reach a new 64-byte line. */
static void culprit_icache_lines(void **state)
{
	uint8_t code[80];
	struct culprit_env e;
	unsigned m;

	(void)state;
	/* 0x1000: 60 one-byte nops... then add eax,1 at 0x103c..0x103e, add at 0x103f (crosses) */
	memset(code, 0x90, sizeof(code));
	code[60] = 0x83, code[61] = 0xc0, code[62] = 0x01;   /* 0x103c add eax, 1 */
	code[63] = 0x83, code[64] = 0xc0, code[65] = 0x01;   /* 0x103f add eax, 1: reaches 0x1040 */
	code[66] = 0x83, code[67] = 0xc0, code[68] = 0x01;   /* 0x1042 */
	code[79] = 0xc3;
	culprit_env(&e, code, sizeof(code));
	m = culprits_at(&e, 0x103c, NULL, 0);
	assert_false(HAS(m, CULPRIT_ICACHE));
	m = culprits_at(&e, 0x103f, NULL, 0);
	assert_true(HAS(m, CULPRIT_ICACHE));
	m = culprits_at(&e, 0x1042, NULL, 0);
	assert_false(HAS(m, CULPRIT_ICACHE));
	culprit_env_release(&e);
}

/* A dmiss event that was collected and saw nothing rules D-cache out. */
static void culprit_bounded_by_events(void **state)
{
	struct culprit_env e;
	double dmiss[16] = { 0 };
	unsigned m;

	(void)state;
	culprit_env(&e, mem_loop, sizeof(mem_loop));
	e.cx.ev[EVENT_DMISS] = dmiss;
	e.cx.ev_period[EVENT_DMISS] = 10;   /* 10 misses per sample: at most ~10 misses in 1e7 execs */
	m = culprits_at(&e, 0x1000, NULL, 0);
	assert_false(HAS(m, CULPRIT_DCACHE));
	assert_true(HAS(m, CULPRIT_DTLB));
	/* with many dmiss samples it stays a culprit */
	dmiss[insn_index(&e.cfg, 0x1000)] = 1e6;
	m = culprits_at(&e, 0x1000, NULL, 0);
	assert_true(HAS(m, CULPRIT_DCACHE));
	culprit_env_release(&e);
}

/* ---- the whole analysis on a synthetic listing ------------------------------------------------ */

/*
 * 0x1000  xor eax, eax           entry
 * 0x1002  imul rax, rsi          loop: 3-cycle multiply, then the add
 * 0x1006  add rax, rcx
 * 0x1009  dec rdi
 * 0x100c  jne 0x1002
 * 0x100e  ret
 */
static const uint8_t mul_loop[] = {
	0x31, 0xc0,
	0x48, 0x0f, 0xaf, 0xc6,
	0x48, 0x01, 0xc8,
	0x48, 0xff, 0xcf,
	0x75, 0xf4,
	0xc3,
};

struct synth {
	struct image img;
	struct proc proc;
	struct epoch_meta meta;
	uint64_t instr_period;   /* > 0: also samples of retired instructions, this period */
};

/* The listing of code, without samples (synth_calc fills them). */
static void synth_listing(struct synth *sy, struct calc *c, const uint8_t *code, size_t len)
{
	struct listing *l = &c->list;
	struct epoch_event *ev;
	uint64_t instr_period = sy->instr_period;

	memset(sy, 0, sizeof(*sy));
	memset(c, 0, sizeof(*c));
	sy->instr_period = instr_period;
	sy->img.rec.path = (char *)"/synthetic/prog";
	sy->img.base = "prog";
	sy->proc = (struct proc){ BASE, BASE + len, "mul_loop", "mul_loop", 0, 0, 0 };
	epoch_meta_init(&sy->meta);
	sy->meta.cpu_vendor = xstrdup("AuthenticAMD");
	sy->meta.cpu_family = 25;
	sy->meta.cpu_model_id = 17;
	sy->meta.cpu_mhz = 1000;
	ev = epoch_meta_add_event(&sy->meta, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;        /* ns: 100000 cycles a sample at 1000 MHz */
	ev->period_in_ns = true;

	l->img = &sy->img;
	l->ref.proc = &sy->proc;
	l->events[0] = EVENT_CYCLES;
	l->n_events = 1;
	if (instr_period) {
		ev = epoch_meta_add_event(&sy->meta, EVENT_INSTRUCTIONS);
		ev->used = EVENT_INSTRUCTIONS;
		ev->period = instr_period;
		l->events[l->n_events++] = EVENT_INSTRUCTIONS;
		ev = epoch_meta_event(&sy->meta, EVENT_CYCLES);
	}
	build_cfg(code, len, &l->cfg);
	l->n_insns = l->cfg.n_insns;
	l->insns = xcalloc(l->n_insns, sizeof(*l->insns));
	for (size_t i = 0; i < l->n_insns; i++) {
		l->insns[i].insn = &l->cfg.insns[i];
		l->insns[i].block = cfg_block_at(&l->cfg, l->cfg.insns[i].addr);
	}
}

/* A listing of code with samples: the time of each instruction is F x M, recorded one later. */
static void synth_calc(struct synth *sy, struct calc *c, const uint8_t *code, size_t len,
		       double f_loop, const struct calc_opts *o, uint64_t stall_at, double stall)
{
	struct listing *l = &c->list;
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	const struct cpu_model *m = cpu_model_by_name("znver4");
	struct sched_entry loopent = { SCHED_ENTRY_LOOP, NULL, 0 };
	uint64_t instr_period = sy->instr_period;

	synth_listing(sy, c, code, len);
	/* the loop block in its steady state: samples F x M_i, recorded at i + 1 */
	{
		const struct cfg_block *blk = &l->cfg.blocks[1];

		assert_int_equal(schedule_block(m, &l->cfg.insns[blk->first], blk->n_insns, &loopent, &s), 0);
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			size_t at = blk->first + k + 1;
			uint64_t n = (uint64_t)llround(f_loop * s.insn[k].m);

			if (k + 1 == blk->n_insns)
				at = blk->first;     /* the jne's time lands on the loop head */
			if (l->cfg.insns[blk->first + k].addr == stall_at)
				n += (uint64_t)llround(f_loop * stall);
			l->insns[at].samples[EVENT_CYCLES] += n;
			l->totals[EVENT_CYCLES] += n;
			if (instr_period) {
				/* every execution retires it once: f x 1e5 cycles-per-sample executions */
				n = (uint64_t)llround(f_loop * 100000.0 / (double)instr_period);
				l->insns[at].samples[EVENT_INSTRUCTIONS] += n;
				l->totals[EVENT_INSTRUCTIONS] += n;
			}
		}
		block_schedule_release(&s);
	}
	assert_int_equal(calc_from_listing(c, &sy->meta, NULL, o), 0);
}

/*
 * A pointer chase: xor ecx, ecx; loop: add rcx, 1; mov rax, [rdi + rax*8];
 * cmp rdx, rcx; jne loop; ret.  Each load misses (500 cycles); the rest
 * retires in one burst of a cycle per iteration.  With the load's address
 * from the counter instead (mov rax, [rdi + rcx*8]), loads overlap: no
 * burst estimate.
 */
static const uint8_t chase_loop[] = {
	0x31, 0xc9,
	0x48, 0x83, 0xc1, 0x01,
	0x48, 0x8b, 0x04, 0xc7,
	0x48, 0x39, 0xca,
	0x75, 0xf3,
	0xc3,
};

static void burst_run(const uint8_t *code, size_t len, struct calc *c, struct synth *sy,
		      const struct calc_opts *o)
{
	struct listing *l = &c->list;
	/* recorded one instruction after the time they measure: add 1 x F at the load,
	 * the load's 504 x F at the cmp */
	static const double rec[] = { 0, 0, 100, 50400, 0, 0 };

	synth_listing(sy, c, code, len);
	for (size_t i = 0; i < l->n_insns; i++) {
		l->insns[i].samples[EVENT_CYCLES] = (uint64_t)rec[i];
		l->totals[EVENT_CYCLES] += (uint64_t)rec[i];
	}
	assert_int_equal(calc_from_listing(c, &sy->meta, NULL, o), 0);
}

static void calc_burst_estimate(void **state)
{
	struct synth sy = { 0 };
	struct calc c;
	struct calc_opts o = CALC_OPTS_INIT;
	struct est_params ep = EST_PARAMS_INIT;
	uint8_t indep[sizeof(chase_loop)];

	(void)state;
	burst_run(chase_loop, sizeof(chase_loop), &c, &sy, &o);
	assert_int_equal(c.blocks[1].est.method, EST_BURST);
	assert_rel(c.blocks[1].freq, 100, 0.01);
	assert_int_equal(c.blocks[1].conf, CALC_CONF_LOW);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	/* off: the load's ratio makes it 50 times too high */
	ep.burst = false;
	o.est = &ep;
	memset(&sy, 0, sizeof(sy));
	burst_run(chase_loop, sizeof(chase_loop), &c, &sy, &o);
	assert_int_not_equal(c.blocks[1].est.method, EST_BURST);
	assert_true(c.blocks[1].freq > 1000);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	/* not a chase: the address comes from the counter */
	memcpy(indep, chase_loop, sizeof(indep));
	indep[9] = 0xcf;
	o.est = NULL;
	memset(&sy, 0, sizeof(sy));
	burst_run(indep, sizeof(indep), &c, &sy, &o);
	assert_int_not_equal(c.blocks[1].est.method, EST_BURST);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/*
 * A loop of two blocks: xor ecx, ecx; head: movzx eax, [rdi + rcx];
 * imul r9, r9; cmp al, dl; jne out; add rcx, 1; imul r10, r10; jmp head;
 * out: ret.  Cold, the head block waits for its load; in the loop's steady
 * state the load ran ahead (its address is the counter) and the two
 * multiply chains set the pace.  (The latch jumps back unconditionally so
 * that flow knows the back edge: hot cycles follow known edges.)
 */
static const uint8_t cmp_loop[] = {
	0x31, 0xc9,
	0x0f, 0xb6, 0x04, 0x0f,
	0x4d, 0x0f, 0xaf, 0xc9,
	0x38, 0xd0,
	0x75, 0x0a,
	0x48, 0x83, 0xc1, 0x01,
	0x4d, 0x0f, 0xaf, 0xd2,
	0xeb, 0xea,
	0xc3,
};

static void calc_loop_of_blocks(void **state)
{
	struct synth sy = { 0 };
	struct calc c;
	struct calc_opts o = CALC_OPTS_INIT;
	struct listing *l = &c.list;
	struct block_schedule s = BLOCK_SCHEDULE_INIT, cold = BLOCK_SCHEDULE_INIT;
	struct sched_entry loopent = { SCHED_ENTRY_LOOP, NULL, 0 };
	/* the two multiply chains tie: which block's imul the steady state
	 * charges the third cycle to is the table's tie-break; on znver3's the
	 * latch's, whose samples pass 1 cannot mistake for entries from outside */
	const struct cpu_model *m = cpu_model_by_name("znver3");
	const double f = 200;
	(void)state;

	o.model = m;
	synth_listing(&sy, &c, cmp_loop, sizeof(cmp_loop));
	assert_int_equal(l->cfg.blocks[1].first, 1);
	assert_int_equal(l->cfg.blocks[2].first, 5);
	assert_int_equal(l->cfg.blocks[2].n_insns, 3);
	/* the core's time: the two blocks as one self-loop, F x M_i recorded at i + 1 */
	assert_int_equal(schedule_block(m, &l->cfg.insns[1], 7, &loopent, &s), 0);
	assert_int_equal(schedule_block(m, &l->cfg.insns[1], 4, NULL, &cold), 0);
	assert_true(cold.cycles > 2 * (s.insn[0].m + s.insn[1].m + s.insn[2].m + s.insn[3].m));
	for (size_t k = 0; k < 7; k++) {
		uint64_t n = (uint64_t)llround(f * s.insn[k].m);

		l->insns[k + 1 < 7 ? k + 2 : 1].samples[EVENT_CYCLES] += n;
		l->totals[EVENT_CYCLES] += n;
	}
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	assert_int_equal(c.blocks[1].sched.entry, SCHED_ENTRY_LOOP);
	assert_int_equal(c.blocks[2].sched.entry, SCHED_ENTRY_LOOP);
	assert_rel(c.blocks[1].freq, f, 0.05);
	assert_rel(c.blocks[2].freq, f, 0.05);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	/* cold, the head block's load makes it look rarer */
	o.sched = CALC_SCHED_COLD;
	synth_listing(&sy, &c, cmp_loop, sizeof(cmp_loop));
	for (size_t k = 0; k < 7; k++) {
		uint64_t n = (uint64_t)llround(f * s.insn[k].m);

		l->insns[k + 1 < 7 ? k + 2 : 1].samples[EVENT_CYCLES] += n;
		l->totals[EVENT_CYCLES] += n;
	}
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	assert_true(c.blocks[1].freq < 0.6 * f);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	block_schedule_release(&s);
	block_schedule_release(&cold);
}

static void calc_recovers_known_frequency(void **state)
{
	struct synth sy = { 0 };
	struct calc c;
	struct calc_opts o = CALC_OPTS_INIT;
	const struct calc_block *loop_blk;

	(void)state;
	synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0, 0);
	assert_int_equal(c.time_event, EVENT_CYCLES);
	assert_near(c.period, 100000, 1e-6);
	assert_int_equal(c.skid, 1);
	loop_blk = &c.blocks[1];
	assert_true(loop_blk->freq > 0);
	assert_rel(loop_blk->freq, 2500, 0.01);
	assert_rel(loop_blk->execs, 2500 * 100000.0, 0.01);
	assert_rel(loop_blk->cycles, loop_blk->best_cycles, 0.02);   /* no dynamic stall */
	/*
	 * The level is its error's (calc-conf.h): the estimate rests wholly on
	 * the period, here the clock period x cpu MHz (no calibration: 30%),
	 * and the loop's entry is unknown, so it is scheduled cold: low,
	 * however clean the samples.
	 */
	assert_near(loop_blk->period_share, 1, 1e-9);
	assert_string_equal(c.period_source, "cpu_mhz");
	assert_near(loop_blk->rel_error, calc_err_total(loop_blk->est.rel_error, 1, CALC_PERIOD_ERROR_MHZ),
		    1e-9);
	assert_int_equal(loop_blk->conf, calc_conf_of(loop_blk->rel_error));
	assert_int_equal(loop_blk->conf, CALC_CONF_LOW);
	/* every instruction of the loop shares the block's frequency */
	for (size_t i = 0; i < c.n_insns; i++)
		if (c.insns[i].block == 1)
			assert_near(c.insns[i].freq, loop_blk->freq, 1e-9);
	assert_rel(c.summary.cpi, c.summary.best_cpi, 0.05);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/*
 * A procedure of one straight block (12 dependent imuls, ret): only the
 * cold schedule exists, so the two schedule models cannot disagree and
 * their agreement says nothing.  The estimate is right here, but nothing
 * vouches for it: low confidence (sort's compare() prologue was medium at
 * 0.35x of the truth).
 */
#define IMUL_RAX_RSI 0x48, 0x0f, 0xaf, 0xc6
static const uint8_t straight[] = {
	IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI,
	IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI,
	IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI, IMUL_RAX_RSI,
	0xc3,
};

static void calc_single_schedule_is_low(void **state)
{
	const struct cpu_model *m = cpu_model_by_name("znver4");
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct calc_opts o = CALC_OPTS_INIT;
	struct listing *l;
	struct synth sy = { 0 };
	struct calc c;

	(void)state;
	synth_listing(&sy, &c, straight, sizeof(straight));
	l = &c.list;
	assert_int_equal(schedule_block(m, l->cfg.insns, 12, NULL, &s), 0);
	for (size_t k = 0; k < 12; k++) {
		uint64_t n = (uint64_t)llround(2500 * s.insn[k].m);

		l->insns[k + 1].samples[EVENT_CYCLES] += n;
		l->totals[EVENT_CYCLES] += n;
	}
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	assert_rel(c.blocks[0].freq, 2500, 0.02);
	assert_true(c.blocks[0].est.samples >= 200);
	assert_true(c.blocks[0].est.loads < 0.10);    /* the ret */
	assert_int_equal(c.blocks[0].conf, CALC_CONF_LOW);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	block_schedule_release(&s);
}

/*
 * A loop around a system call: xor eax, eax; loop: add rcx, 1; syscall;
 * add rdx, rax; dec rdi; jne loop; ret.  The model's M for syscall is a
 * placeholder (llvm-mca's 100 cycles and more); the samples at the
 * syscall measure only its user-mode part (the kernel's time is sampled in
 * the kernel), 5 cycles here.  The best case must not rest on the
 * placeholder (it once read best-case CPI 31.5 with a CPI of 0.5).
 */
static const uint8_t syscall_loop[] = {
	0x31, 0xc0,
	0x48, 0x83, 0xc1, 0x01,
	0x0f, 0x05,
	0x48, 0x01, 0xc2,
	0x48, 0xff, 0xcf,
	0x75, 0xf2,
	0xc3,
};

static void calc_best_case_not_above_actual(void **state)
{
	const struct cpu_model *m = cpu_model_by_name("znver4");
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loopent = { SCHED_ENTRY_LOOP, NULL, 0 };
	struct calc_opts o = CALC_OPTS_INIT;
	const double f = 2000;
	struct listing *l;
	struct synth sy = { 0 };
	struct calc c;
	const struct calc_insn *sc;
	double sum_m = 0;

	(void)state;
	synth_listing(&sy, &c, syscall_loop, sizeof(syscall_loop));
	l = &c.list;
	{
		const struct cfg_block *blk = &l->cfg.blocks[1];

		assert_int_equal(blk->n_insns, 5);
		assert_int_equal(schedule_block(m, &l->cfg.insns[blk->first], blk->n_insns, &loopent,
						&s), 0);
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			bool sys = l->cfg.insns[blk->first + k].addr == BASE + 6;
			size_t at = k + 1 == blk->n_insns ? blk->first : blk->first + k + 1;
			uint64_t n = (uint64_t)llround(f * (sys ? 5 : s.insn[k].m));

			sum_m += s.insn[k].m;
			l->insns[at].samples[EVENT_CYCLES] += n;
			l->totals[EVENT_CYCLES] += n;
		}
	}
	assert_true(s.insn[1].m > 50);  /* the placeholder */
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	sc = &c.insns[2];
	assert_int_equal(sc->insn->addr, BASE + 6);
	assert_true(sc->flags & CALC_I_UNCERTAIN);
	assert_rel(c.blocks[1].freq, f, 0.05);
	assert_true(c.summary.best_cpi <= c.summary.cpi * 1.01);
	assert_true(c.summary.gain > -0.01 * c.summary.samples);
	assert_true(c.blocks[1].best_cycles < sum_m - 50);
	/* what it took, not the guess: no gain, no static stall beyond it */
	assert_true(sc->flags & CALC_I_CAPPED);
	assert_rel(sc->m, sc->cpi, 1e-9);
	assert_false(sc->flags & CALC_I_GAIN);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
	block_schedule_release(&s);
}

/*
 * An epoch recorded on a CPU dcpi has no model of: the generic model, and
 * one warning per process however many procedures are analysed; the
 * report's header names the model and no more.
 */
static unsigned model_warnings;

static void count_model_warnings(enum report_level level, const char *msg)
{
	if (level == REPORT_WARNING && strstr(msg, "no processor model for GenuineIntel family 15") &&
	    strstr(msg, "generic"))
		model_warnings++;
}

static void calc_unknown_cpu_said_once(void **state)
{
	struct calc_opts o = CALC_OPTS_INIT;
	struct calc_lines lines;
	struct strbuf sb = STRBUF_INIT;
	struct synth sy = { 0 };
	struct calc c;

	(void)state;
	set_report_routine(count_model_warnings);
	for (int run = 0; run < 3; run++) {
		synth_listing(&sy, &c, mul_loop, sizeof(mul_loop));
		free(sy.meta.cpu_vendor);
		sy.meta.cpu_vendor = xstrdup("GenuineIntel");
		sy.meta.cpu_family = 15;
		sy.meta.cpu_model_id = 4;
		assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
		assert_false(c.model_exact);
		assert_ptr_equal(c.model, cpu_model_generic());
		calc_render(&c, &lines, 0);
		assert_true(lines.n >= 2);
		strbuf_reset(&sb);
		calc_line_text(&c, &lines.v[1], &sb);
		assert_non_null(strstr(sb.buf, "; model generic-x86-64"));
		assert_null(strstr(sb.buf, "(generic"));
		calc_lines_release(&lines);
		calc_release(&c);
		epoch_meta_release(&sy.meta);
	}
	set_report_routine(NULL);
	strbuf_release(&sb);
	assert_int_equal(model_warnings, 1);
}

/*
 * A stall of 10 cycles added to the add shows as its dynamic stall: with
 * the paper's fine windows the estimate comes from the other groups, and
 * nothing (no load, no line start, no multiply) explains it.
 */
static void calc_reports_dynamic_stall(void **state)
{
	struct est_params par = EST_PARAMS_INIT;
	struct calc_opts o = CALC_OPTS_INIT;
	struct synth sy = { 0 };
	struct calc c;
	long add;

	(void)state;
	par.window = 0;
	par.pairs = true;
	o.est = &par;
	synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0x1006, 10);
	add = calc_insn_at(&c, 0x1006);
	assert_true(add >= 0);
	assert_rel(c.blocks[1].freq, 2500, 0.02);
	assert_rel(c.insns[add].stall_dynamic, 10, 0.05);
	assert_int_equal(c.insns[add].culprits, 1u << CULPRIT_UNEXPLAINED);
	assert_true(c.summary.dyn_hi[CULPRIT_UNEXPLAINED] > 0);
	assert_near(c.summary.dyn_lo[CULPRIT_UNEXPLAINED], c.summary.dyn_hi[CULPRIT_UNEXPLAINED], 1e-9);
	/* the summary adds up: execution + static + dynamic + error = tallied */
	assert_near(c.summary.execution + c.summary.static_total + c.summary.dynamic +
		    c.summary.unestimated + c.summary.net_error, c.summary.samples, 1e-6);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/*
 * With the instructions event the frequency is counted, whatever the
 * cycles say: a stall of 40 cycles on the add does not change it.  The
 * count does not rest on the period (here the clock x cpu MHz, 30% off at
 * worst): its error is its samples' alone, and it is high.
 */
static void calc_counts_with_instructions(void **state)
{
	struct calc_opts o = CALC_OPTS_INIT;
	struct synth sy = { .instr_period = 1000 };
	struct calc c;
	long add;

	(void)state;
	synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0x1006, 40);
	assert_int_equal(c.blocks[1].est.method, EST_INSTRUCTIONS);
	assert_rel(c.blocks[1].freq, 2500, 0.01);
	assert_near(c.period_error, CALC_PERIOD_ERROR_MHZ, 0);
	assert_near(c.blocks[1].period_share, 0, 0);
	assert_near(c.blocks[1].rel_error, 1 / sqrt(c.blocks[1].est.samples), 1e-9);
	assert_int_equal(c.blocks[1].conf, CALC_CONF_HIGH);
	add = calc_insn_at(&c, 0x1006);
	assert_rel(c.insns[add].stall_dynamic, 40, 0.03);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/* Every block's and edge's level is its error's, and every value has an error. */
static void assert_levels_are_errors(const struct calc *c)
{
	for (size_t b = 0; b < c->n_blocks; b++) {
		const struct calc_block *cb = &c->blocks[b];

		assert_int_equal(cb->conf, calc_conf_of(cb->rel_error));
		assert_true((cb->freq >= 0) == (cb->rel_error >= 0));
	}
	for (size_t e = 0; e < c->n_edges; e++) {
		const struct calc_edge *ce = &c->edges[e];

		assert_int_equal(ce->conf, calc_conf_of(ce->rel_error));
		assert_true((ce->freq >= 0) == (ce->rel_error >= 0));
	}
}

/*
 * With and without the flow correction, the levels are the errors' (the
 * correction gives values where propagation left none: each with an
 * error).
 */
static void calc_levels_are_errors(void **state)
{
	struct synth sy = { 0 };
	struct calc c;
	struct calc_opts o = CALC_OPTS_INIT;

	(void)state;
	for (int flow = 0; flow < 2; flow++) {
		o.flow = flow;
		synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0x1006, 40);
		assert_levels_are_errors(&c);
		calc_release(&c);
		epoch_meta_release(&sy.meta);
	}
}

/* Text, JSON and dot come out of the same analysis without trouble. */
static void calc_reports_render(void **state)
{
	struct synth sy = { 0 };
	struct calc c;
	struct calc_opts o = CALC_OPTS_INIT;
	struct calc_lines lines;
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	FILE *f = tmpfile();
	bool block = false, insn = false, best = false;

	(void)state;
	synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0, 0);
	calc_render(&c, &lines, 0);
	for (size_t k = 0; k < lines.n; k++) {
		strbuf_reset(&sb);
		calc_line_text(&c, &lines.v[k], &sb);
		block |= lines.v[k].kind == CALC_LINE_BLOCK;
		best |= strstr(sb.buf, "Best-case") != NULL;
		insn |= lines.v[k].kind == CALC_LINE_INSN && lines.v[k].insn >= 0 &&
			strstr(sb.buf, "imul rax, rsi") != NULL;
	}
	strbuf_reset(&sb);
	assert_true(block && insn && best);
	calc_lines_release(&lines);
	calc_summary_text(&c, &sb);
	assert_non_null(strstr(sb.buf, "*** Best-case"));
	assert_non_null(strstr(sb.buf, "Total tallied"));
	strbuf_release(&sb);
	assert_non_null(f);
	json_init(&w, f, false);
	calc_json(&c, &w);
	assert_int_equal(json_finish(&w), 0);
	assert_int_equal(calc_dot(&c, f), 0);
	fclose(f);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/* Stalls, culprits, hot blocks and branches, one after another (calc-nav.h). */
static void calc_navigation(void **state)
{
	struct est_params par = EST_PARAMS_INIT;
	struct calc_opts o = CALC_OPTS_INIT;
	const struct calc_cause *x;
	struct strbuf sb = STRBUF_INIT;
	struct calc_hot h;
	struct synth sy = { 0 };
	struct calc c;
	uint64_t to = 0;
	size_t k = 0, n_stalls = 0;
	long add, last = -1, i;
	bool wrapped;

	(void)state;
	par.window = 0;
	par.pairs = true;
	o.est = &par;
	synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0x1006, 10);
	add = calc_insn_at(&c, 0x1006);
	assert_true(calc_nav_stalled(&c, (size_t)add));
	assert_false(calc_nav_stalled(&c, 0));
	for (size_t j = 0; j < c.n_insns; j++)
		if (calc_nav_stalled(&c, j)) {
			n_stalls++;
			last = (long)j;
		}
	/* forward from before the first: each stall in turn, then around */
	i = calc_nav_stall(&c, -1, 1, &wrapped);
	assert_true(i >= 0 && !wrapped);
	for (size_t s = 1; s < n_stalls; s++) {
		long next = calc_nav_stall(&c, i, 1, &wrapped);

		assert_true(next > i && !wrapped);
		i = next;
	}
	assert_int_equal(i, last);
	assert_true(calc_nav_stall(&c, last, 1, &wrapped) >= 0 && wrapped);
	/* back from after the last: the last */
	assert_int_equal(calc_nav_stall(&c, (long)c.n_insns, -1, &wrapped), last);
	assert_false(wrapped);
	calc_nav_stall_text(&c, (size_t)add, &sb);
	assert_true(!strncmp(sb.buf, "stall at 1006: ", 15));
	/* a stall with two culprits: they are visited in turn, and around */
	free(c.insns[add].causes);
	c.insns[add].causes = xcalloc(2, sizeof(*c.insns[add].causes));
	c.insns[add].causes[0] = (struct calc_cause){ 0x1002, CALC_CAUSE_STATIC(CALC_STATIC_DEP) };
	c.insns[add].causes[1] = (struct calc_cause){ 0x1000, CALC_CAUSE_CULPRIT(CULPRIT_DCACHE) };
	c.insns[add].n_causes = 2;
	x = calc_nav_culprit(&c, (size_t)add, &k);
	assert_true(x && x->addr == 0x1002 && k == 0);
	k = 1;
	x = calc_nav_culprit(&c, (size_t)add, &k);
	assert_true(x && x->addr == 0x1000 && k == 1);
	k = 2;
	x = calc_nav_culprit(&c, (size_t)add, &k);
	assert_true(x && x->addr == 0x1002 && k == 0);
	assert_null(calc_nav_culprit(&c, 0, &k));
	strbuf_reset(&sb);
	calc_nav_culprit_text(&c, (size_t)add, 1, &sb);
	assert_string_equal(sb.buf, "culprit 2 of 2 of the stall at 1006: 1000 (d D-cache miss)");
	/* the loop is the hottest block; H from it goes down, from elsewhere to it */
	calc_hot_build(&h, &c, EVENT_CYCLES);
	assert_true(h.n >= 1);
	assert_int_equal(h.rank[0], 1);
	assert_int_equal(h.total, c.list.totals[EVENT_CYCLES]);
	assert_int_equal(calc_hot_next(&h, 0, -1), 0);
	assert_int_equal(calc_hot_next(&h, 0, 1), h.n > 1 ? 1 : 0);
	strbuf_reset(&sb);
	calc_hot_text(&h, 0, &sb);
	assert_true(!strncmp(sb.buf, "hottest block: 1, ", 18));
	calc_hot_release(&h);
	/* branches: the loop's jne goes back to its head; ret and xor go nowhere */
	assert_int_equal(calc_nav_branch(&c, (size_t)calc_insn_at(&c, 0x100c), &to), CALC_GO_BLOCK);
	assert_int_equal(to, 0x1002);
	assert_int_equal(calc_nav_branch(&c, (size_t)calc_insn_at(&c, 0x100e), &to), CALC_GO_RET);
	assert_int_equal(calc_nav_branch(&c, 0, &to), CALC_GO_NONE);
	strbuf_release(&sb);
	calc_release(&c);
	epoch_meta_release(&sy.meta);
}

/* The schedule modes all run; the cold one overstates a self-loop's multiply. */
static void calc_schedule_modes(void **state)
{
	static const enum calc_sched modes[] = { CALC_SCHED_COLD, CALC_SCHED_PRED, CALC_SCHED_LOOP,
						 CALC_SCHED_AUTO };
	double best[4];

	(void)state;
	for (size_t k = 0; k < 4; k++) {
		struct synth sy = { 0 };
		struct calc c;
		struct calc_opts o = CALC_OPTS_INIT;

		o.sched = modes[k];
		synth_calc(&sy, &c, mul_loop, sizeof(mul_loop), 2500, &o, 0, 0);
		best[k] = c.blocks[1].best_cycles;
		assert_true(c.blocks[1].freq > 0);
		calc_release(&c);
		epoch_meta_release(&sy.meta);
	}
	assert_true(best[0] >= best[2]);   /* cold >= steady state */
	assert_near(best[2], 4, 0.5);      /* imul 3 + add 1 per iteration */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(estimator_exact),
		cmocka_unit_test(estimator_ignores_stalled_window),
		cmocka_unit_test(estimator_sparse_sum_ratio),
		cmocka_unit_test(estimator_rejects_isolated_low_window),
		cmocka_unit_test(estimator_nothing_to_estimate),
		cmocka_unit_test(estimator_unusable_splits_windows),
		cmocka_unit_test(estimator_noisy_many_windows),
		cmocka_unit_test(estimator_dependence_windows),
		cmocka_unit_test(propagation_diamond),
		cmocka_unit_test(propagation_carries_errors),
		cmocka_unit_test(confidence_from_error),
		cmocka_unit_test(propagation_never_negative),
		cmocka_unit_test(propagation_loop_body),
		cmocka_unit_test(propagation_long_chain),
		cmocka_unit_test(propagation_missing_edges),
		cmocka_unit_test(repair_branch_arms),
		cmocka_unit_test(repair_leaves_alone),
		cmocka_unit_test(repair_long_chain),
		cmocka_unit_test(flow_cycle_cheap_arc_moves),
		cmocka_unit_test(flow_diamond),
		cmocka_unit_test(flow_random_graphs_conserve),
		cmocka_unit_test(flow_bounded_refuses),
		cmocka_unit_test(skid_moves_samples_back),
		cmocka_unit_test(culprit_rules),
		cmocka_unit_test(culprit_icache_lines),
		cmocka_unit_test(culprit_bounded_by_events),
		cmocka_unit_test(calc_recovers_known_frequency),
		cmocka_unit_test(calc_single_schedule_is_low),
		cmocka_unit_test(calc_best_case_not_above_actual),
		cmocka_unit_test(calc_unknown_cpu_said_once),
		cmocka_unit_test(calc_reports_dynamic_stall),
		cmocka_unit_test(calc_counts_with_instructions),
		cmocka_unit_test(calc_levels_are_errors),
		cmocka_unit_test(calc_reports_render),
		cmocka_unit_test(calc_navigation),
		cmocka_unit_test(calc_schedule_modes),
		cmocka_unit_test(calc_burst_estimate),
		cmocka_unit_test(calc_loop_of_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
