/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/flow.c - min-cost flow correction of frequency estimates
 * (flow.h): successive shortest paths on the residual network, Dijkstra
 * with node potentials (all initial costs are >= 0).
 */
#include "config.h"

#include "analysis/flow.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/*
 * Costs and capacities are quantised to integers so that Dijkstra's
 * reduced costs stay exactly >= 0 (with doubles, rounding makes small
 * negative ones, and shortest-path trees then loop): capacities in units
 * of 1e-9 of the largest estimate, costs in 1 .. COST_SCALE relative to
 * the largest weight.
 */
#define CAP_SCALE 1e9
#define COST_SCALE 1e6
#define CAP_INF (INT64_MAX / 4)
#define DIST_INF INT64_MAX

struct rarc {
	uint32_t to;
	uint32_t rev;      /* index of the reverse residual arc */
	int64_t cap;
	int64_t cost;
};

struct rnet {
	struct rarc *a;
	size_t n, alloc;
	size_t n_nodes;
	uint32_t *tail;    /* the node each residual arc leaves */
	size_t tail_alloc;
};

static size_t add_pair(struct rnet *r, uint32_t u, uint32_t v, int64_t cap, int64_t cost)
{
	size_t k = r->n;

	ALLOC_GROW(r->a, r->n + 2, r->alloc);
	ALLOC_GROW(r->tail, r->n + 2, r->tail_alloc);
	r->a[k] = (struct rarc){ v, (uint32_t)(k + 1), cap, cost };
	r->a[k + 1] = (struct rarc){ u, (uint32_t)k, 0, -cost };
	r->tail[k] = u;
	r->tail[k + 1] = v;
	r->n += 2;
	return k;
}

/* Adjacency: arcs of each node, as index lists (arcs stay where they are). */
static void index_arcs(const struct rnet *r, size_t **start, uint32_t **list)
{
	size_t *s = xcalloc(r->n_nodes + 2, sizeof(*s)), *fill;
	uint32_t *l = xmalloc((r->n + 1) * sizeof(*l));

	for (size_t k = 0; k < r->n; k++)
		s[r->tail[k] + 1]++;
	for (size_t v = 0; v < r->n_nodes; v++)
		s[v + 1] += s[v];
	fill = xmemdup(s, (r->n_nodes + 1) * sizeof(*s));
	for (size_t k = 0; k < r->n; k++)
		l[fill[r->tail[k]]++] = (uint32_t)k;
	free(fill);
	*start = s;
	*list = l;
}

/* ---- a binary heap of (distance, node) ------------------------------------------ */

struct heap {
	int64_t *d;
	uint32_t *v;
	size_t n;
};

static void heap_push(struct heap *h, int64_t d, uint32_t v)
{
	size_t i = h->n++;

	while (i && h->d[(i - 1) / 2] > d) {
		h->d[i] = h->d[(i - 1) / 2];
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->d[i] = d;
	h->v[i] = v;
}

static void heap_pop(struct heap *h, int64_t *d, uint32_t *v)
{
	int64_t ld;
	uint32_t lv;
	size_t i = 0;

	*d = h->d[0];
	*v = h->v[0];
	ld = h->d[--h->n];
	lv = h->v[h->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->d[c + 1] < h->d[c])
			c++;
		if (h->d[c] >= ld)
			break;
		h->d[i] = h->d[c];
		h->v[i] = h->v[c];
		i = c;
	}
	h->d[i] = ld;
	h->v[i] = lv;
}

/* ---- successive shortest paths -------------------------------------------------- */

struct ssp {
	struct rnet *r;
	size_t *start;
	uint32_t *list;
	int64_t *pot, *dist;
	uint32_t *via;     /* arc into each node on the shortest path */
	struct heap h;
};

static bool dijkstra(struct ssp *s, uint32_t src, uint32_t dst)
{
	size_t n = s->r->n_nodes;
	int64_t far;

	for (size_t v = 0; v < n; v++) {
		s->dist[v] = DIST_INF;
		s->via[v] = UINT32_MAX;
	}
	s->dist[src] = 0;
	s->h.n = 0;
	heap_push(&s->h, 0, src);
	while (s->h.n) {
		int64_t d;
		uint32_t u;

		heap_pop(&s->h, &d, &u);
		if (d > s->dist[u])
			continue;
		for (size_t k = s->start[u]; k < s->start[u + 1]; k++) {
			const struct rarc *a = &s->r->a[s->list[k]];
			int64_t nd;

			if (a->cap <= 0)
				continue;
			nd = d + a->cost + s->pot[u] - s->pot[a->to];
			if (nd < s->dist[a->to]) {
				s->dist[a->to] = nd;
				s->via[a->to] = s->list[k];
				heap_push(&s->h, nd, a->to);
			}
		}
	}
	if (s->dist[dst] == DIST_INF)
		return false;
	/* min(dist, dist[dst]) keeps every reduced cost >= 0, reached or not */
	far = s->dist[dst];
	for (size_t v = 0; v < n; v++)
		s->pot[v] += s->dist[v] < far ? s->dist[v] : far;
	return true;
}

