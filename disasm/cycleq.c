/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/cycleq.c - Johnson-Pearson-Pingali cycle equivalence with
 * doubly linked bracket lists (O(1) push, delete and concatenation).
 */
#include "config.h"

#include "disasm/cycleq.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#define NONE UINT32_MAX

struct bracket {
	uint32_t prev, next;    /* neighbours in the list holding it */
	uint32_t recent_size;
	int recent_class;
};

struct blist {
	uint32_t head, tail;    /* head = top */
	uint32_t size;
};

struct cq {
	size_t n, m;            /* nodes, edges */
	const uint32_t *from, *to;
	/* adjacency (CSR) of the undirected multigraph */
	uint32_t *adj_start, *adj_edge;
	/* DFS */
	uint32_t *dfsnum, *node_at, *parent_edge;
	size_t visited;
	/* per node: backedges up (to ancestors), down (from descendants), children */
	uint32_t *up_start, *up, *down_start, *down, *child_start, *child;
	uint32_t *hi;
	struct blist *bl;
	struct bracket *br;     /* m real edges, then capping brackets */
	size_t n_br;
	uint32_t *cap_head, *cap_next;  /* capping brackets ending at a node */
	int *cls;
	int next_class;
};

static uint32_t other_end(const struct cq *q, uint32_t e, uint32_t v)
{
	return q->from[e] == v ? q->to[e] : q->from[e];
}

/* CSR from per-item keys: start[k]..start[k+1] lists the items with key k. */
static void csr(size_t nkeys, size_t nitems, const uint32_t *key, uint32_t **start_out,
		uint32_t **items_out, const uint32_t *val)
{
	uint32_t *start = xcalloc(nkeys + 1, sizeof(*start));
	uint32_t *items = xcalloc(nitems ? nitems : 1, sizeof(*items));
	uint32_t *fill;

	for (size_t i = 0; i < nitems; i++)
		start[key[i] + 1]++;
	for (size_t k = 0; k < nkeys; k++)
		start[k + 1] += start[k];
	fill = xmemdup(start, (nkeys + 1) * sizeof(*start));
	for (size_t i = 0; i < nitems; i++)
		items[fill[key[i]]++] = val ? val[i] : (uint32_t)i;
	free(fill);
	*start_out = start;
	*items_out = items;
}

static void build_adjacency(struct cq *q)
{
	uint32_t *key = xmalloc(2 * q->m * sizeof(*key) + 1);
	uint32_t *val = xmalloc(2 * q->m * sizeof(*val) + 1);

	for (size_t e = 0; e < q->m; e++) {
		key[2 * e] = q->from[e];
		val[2 * e] = (uint32_t)e;
		key[2 * e + 1] = q->to[e];
		val[2 * e + 1] = (uint32_t)e;
	}
	csr(q->n, 2 * q->m, key, &q->adj_start, &q->adj_edge, val);
	free(key);
	free(val);
}

/* Iterative undirected DFS from root: preorder numbers and tree edges. */
static void dfs(struct cq *q, uint32_t root)
{
	uint32_t *stack = xmalloc((q->n + 1) * sizeof(*stack));
	uint32_t *pos = xmalloc((q->n + 1) * sizeof(*pos));
	size_t sp = 0;

	for (size_t v = 0; v < q->n; v++) {
		q->dfsnum[v] = NONE;
		q->parent_edge[v] = NONE;
	}
	q->dfsnum[root] = 0;
	q->node_at[0] = root;
	q->visited = 1;
	stack[sp] = root;
	pos[sp++] = q->adj_start[root];
	while (sp) {
		uint32_t v = stack[sp - 1];

		if (pos[sp - 1] == q->adj_start[v + 1]) {
			sp--;
			continue;
		}
		uint32_t e = q->adj_edge[pos[sp - 1]++];
		uint32_t w = other_end(q, e, v);

		if (q->dfsnum[w] != NONE)
			continue;
		q->dfsnum[w] = (uint32_t)q->visited;
		q->node_at[q->visited++] = w;
		q->parent_edge[w] = e;
		stack[sp] = w;
		pos[sp++] = q->adj_start[w];
	}
	free(stack);
	free(pos);
}

