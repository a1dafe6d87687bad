/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/freq.c - frequency estimation per class and local
 * propagation (freq.h).
 */
#include "config.h"

#include "analysis/freq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* ---- windows ------------------------------------------------------------------ */

struct window {
	size_t lo, hi;     /* points [lo, hi] */
	double s, m;
	double ratio;
};

struct wins {
	struct window *v;
	size_t n, alloc;
};

static void add_window(struct wins *w, const struct est_point *p, size_t lo, size_t hi)
{
	struct window *x;
	double s = 0, m = 0;

	for (size_t k = lo; k <= hi; k++) {
		s += p[k].s;
		m += p[k].m;
	}
	if (m <= 0)
		return;
	ALLOC_GROW(w->v, w->n + 1, w->alloc);
	x = &w->v[w->n++];
	x->lo = lo;
	x->hi = hi;
	x->s = s;
	x->m = m;
	x->ratio = s / m;
}

/*
 * Groups of one segment [lo, hi]: each issue point with the M = 0 points
 * after it (leading M = 0 points join the first group).  Writes the group
 * starts into g (g[k] .. g[k+1]-1); returns the number of groups.
 */
static size_t groups(const struct est_point *p, size_t lo, size_t hi, size_t *g)
{
	size_t n = 0;

	for (size_t k = lo; k <= hi; k++)
		if (p[k].m > 0)
			g[n++] = k;
	if (n)
		g[0] = lo;
	g[n] = hi + 1;
	return n;
}

/*
 * The dependence window of group k: (j, end of the group] when its issue
 * point waited for a producer j of the segment with instructions between
 * them; false otherwise.
 */
static bool dep_window(const struct est_point *p, size_t lo, const size_t *g, size_t k,
		       size_t *from, size_t *to)
{
	size_t i = g[k];
	int j;

	while (i < g[k + 1] && p[i].m <= 0)
		i++;
	if (i >= g[k + 1])
		return false;
	j = p[i].producer;
	if (j < 0 || (size_t)j < lo || (size_t)j + 1 >= i)
		return false;
	*from = (size_t)j + 1;
	*to = g[k + 1] - 1;
	return true;
}

static void segment_windows(const struct est_point *p, size_t lo, size_t hi,
			    const struct est_params *par, struct wins *w, size_t *g)
{
	size_t ng = groups(p, lo, hi, g);

	/* the whole segment */
	add_window(w, p, lo, hi);
	/* long runs of consecutive groups inside a long segment */
	if (par->window > 0 && ng > par->window)
		for (size_t k = 0; k + par->window <= ng; k++)
			add_window(w, p, g[k], g[k + par->window] - 1);
	/*
	 * The paper's fine windows: each group (or, for an issue point that
	 * waited for a producer with instructions between them, its
	 * dependence window instead: a stall between them shortens the
	 * issue point's wait but not the window's time) and adjacent pairs.
	 */
	if (!par->pairs)
		return;
	for (size_t k = 0; k < ng; k++) {
		size_t a, b;

		if (par->dep_windows && dep_window(p, lo, g, k, &a, &b))
			add_window(w, p, a, b);
		else
			add_window(w, p, g[k], g[k + 1] - 1);
		if (k + 1 < ng)
			add_window(w, p, g[k], g[k + 2] - 1);
	}
}

static void build_windows(const struct est_point *p, size_t n, const struct est_params *par,
			  struct wins *w)
{
	size_t *g = xmalloc((n + 2) * sizeof(*g));

	for (size_t lo = 0; lo < n;) {
		size_t hi = lo;

		if (!p[lo].usable) {
			lo++;
			continue;
		}
		while (hi + 1 < n && p[hi + 1].usable && p[hi + 1].seg == p[lo].seg)
			hi++;
		segment_windows(p, lo, hi, par, w, g);
		lo = hi + 1;
	}
	free(g);
}