static int64_t augment(struct ssp *s, uint32_t src, uint32_t dst)
{
	int64_t f = CAP_INF;

	for (uint32_t v = dst; v != src; v = s->r->tail[s->via[v]])
		if (s->r->a[s->via[v]].cap < f)
			f = s->r->a[s->via[v]].cap;
	for (uint32_t v = dst; v != src; v = s->r->tail[s->via[v]]) {
		struct rarc *a = &s->r->a[s->via[v]];

		a->cap -= f;
		s->r->a[a->rev].cap += f;
	}
	return f;
}

struct quant {
	double unit;       /* value of one capacity unit */
	double wmax;
};

static void quantise(const struct flow_net *net, struct quant *q)
{
	double emax = 0;

	q->wmax = 0;
	for (size_t k = 0; k < net->n_arcs; k++) {
		if (net->est[k] > emax)
			emax = net->est[k];
		if (net->w[k] > q->wmax)
			q->wmax = net->w[k];
	}
	q->unit = emax > 0 ? emax / CAP_SCALE : 1;
	if (!(q->wmax > 0))
		q->wmax = 1;
}

static int64_t qcap(const struct quant *q, double v)
{
	return v > 0 ? (int64_t)llround(v / q->unit) : 0;
}

static int64_t qcost(const struct quant *q, double w)
{
	int64_t c = w > 0 ? (int64_t)llround(w / q->wmax * COST_SCALE) : 0;

	return c > 0 ? c : 1;
}

int flow_correct(const struct flow_net *net, double *x)
{
	struct rnet r = { NULL, 0, 0, net->n_nodes + 2, NULL, 0 };
	uint32_t src = (uint32_t)net->n_nodes, dst = (uint32_t)net->n_nodes + 1;
	int64_t *excess = xcalloc(net->n_nodes + 1, sizeof(*excess)), need = 0, done = 0;
	size_t *up = xmalloc((net->n_arcs + 1) * sizeof(*up));
	size_t *down = xmalloc((net->n_arcs + 1) * sizeof(*down));
	size_t rounds = 0, max_rounds;
	struct ssp s = { 0 };
	struct quant q;
	int ret = 0;

	quantise(net, &q);
	for (size_t k = 0; k < net->n_arcs; k++) {
		int64_t e = qcap(&q, net->est[k]), c = qcost(&q, net->w[k]);

		int64_t upcap = CAP_INF, downcap = e;

		/* a known estimate moves by at most the factor net->bound */
		if (net->bound > 1 && net->w[k] > 1e-6 && e > 0) {
			upcap = (int64_t)((double)e * (net->bound - 1));
			downcap = e - (int64_t)((double)e / net->bound);
		}
		up[k] = add_pair(&r, net->from[k], net->to[k], upcap, c);
		down[k] = add_pair(&r, net->to[k], net->from[k], downcap, c);
		excess[net->to[k]] += e;
		excess[net->from[k]] -= e;
	}
	for (size_t v = 0; v < net->n_nodes; v++) {
		if (excess[v] > 0) {
			add_pair(&r, src, (uint32_t)v, excess[v], 0);
			need += excess[v];
		} else if (excess[v] < 0) {
			add_pair(&r, (uint32_t)v, dst, -excess[v], 0);
		}
	}
	index_arcs(&r, &s.start, &s.list);
	s.r = &r;
	s.pot = xcalloc(r.n_nodes, sizeof(int64_t));
	s.dist = xmalloc(r.n_nodes * sizeof(int64_t));
	s.via = xmalloc(r.n_nodes * sizeof(uint32_t));
	s.h.d = xmalloc((r.n + r.n_nodes + 1) * sizeof(int64_t));
	s.h.v = xmalloc((r.n + r.n_nodes + 1) * sizeof(uint32_t));
	/* each round saturates an arc or an excess: a few per arc at most */
	max_rounds = 8 * (r.n + r.n_nodes) + 64;
	while (done < need) {
		if (++rounds > max_rounds || !dijkstra(&s, src, dst)) {
			ret = -1;
			break;
		}
		done += augment(&s, src, dst);
	}
	for (size_t k = 0; k < net->n_arcs; k++) {
		int64_t e = qcap(&q, net->est[k]);

		/* x = e + (flow pushed up) - (flow pushed down) */
		x[k] = (double)(e + r.a[up[k] + 1].cap - r.a[down[k] + 1].cap) * q.unit;
		if (x[k] < 0)
			x[k] = 0;
	}
	free(s.h.d);
	free(s.h.v);
	free(s.via);
	free(s.dist);
	free(s.pot);
	free(s.start);
	free(s.list);
	free(r.a);
	free(r.tail);
	free(up);
	free(down);
	free(excess);
	return ret;
}