/* Sorts non-tree edges into up/down lists and tree edges into child lists. */
static void classify_edges(struct cq *q)
{
	uint32_t *ukey = xmalloc(q->m * sizeof(uint32_t) + 1), *dkey = xmalloc(q->m * sizeof(uint32_t) + 1);
	uint32_t *uval = xmalloc(q->m * sizeof(uint32_t) + 1), *dval = xmalloc(q->m * sizeof(uint32_t) + 1);
	uint32_t *ckey = xmalloc(q->n * sizeof(uint32_t) + 1), *cval = xmalloc(q->n * sizeof(uint32_t) + 1);
	size_t nb = 0, nc = 0;

	for (size_t e = 0; e < q->m; e++) {
		uint32_t a = q->from[e], b = q->to[e];

		if (q->parent_edge[a] == e || q->parent_edge[b] == e)
			continue;
		if (q->dfsnum[a] < q->dfsnum[b]) {
			uint32_t t = a;

			a = b;
			b = t;
		}
		/* a is the descendant, b the ancestor */
		ukey[nb] = a;
		dkey[nb] = b;
		uval[nb] = dval[nb] = (uint32_t)e;
		nb++;
	}
	for (size_t v = 0; v < q->n; v++)
		if (q->parent_edge[v] != NONE) {
			ckey[nc] = other_end(q, q->parent_edge[v], (uint32_t)v);
			cval[nc++] = (uint32_t)v;
		}
	csr(q->n, nb, ukey, &q->up_start, &q->up, uval);
	csr(q->n, nb, dkey, &q->down_start, &q->down, dval);
	csr(q->n, nc, ckey, &q->child_start, &q->child, cval);
	free(ukey);
	free(dkey);
	free(uval);
	free(dval);
	free(ckey);
	free(cval);
}

/* ---- bracket lists ------------------------------------------------------ */

static void bl_push(struct cq *q, struct blist *l, uint32_t b)
{
	q->br[b].prev = NONE;
	q->br[b].next = l->head;
	if (l->head != NONE)
		q->br[l->head].prev = b;
	else
		l->tail = b;
	l->head = b;
	l->size++;
}

static void bl_delete(struct cq *q, struct blist *l, uint32_t b)
{
	struct bracket *x = &q->br[b];

	if (x->prev != NONE)
		q->br[x->prev].next = x->next;
	else
		l->head = x->next;
	if (x->next != NONE)
		q->br[x->next].prev = x->prev;
	else
		l->tail = x->prev;
	x->prev = x->next = NONE;
	l->size--;
}

/* Appends src below dst's contents; src becomes empty. */
static void bl_concat(struct cq *q, struct blist *dst, struct blist *src)
{
	if (!src->size)
		return;
	if (!dst->size) {
		*dst = *src;
	} else {
		q->br[dst->tail].next = src->head;
		q->br[src->head].prev = dst->tail;
		dst->tail = src->tail;
		dst->size += src->size;
	}
	src->head = src->tail = NONE;
	src->size = 0;
}

static uint32_t new_bracket(struct cq *q)
{
	uint32_t b = (uint32_t)q->n_br++;

	q->br[b].prev = q->br[b].next = NONE;
	q->br[b].recent_size = NONE;
	q->br[b].recent_class = -1;
	return b;
}

/* ---- the walk ------------------------------------------------------------ */

static int visit(struct cq *q, uint32_t n)
{
	uint32_t hi0 = NONE, hi1 = NONE, hi2 = NONE, hichild = NONE;
	struct blist *l = &q->bl[n];

	for (uint32_t i = q->up_start[n]; i < q->up_start[n + 1]; i++) {
		uint32_t e = q->up[i], t = other_end(q, q->up[i], n);

		if (q->from[e] == q->to[e])
			return -1;
		if (q->dfsnum[t] < hi0)
			hi0 = q->dfsnum[t];
	}
	for (uint32_t i = q->child_start[n]; i < q->child_start[n + 1]; i++) {
		uint32_t c = q->child[i];

		if (q->hi[c] < hi1) {
			hi1 = q->hi[c];
			hichild = c;
		}
	}
	q->hi[n] = hi0 < hi1 ? hi0 : hi1;
	for (uint32_t i = q->child_start[n]; i < q->child_start[n + 1]; i++) {
		uint32_t c = q->child[i];

		if (c != hichild && q->hi[c] < hi2)
			hi2 = q->hi[c];
		bl_concat(q, l, &q->bl[c]);
	}
	for (uint32_t b = q->cap_head[n]; b != NONE; b = q->cap_next[b - q->m])
		bl_delete(q, l, b);
	for (uint32_t i = q->down_start[n]; i < q->down_start[n + 1]; i++) {
		uint32_t e = q->down[i];

		bl_delete(q, l, e);
		if (q->cls[e] < 0)
			q->cls[e] = q->next_class++;
	}
	for (uint32_t i = q->up_start[n]; i < q->up_start[n + 1]; i++)
		bl_push(q, l, q->up[i]);
	if (hi2 < hi0 && hi2 < q->dfsnum[n]) {  /* cap at a proper ancestor */
		uint32_t d = new_bracket(q), target = q->node_at[hi2];

		bl_push(q, l, d);
		q->cap_next[d - q->m] = q->cap_head[target];
		q->cap_head[target] = d;
	}
	if (q->parent_edge[n] != NONE) {
		uint32_t e = q->parent_edge[n], b = l->head;

		if (b == NONE)
			return -1;  /* a bridge: the graph is not 2-edge-connected */
		if (q->br[b].recent_size != l->size) {
			q->br[b].recent_size = l->size;
			q->br[b].recent_class = q->next_class++;
		}
		q->cls[e] = q->br[b].recent_class;
		if (l->size == 1 && b < q->m)
			q->cls[b] = q->cls[e];
	}
	return 0;
}