static int by_range(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Drops windows built twice (a one-group segment is also a group). */
static void unique(struct wins *w)
{
	size_t keep = 0;

	if (w->n < 2)
		return;
	qsort(w->v, w->n, sizeof(*w->v), by_range);
	for (size_t k = 0; k < w->n; k++)
		if (!keep || w->v[k].lo != w->v[keep - 1].lo || w->v[k].hi != w->v[keep - 1].hi)
			w->v[keep++] = w->v[k];
	w->n = keep;
}

static int by_ratio(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	if (x->ratio != y->ratio)
		return x->ratio < y->ratio ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* ---- clusters ------------------------------------------------------------------ */

/* Share of the usable issue cycles covered by windows [a, b] of the sorted list. */
static double coverage(const struct est_point *p, size_t n, const struct wins *w, size_t a,
		       size_t b, double total_m, unsigned char *mark, unsigned *points)
{
	double m = 0;

	memset(mark, 0, n);
	for (size_t k = a; k <= b; k++)
		for (size_t i = w->v[k].lo; i <= w->v[k].hi; i++)
			mark[i] = 1;
	*points = 0;
	for (size_t i = 0; i < n; i++)
		if (mark[i] && p[i].m > 0) {
			m += p[i].m;
			(*points)++;
		}
	return total_m > 0 ? m / total_m : 0;
}

static void totals(const struct est_point *p, size_t n, struct est_result *r)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].usable) {
			r->total_m += p[i].m;
			r->total_s += p[i].s;
		}
}

static void sum_ratio(const struct est_point *p, size_t n, struct est_result *r,
		      unsigned char *used)
{
	r->method = EST_SUM;
	r->f = r->total_s / r->total_m;
	r->samples = r->total_s;
	r->support = 1;
	r->spread = 1;
	for (size_t i = 0; i < n; i++)
		if (p[i].usable) {
			if (used)
				used[i] = 1;
			if (p[i].m > 0)
				r->points++;
		}
}

/* The end of the cluster starting at sorted window a. */
static size_t cluster_end(const struct wins *w, size_t a, double factor)
{
	size_t b = a;
	double lim = w->v[a].ratio * factor;

	while (b + 1 < w->n && w->v[b + 1].ratio <= lim)
		b++;
	return b;
}

/*
 * Narrows a cluster to the windows that agree with its estimate within
 * sampling noise (the paper's cluster rule, max <= 1.5 x min, also takes
 * in windows with moderate stalls): drops the upper windows whose ratio
 * exceeds F by more than max(10%, three Poisson deviations) and
 * recomputes F, a few times.  Returns the new end; *s and *m are the
 * kept sums.
 */
static size_t trim(const struct wins *w, size_t a, size_t b, const struct est_params *par,
		   double *s, double *m)
{
	for (int round = 0; round < 5 && b > a; round++) {
		double f = *s / *m, ns = 0, nm = 0;
		size_t nb = a;

		for (size_t k = a; k <= b; k++) {
			double tol = w->v[k].s > 0 ? 3.0 / sqrt(w->v[k].s) : 1;

			if (tol < par->trim)
				tol = par->trim;
			if (w->v[k].ratio > f * (1 + tol))
				break;
			ns += w->v[k].s;
			nm += w->v[k].m;
			nb = k;
		}
		if (nb == b || !(nm > 0))
			break;
		b = nb;
		*s = ns;
		*m = nm;
	}
	return b;
}

void freq_estimate_class(const struct est_point *p, size_t n, const struct est_params *par,
			 struct est_result *r, unsigned char *used)
{
	static const struct est_params defaults = EST_PARAMS_INIT;
	struct wins w = { NULL, 0, 0 };
	unsigned char *mark;

	if (!par)
		par = &defaults;
	memset(r, 0, sizeof(*r));
	if (used)
		memset(used, 0, n);
	totals(p, n, r);
	if (r->total_m <= 0)
		return;
	if (r->total_s < par->sparse) {
		sum_ratio(p, n, r, used);
		return;
	}
	build_windows(p, n, par, &w);
	unique(&w);
	r->windows = (unsigned)w.n;
	if (!w.n) {
		sum_ratio(p, n, r, used);
		return;
	}
	qsort(w.v, w.n, sizeof(*w.v), by_ratio);
	mark = xmalloc(n ? n : 1);
	for (size_t a = 0; a < w.n; a++) {
		size_t b = cluster_end(&w, a, par->cluster);
		unsigned points;
		double sup = coverage(p, n, &w, a, b, r->total_m, mark, &points), s = 0, m = 0;

		if (sup < par->min_support && a + 1 < w.n) {
			r->rejected++;
			continue;
		}
		for (size_t k = a; k <= b; k++) {
			s += w.v[k].s;
			m += w.v[k].m;
		}
		b = trim(&w, a, b, par, &s, &m);
		r->method = EST_CLUSTER;
		r->f = s / m;
		r->used = (unsigned)(b - a + 1);
		r->points = points;
		r->spread = w.v[a].ratio > 0 ? w.v[b].ratio / w.v[a].ratio : (w.v[b].ratio > 0 ? INFINITY : 1);
		r->support = sup;
		r->samples = s;
		if (used)
			memcpy(used, mark, n);
		break;
	}
	free(mark);
	free(w.v);
	if (r->method == EST_NONE)
		sum_ratio(p, n, r, used);
}

/* ---- propagation ------------------------------------------------------------ */

/*
 * A constraint: sum of coef x val over its classes = 0.  Stored as
 * (class, coefficient) terms with coefficients merged per class.
 */
struct term {
	int cls;
	double coef;
};

struct constraints {
	struct term *terms;
	size_t n_terms, alloc_terms;
	size_t *start;       /* constraint k: terms[start[k] .. start[k+1]) */
	size_t n, alloc;
};

static void add_term(struct constraints *cs, int cls, double coef)
{
	size_t first = cs->start[cs->n];

	if (cls < 0)
		return;
	for (size_t t = first; t < cs->n_terms; t++)
		if (cs->terms[t].cls == cls) {
			cs->terms[t].coef += coef;
			return;
		}
	ALLOC_GROW(cs->terms, cs->n_terms + 1, cs->alloc_terms);
	cs->terms[cs->n_terms].cls = cls;
	cs->terms[cs->n_terms++].coef = coef;
}

static void close_constraint(struct constraints *cs)
{
	size_t first = cs->start[cs->n], keep = first;

	/* drop cancelled terms (a block and its only edge in one class) */
	for (size_t t = first; t < cs->n_terms; t++)
		if (fabs(cs->terms[t].coef) > 1e-9)
			cs->terms[keep++] = cs->terms[t];
	cs->n_terms = keep;
	if (keep == first)
		return;      /* empty: nothing to learn */
	ALLOC_GROW(cs->start, cs->n + 2, cs->alloc);
	cs->start[++cs->n] = cs->n_terms;
}

/* Arcs by node: CSR lists of incoming and outgoing arcs. */
struct adj {
	size_t *in_start, *out_start;
	uint32_t *in, *out;
};

static void adj_build(const struct fgraph *g, struct adj *a)
{
	size_t *fi = xcalloc(g->n_nodes + 1, sizeof(*fi)), *fo = xcalloc(g->n_nodes + 1, sizeof(*fo));

	a->in_start = xcalloc(g->n_nodes + 1, sizeof(size_t));
	a->out_start = xcalloc(g->n_nodes + 1, sizeof(size_t));
	a->in = xmalloc((g->n_arcs + 1) * sizeof(uint32_t));
	a->out = xmalloc((g->n_arcs + 1) * sizeof(uint32_t));
	for (size_t k = 0; k < g->n_arcs; k++) {
		a->in_start[g->to[k] + 1]++;
		a->out_start[g->from[k] + 1]++;
	}
	for (size_t v = 0; v < g->n_nodes; v++) {
		a->in_start[v + 1] += a->in_start[v];
		a->out_start[v + 1] += a->out_start[v];
	}
	for (size_t k = 0; k < g->n_arcs; k++) {
		a->in[a->in_start[g->to[k]] + fi[g->to[k]]++] = (uint32_t)k;
		a->out[a->out_start[g->from[k]] + fo[g->from[k]]++] = (uint32_t)k;
	}
	free(fi);
	free(fo);
}