static void renumber(int *cls, size_t m, int nclasses, int *out_classes)
{
	int *map = xmalloc(((size_t)nclasses + 1) * sizeof(*map));
	int next = 0;

	for (int i = 0; i < nclasses; i++)
		map[i] = -1;
	for (size_t e = 0; e < m; e++) {
		if (map[cls[e]] < 0)
			map[cls[e]] = next++;
		cls[e] = map[cls[e]];
	}
	free(map);
	*out_classes = next;
}

static void cq_free(struct cq *q)
{
	free(q->adj_start);
	free(q->adj_edge);
	free(q->dfsnum);
	free(q->node_at);
	free(q->parent_edge);
	free(q->up_start);
	free(q->up);
	free(q->down_start);
	free(q->down);
	free(q->child_start);
	free(q->child);
	free(q->hi);
	free(q->bl);
	free(q->br);
	free(q->cap_head);
	free(q->cap_next);
}

int cycleq_classes(size_t n_nodes, size_t n_edges, const uint32_t *from, const uint32_t *to,
		   uint32_t root, int *cls)
{
	struct cq q;
	int r = 0, nclasses = 0;

	if (!n_nodes || root >= n_nodes || n_nodes >= NONE / 2 || n_edges >= NONE / 2)
		return -1;
	for (size_t e = 0; e < n_edges; e++)
		if (from[e] >= n_nodes || to[e] >= n_nodes || from[e] == to[e])
			return -1;
	memset(&q, 0, sizeof(q));
	q.n = n_nodes;
	q.m = n_edges;
	q.from = from;
	q.to = to;
	q.cls = cls;
	for (size_t e = 0; e < n_edges; e++)
		cls[e] = -1;
	build_adjacency(&q);
	q.dfsnum = xmalloc(n_nodes * sizeof(uint32_t));
	q.node_at = xmalloc(n_nodes * sizeof(uint32_t));
	q.parent_edge = xmalloc(n_nodes * sizeof(uint32_t));
	dfs(&q, root);
	if (q.visited != n_nodes) {
		cq_free(&q);
		return -1;
	}
	classify_edges(&q);
	q.hi = xmalloc(n_nodes * sizeof(uint32_t));
	q.bl = xmalloc(n_nodes * sizeof(*q.bl));
	for (size_t v = 0; v < n_nodes; v++) {
		q.bl[v].head = q.bl[v].tail = NONE;
		q.bl[v].size = 0;
	}
	q.br = xmalloc((n_edges + n_nodes + 1) * sizeof(*q.br));
	for (size_t e = 0; e < n_edges; e++)
		new_bracket(&q);
	q.cap_head = xmalloc(n_nodes * sizeof(uint32_t));
	q.cap_next = xmalloc((n_nodes + 1) * sizeof(uint32_t));
	for (size_t v = 0; v < n_nodes; v++)
		q.cap_head[v] = NONE;
	for (size_t i = n_nodes; i-- > 0 && !r;)
		r = visit(&q, q.node_at[i]);
	if (!r)
		for (size_t e = 0; e < n_edges; e++)
			if (cls[e] < 0)
				r = -1;
	if (!r)
		renumber(cls, n_edges, q.next_class, &nclasses);
	cq_free(&q);
	return r ? -1 : nclasses;
}