static void adj_release(struct adj *a)
{
	free(a->in_start);
	free(a->out_start);
	free(a->in);
	free(a->out);
}

static void add_arcs(struct constraints *cs, const struct fgraph *g, const size_t *start,
		     const uint32_t *list, size_t v, double coef)
{
	for (size_t k = start[v]; k < start[v + 1]; k++)
		add_term(cs, g->arc_cls[list[k]], coef);
}

/*
 * node = sum in (+ the invocations at the entry), node = sum out; at EXIT
 * (which is not split): sum in = sum out + invocations.  The invocations
 * are the class of the EXIT block.
 */
static void build_constraints(const struct fgraph *g, struct constraints *cs)
{
	int inv = g->node_cls[g->exit];
	struct adj a;

	adj_build(g, &a);
	ALLOC_GROW(cs->start, 1, cs->alloc);
	cs->start[0] = 0;
	for (size_t v = 0; v < g->n_nodes; v++) {
		if (v == g->exit) {
			if (!g->in_constraints)
				continue;
			add_arcs(cs, g, a.in_start, a.in, v, 1);
			add_arcs(cs, g, a.out_start, a.out, v, -1);
			add_term(cs, inv, -1);
			close_constraint(cs);
			continue;
		}
		if (g->node_cls[v] < 0)
			continue;
		if (g->in_constraints) {
			add_term(cs, g->node_cls[v], 1);
			add_arcs(cs, g, a.in_start, a.in, v, -1);
			if (v == g->entry)
				add_term(cs, inv, -1);
			close_constraint(cs);
		}
		add_term(cs, g->node_cls[v], 1);
		add_arcs(cs, g, a.out_start, a.out, v, -1);
		close_constraint(cs);
	}
	adj_release(&a);
}

/*
 * The error of a value solved from a constraint: the others' absolute
 * errors added as independent deviations, the shares resting on the
 * common factor added as they are (they move together).  A value
 * clamped at zero has no bound.
 */
static void solve_error(const struct constraints *cs, size_t k, const double *val,
			const struct freq_errors *e, int unknown, double coef)
{
	double var = 0, common = 0, u = val[unknown];

	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++) {
		int c = cs->terms[t].cls;
		double x = cs->terms[t].coef * val[c] / coef, rel = e->err[c];

		if (c == unknown)
			continue;
		if (!(rel >= 0) || rel > FREQ_ERR_UNBOUNDED)
			rel = FREQ_ERR_UNBOUNDED;
		var += x * rel * x * rel;
		if (e->share)
			common -= x * e->share[c];
	}
	if (!(u > 0)) {
		e->err[unknown] = FREQ_ERR_UNBOUNDED;
		if (e->share)
			e->share[unknown] = 0;
		return;
	}
	e->err[unknown] = sqrt(var) / u < FREQ_ERR_UNBOUNDED ? sqrt(var) / u : FREQ_ERR_UNBOUNDED;
	if (e->share)
		e->share[unknown] = common / u;
}

static bool solve(const struct constraints *cs, size_t k, double *val, unsigned char *state,
		  double *scale, const struct freq_errors *e, int *which)
{
	int unknown = -1;
	double sum = 0, coef = 0, mag = 0;

	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++) {
		int c = cs->terms[t].cls;

		if (state[c] == FREQ_UNKNOWN) {
			if (unknown >= 0)
				return false;
			unknown = c;
			coef = cs->terms[t].coef;
		} else {
			sum += cs->terms[t].coef * val[c];
			if (fabs(cs->terms[t].coef * val[c]) > mag)
				mag = fabs(cs->terms[t].coef * val[c]);
		}
	}
	if (unknown < 0)
		return false;
	val[unknown] = -sum / coef;
	if (scale)
		scale[unknown] = mag / fabs(coef);
	if (!(val[unknown] > 0))
		val[unknown] = 0;
	if (e && e->err)
		solve_error(cs, k, val, e, unknown, coef);
	state[unknown] = FREQ_PROPAGATED;
	*which = unknown;
	return true;
}

size_t freq_propagate(const struct fgraph *g, double *val, unsigned char *state, double *scale,
		      const struct freq_errors *e)
{
	struct constraints cs = { 0 };
	size_t *cnt, *cstart, *clist, *queue, qh = 0, qt = 0, filled = 0;

	build_constraints(g, &cs);
	/* class -> constraints index */
	cstart = xcalloc(g->n_classes + 2, sizeof(*cstart));
	for (size_t t = 0; t < cs.n_terms; t++)
		cstart[cs.terms[t].cls + 1]++;
	for (size_t c = 0; c < g->n_classes; c++)
		cstart[c + 1] += cstart[c];
	clist = xmalloc((cs.n_terms + 1) * sizeof(*clist));
	cnt = xcalloc(g->n_classes + 1, sizeof(*cnt));
	for (size_t k = 0; k < cs.n; k++)
		for (size_t t = cs.start[k]; t < cs.start[k + 1]; t++) {
			int c = cs.terms[t].cls;

			clist[cstart[c] + cnt[c]++] = k;
		}
	queue = xmalloc((cs.n + cs.n_terms + 1) * sizeof(*queue));
	for (size_t k = 0; k < cs.n; k++)
		queue[qt++] = k;
	while (qh < qt) {
		size_t k = queue[qh++];
		int c;

		if (!solve(&cs, k, val, state, scale, e, &c))
			continue;
		filled++;
		/* the constraints of c may now have one unknown left */
		for (size_t x = cstart[c]; x < cstart[c + 1]; x++)
			queue[qt++] = clist[x];
	}
	free(queue);
	free(cnt);
	free(clist);
	free(cstart);
	free(cs.terms);
	free(cs.start);
	return filled;
}

/* ---- repair ------------------------------------------------------------------- */

static int find(int *rep, int c)
{
	while (rep[c] != c)
		c = rep[c] = rep[rep[c]];
	return c;
}

/*
 * The cut constraints: the arcs (with the implied EXIT -> entry arc of the
 * invocations) fall into components of the bipartite graph "source side
 * -> target side"; all out-arcs of a node are in the component of its
 * source side, all in-arcs in that of its target side, so in each
 * component the sources' frequencies add up to the targets':
 * sum over P of F = sum over S of F, in node classes (+1 for P, -1 for S).
 */
static void cut_constraints(const struct fgraph *g, struct constraints *cs)
{
	size_t nn = g->n_nodes, na = g->n_arcs + 1, ns = 2 * nn, total;
	int *rep = xmalloc((ns + 1) * sizeof(*rep));   /* 2v: v as source, 2v+1: as target */
	size_t *cnt = xcalloc(ns + 2, sizeof(*cnt)), *order = xmalloc((ns + 1) * sizeof(*order));
	unsigned char *has = xcalloc(ns + 1, 1);

	for (size_t v = 0; v < ns; v++)
		rep[v] = (int)v;
	for (size_t k = 0; k < na; k++) {
		bool inv = k == g->n_arcs;
		uint32_t from = inv ? g->exit : g->from[k], to = inv ? g->entry : g->to[k];

		if (!inv && (g->arc_cls[k] < 0 || g->node_cls[from] < 0 || g->node_cls[to] < 0))
			continue;
		has[2 * from] = has[2 * to + 1] = 1;
		rep[find(rep, (int)(2 * from))] = find(rep, (int)(2 * to + 1));
	}
	/* the sides with arcs, grouped by component (a counting sort) */
	for (size_t x = 0; x < ns; x++)
		if (has[x] && g->node_cls[x / 2] >= 0)
			cnt[find(rep, (int)x) + 1]++;
	for (size_t r = 0; r < ns; r++)
		cnt[r + 1] += cnt[r];
	total = cnt[ns];
	for (size_t x = 0; x < ns; x++)
		if (has[x] && g->node_cls[x / 2] >= 0)
			order[cnt[find(rep, (int)x)]++] = x;
	ALLOC_GROW(cs->start, 1, cs->alloc);
	cs->start[0] = 0;
	for (size_t i = 0; i < total; i++) {
		size_t x = order[i];

		add_term(cs, g->node_cls[x / 2], x % 2 ? -1 : 1);
		if (i + 1 == total || find(rep, (int)order[i + 1]) != find(rep, (int)x))
			close_constraint(cs);
	}
	free(rep);
	free(cnt);
	free(order);
	free(has);
}

/*
 * Classes a constraint says are equal ("a = b": two terms, +1 and -1), as
 * sets (union-find).
 */
static void equal_sets(const struct constraints *cs, size_t n, int *rep)
{
	for (size_t c = 0; c < n; c++)
		rep[c] = (int)c;
	for (size_t k = 0; k < cs->n; k++) {
		size_t t = cs->start[k];

		if (cs->start[k + 1] - t != 2 || fabs(cs->terms[t].coef + cs->terms[t + 1].coef) > 1e-9 ||
		    fabs(fabs(cs->terms[t].coef) - 1) > 1e-9)
			continue;
		rep[find(rep, cs->terms[t].cls)] = find(rep, cs->terms[t + 1].cls);
	}
}

/* The constraints over sets: each term's class replaced by its set's representative. */
static void set_constraints(const struct constraints *cs, int *rep, struct constraints *out)
{
	ALLOC_GROW(out->start, 1, out->alloc);
	out->start[0] = 0;
	for (size_t k = 0; k < cs->n; k++) {
		for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++)
			add_term(out, find(rep, cs->terms[t].cls), cs->terms[t].coef);
		close_constraint(out);
	}
}

/* One side of a constraint (sign): its total value and weight; false unless all ok. */
static bool side(const struct constraints *cs, size_t k, int sign, const double *v,
		 const double *w, const unsigned char *ok, double *sum, double *wsum)
{
	bool any = false;

	*sum = *wsum = 0;
	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++) {
		int c = cs->terms[t].cls;

		if (cs->terms[t].coef * sign <= 0)
			continue;
		if (!ok[c])
			return false;
		any = true;
		*sum += fabs(cs->terms[t].coef) * v[c];
		*wsum += fabs(cs->terms[t].coef) * w[c];
	}
	return any;
}

struct repair {
	int *rep;             /* class -> its set */
	double *v, *w, *susp; /* per set: value, weight, suspect share */
	unsigned char *ok;
	double *val;          /* the caller's class values */
	const unsigned char *cok;
	unsigned char *changed;
	size_t nc, n;
	int *head, *next;     /* the classes of each set, as lists */
};

/*
 * Brings one side (sign) of constraint k down from sum to target by
 * scaling its suspect sets (most of their samples at mispredict-prone
 * heads: susp >= 1/2) by one factor; the others keep their values.  The
 * sets changed inherit a share of the other side's weight and are no
 * longer suspect.
 */
static void lower_side(struct repair *r, const struct constraints *cs, size_t k, int sign,
		       double sum, double target, double wfrom)
{
	double u = 0, f;

	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++)
		if (cs->terms[t].coef * sign > 0 && r->susp[cs->terms[t].cls] >= 0.5)
			u += fabs(cs->terms[t].coef) * r->v[cs->terms[t].cls];
	if (!(u > 0))
		return;
	f = 1 - (sum - target) / u;
	if (f < 0.02)
		f = 0.02;
	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++) {
		int s = cs->terms[t].cls;
		double share;

		if (cs->terms[t].coef * sign <= 0 || r->susp[s] < 0.5)
			continue;
		r->v[s] *= f;
		r->susp[s] = 0;
		share = target > 0 ? r->v[s] / target : 0;
		if (wfrom * share > r->w[s])
			r->w[s] = wfrom * share;
		for (int c = r->head[s]; c >= 0; c = r->next[c])
			if (r->cok[c]) {
				r->val[c] *= f;
				r->n += !r->changed[c];
				r->changed[c] = 1;
			}
	}
}

/* A cut and the weight of its heavier side, for ordering. */
struct cut {
	size_t k;
	double w;
};

static int by_weight(const void *x, const void *y)
{
	const struct cut *a = x, *b = y;

	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

static bool has_suspect(const struct repair *r, const struct constraints *cs, size_t k, int sign);

/*
 * Applies cut k if it still qualifies: one side above the other by more
 * than tol, the other heavier, and suspect sets on the side above.
 */
static int apply_cut(struct repair *r, const struct constraints *cs, size_t k, double tol)
{
	double a, aw, b, bw;

	if (!side(cs, k, 1, r->v, r->w, r->ok, &a, &aw) || !side(cs, k, -1, r->v, r->w, r->ok, &b, &bw))
		return 0;
	/* the heavier side holds; a lighter side above it comes down */
	if (b > a * (1 + tol) && aw >= bw && has_suspect(r, cs, k, -1)) {
		lower_side(r, cs, k, -1, b, a, aw);
		return 1;
	}
	if (a > b * (1 + tol) && bw >= aw && has_suspect(r, cs, k, 1)) {
		lower_side(r, cs, k, 1, a, b, bw);
		return 1;
	}
	return 0;
}

/* True if a side has a suspect set (lower_side can act on it). */
static bool has_suspect(const struct repair *r, const struct constraints *cs, size_t k, int sign)
{
	for (size_t t = cs->start[k]; t < cs->start[k + 1]; t++)
		if (cs->terms[t].coef * sign > 0 && r->susp[cs->terms[t].cls] >= 0.5 &&
		    r->v[cs->terms[t].cls] > 0)
			return true;
	return false;
}

size_t freq_repair(const struct fgraph *g, double *val, const unsigned char *ok,
		   const double *weight, const double *susp, double tol, unsigned char *changed)
{
	struct constraints cs = { 0 }, sets = { 0 };
	size_t nc = g->n_classes;
	struct repair r = { xmalloc((nc + 1) * sizeof(int)), xcalloc(nc + 1, sizeof(double)),
			    xcalloc(nc + 1, sizeof(double)), xcalloc(nc + 1, sizeof(double)),
			    xcalloc(nc + 1, 1), val, ok, changed, nc, 0, NULL, NULL };

	if (!g->in_constraints)
		goto out;
	cut_constraints(g, &cs);
	equal_sets(&cs, nc, r.rep);
	set_constraints(&cs, r.rep, &sets);
	r.head = xmalloc((nc + 1) * sizeof(int));
	r.next = xmalloc((nc + 1) * sizeof(int));
	for (size_t c = 0; c < nc; c++)
		r.head[c] = -1;
	for (size_t c = 0; c < nc; c++) {
		int s = find(r.rep, (int)c);

		r.next[c] = r.head[s];
		r.head[s] = (int)c;
		if (ok[c] && (!r.ok[s] || weight[c] > r.w[s])) {
			r.v[s] = val[c];
			r.w[s] = weight[c];
			r.susp[s] = susp[c];
		}
		r.ok[s] |= ok[c];
	}
	/*
	 * The most trusted holding side first: its sets then hold for the
	 * next cuts.  Each round orders the cuts by the weight of their
	 * heavier side and applies those that still qualify (a set is lowered
	 * once: it is no longer suspect afterwards), so a round is
	 * O(K log K) for K cuts.
	 */
	for (int round = 0; round < 4; round++) {
		struct cut *order = xmalloc((sets.n + 1) * sizeof(*order));
		size_t no = 0, done = 0;

		for (size_t k = 0; k < sets.n; k++) {
			double a, aw, b, bw;

			if (!side(&sets, k, 1, r.v, r.w, r.ok, &a, &aw) ||
			    !side(&sets, k, -1, r.v, r.w, r.ok, &b, &bw))
				continue;
			order[no++] = (struct cut){ k, aw > bw ? aw : bw };
		}
		qsort(order, no, sizeof(*order), by_weight);
		for (size_t i = 0; i < no; i++)
			done += apply_cut(&r, &sets, order[i].k, tol);
		free(order);
		if (!done)
			break;
	}
out:
	free(r.head);
	free(r.next);
	free(r.rep);
	free(r.v);
	free(r.w);
	free(r.susp);
	free(r.ok);
	free(cs.terms);
	free(cs.start);
	free(sets.terms);
	free(sets.start);
	return r.n;
}
