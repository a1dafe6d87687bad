/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/callgraph.c - gprof's listings from sampled stacks.
 */
#include "config.h"

#include "analysis/callgraph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/json.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "db/watch.h"
#include "disasm/image.h"
#include "present/draw.h"

/* Per node, while building. */
struct nstat {
	uint64_t self, total, delayed;
	uint64_t stamp;                 /* the last sample that counted it (+1) */
	uint32_t cycle;
};

struct build {
	struct callgraph *g;
	struct nstat *ns;
	size_t alloc_arcs;
	struct u64map arc_ix;           /* parent << 32 | child -> arc + 1 */
	uint64_t *arc_stamp;
	uint64_t *cycle_total, *cycle_stamp;
};

static bool wanted(const struct callgraph *g, const struct stack_sample *s)
{
	const struct stack_thread *th = &g->sv->t.threads[s->thread];

	return s->event == g->opt.event && (!g->opt.tgid || th->tgid == g->opt.tgid) &&
	       (!g->opt.tid || th->tid == g->opt.tid) &&
	       (!g->opt.comm || !strcmp(g->sv->t.comms[th->comm], g->opt.comm));
}

/*
 * The nodes of sample i as the listing counts it; 0 if the ticks mode
 * leaves it out.
 */
static size_t sample_nodes(const struct callgraph *g, const struct stack_sample *s, uint32_t *nodes,
			   bool *delayed)
{
	bool clock = g->sv->time_events[s->event];
	size_t n = stack_view_nodes(g->sv, s->stack, clock, nodes, delayed);

	*delayed = *delayed && clock;
	if ((g->opt.ticks == CG_TICKS_PROMPT && *delayed) ||
	    (g->opt.ticks == CG_TICKS_DELAYED && !*delayed))
		return 0;
	return n;
}

static uint32_t arc_of(struct build *b, uint32_t parent, uint32_t child)
{
	struct callgraph *g = b->g;
	uint64_t *slot = u64map_slot(&b->arc_ix, (uint64_t)parent << 32 | child);

	if (!*slot) {
		ALLOC_GROW(g->arcs, g->n_arcs + 1, b->alloc_arcs);
		b->arc_stamp = xreallocarray(b->arc_stamp, b->alloc_arcs, sizeof(*b->arc_stamp));
		memset(&g->arcs[g->n_arcs], 0, sizeof(g->arcs[0]));
		g->arcs[g->n_arcs].parent = parent;
		g->arcs[g->n_arcs].child = child;
		b->arc_stamp[g->n_arcs] = 0;
		*slot = ++g->n_arcs;
	}
	return (uint32_t)(*slot - 1);
}

static void count_sample(struct build *b, uint64_t stamp, const uint32_t *nodes, size_t n,
			 uint64_t c, bool delayed)
{
	struct callgraph *g = b->g;

	g->samples += c;
	b->ns[nodes[0]].self += c;
	if (delayed) {
		g->delayed += c;
		b->ns[nodes[0]].delayed += c;
	}
	for (size_t i = 0; i < n; i++) {
		struct nstat *s = &b->ns[nodes[i]];
		uint32_t a;

		if (s->stamp != stamp) {
			s->stamp = stamp;
			s->total += c;
		}
		if (i + 1 == n || nodes[i + 1] == nodes[i])
			continue;
		a = arc_of(b, nodes[i + 1], nodes[i]);
		if (b->arc_stamp[a] == stamp)
			continue;
		b->arc_stamp[a] = stamp;
		g->arcs[a].samples += c;
		if (nodes[i] == nodes[0])
			g->arcs[a].self += c;
	}
}

static void count_all(struct build *b)
{
	const struct stack_table *t = &b->g->sv->t;
	uint32_t nodes[STACK_MAX_DEPTH];

	for (size_t i = 0; i < t->n_samples; i++) {
		const struct stack_sample *s = &t->samples[i];
		bool delayed;
		size_t n;

		if (wanted(b->g, s) && (n = sample_nodes(b->g, s, nodes, &delayed))) {
			count_sample(b, i + 1, nodes, n, s->count, delayed);
			b->g->ends[t->stacks[s->stack].end] += s->count;
		}
	}
}

/* ---- cycles: strongly connected components (Tarjan, iterative) ------------------------- */

struct tarjan {
	const struct callgraph *g;
	struct nstat *ns;
	uint32_t *first_out, *out;      /* adjacency: children of node v at out[first_out[v]..] */
	uint32_t *index, *low, *stack, *call, *edge;
	bool *on;
	uint32_t next_index, sp;
	uint32_t *comp;                 /* node -> component + 1 */
	uint32_t n_comp;
};

static void adjacency(struct tarjan *tj, size_t n)
{
	const struct callgraph *g = tj->g;

	tj->first_out = xcalloc(n + 2, sizeof(*tj->first_out));
	tj->out = xcalloc(g->n_arcs + 1, sizeof(*tj->out));
	for (size_t a = 0; a < g->n_arcs; a++)
		tj->first_out[g->arcs[a].parent + 2]++;
	for (size_t v = 0; v < n; v++)
		tj->first_out[v + 2] += tj->first_out[v + 1];
	for (size_t a = 0; a < g->n_arcs; a++)
		tj->out[tj->first_out[g->arcs[a].parent + 1]++] = g->arcs[a].child;
}

static void strongconnect(struct tarjan *tj, uint32_t root)
{
	uint32_t depth = 0;

	tj->call[0] = root;
	tj->edge[0] = tj->first_out[root];
	tj->index[root] = tj->low[root] = ++tj->next_index;
	tj->stack[tj->sp++] = root;
	tj->on[root] = true;
	for (;;) {
		uint32_t v = tj->call[depth];

		if (tj->edge[depth] < tj->first_out[v + 1]) {
			uint32_t w = tj->out[tj->edge[depth]++];

			if (!tj->index[w]) {
				tj->index[w] = tj->low[w] = ++tj->next_index;
				tj->stack[tj->sp++] = w;
				tj->on[w] = true;
				depth++;
				tj->call[depth] = w;
				tj->edge[depth] = tj->first_out[w];
			} else if (tj->on[w] && tj->index[w] < tj->low[v]) {
				tj->low[v] = tj->index[w];
			}
			continue;
		}
		if (tj->low[v] == tj->index[v]) {
			uint32_t w;

			tj->n_comp++;
			do {
				w = tj->stack[--tj->sp];
				tj->on[w] = false;
				tj->comp[w] = tj->n_comp;
			} while (w != v);
		}
		if (!depth)
			return;
		depth--;
		if (tj->low[v] < tj->low[tj->call[depth]])
			tj->low[tj->call[depth]] = tj->low[v];
	}
}

/* Numbers the cycles (components of two or more nodes) 1, 2, ... in ns[].cycle. */
static void find_cycles(struct build *b)
{
	struct callgraph *g = b->g;
	size_t n = g->sv->n_nodes;
	struct tarjan tj = { .g = g, .ns = b->ns };
	uint32_t *size, *number;

	adjacency(&tj, n);
	tj.index = xcalloc(n + 1, sizeof(uint32_t));
	tj.low = xcalloc(n + 1, sizeof(uint32_t));
	tj.stack = xcalloc(n + 1, sizeof(uint32_t));
	tj.call = xcalloc(n + 1, sizeof(uint32_t));
	tj.edge = xcalloc(n + 1, sizeof(uint32_t));
	tj.comp = xcalloc(n + 1, sizeof(uint32_t));
	tj.on = xcalloc(n + 1, sizeof(bool));
	for (uint32_t v = 0; v < n; v++)
		if (b->ns[v].total && !tj.index[v])
			strongconnect(&tj, v);
	size = xcalloc(tj.n_comp + 1, sizeof(uint32_t));
	number = xcalloc(tj.n_comp + 1, sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		size[tj.comp[v]]++;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t c = tj.comp[v];

		if (!b->ns[v].total || size[c] < 2)
			continue;
		if (!number[c])
			number[c] = ++g->n_cycles;
		b->ns[v].cycle = number[c];
	}
	free(size);
	free(number);
	free(tj.first_out);
	free(tj.out);
	free(tj.index);
	free(tj.low);
	free(tj.stack);
	free(tj.call);
	free(tj.edge);
	free(tj.comp);
	free(tj.on);
}

/* A cycle's total: the samples with any of its members on the stack. */
static void cycle_totals(struct build *b)
{
	const struct stack_table *t = &b->g->sv->t;
	uint32_t nodes[STACK_MAX_DEPTH];

	b->cycle_total = xcalloc(b->g->n_cycles + 1, sizeof(uint64_t));
	b->cycle_stamp = xcalloc(b->g->n_cycles + 1, sizeof(uint64_t));
	for (size_t i = 0; i < t->n_samples && b->g->n_cycles; i++) {
		const struct stack_sample *s = &t->samples[i];
		bool delayed;
		size_t n;

		if (!wanted(b->g, s) || !(n = sample_nodes(b->g, s, nodes, &delayed)))
			continue;
		for (size_t k = 0; k < n; k++) {
			uint32_t c = b->ns[nodes[k]].cycle;

			if (c && b->cycle_stamp[c] != i + 1) {
				b->cycle_stamp[c] = i + 1;
				b->cycle_total[c] += s->count;
			}
		}
	}
}

/* Numbers the cycles by their totals, the largest 1 (gprof's numbers are arbitrary). */
static void renumber_cycles(struct build *b)
{
	uint32_t n = b->g->n_cycles, *order, *rank;
	uint64_t *total;

	if (n < 2)
		return;
	order = xcalloc(n + 1, sizeof(*order));
	rank = xcalloc(n + 1, sizeof(*rank));
	total = xcalloc(n + 1, sizeof(*total));
	for (uint32_t c = 0; c < n; c++)
		order[c] = c + 1;
	/* n is small: an insertion sort, largest total first, then the old number */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && b->cycle_total[order[j]] > b->cycle_total[order[j - 1]]; j--) {
			uint32_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (uint32_t i = 0; i < n; i++) {
		rank[order[i]] = i + 1;
		total[i + 1] = b->cycle_total[order[i]];
	}
	for (size_t v = 0; v < b->g->sv->n_nodes; v++)
		if (b->ns[v].cycle)
			b->ns[v].cycle = rank[b->ns[v].cycle];
	memcpy(b->cycle_total, total, (n + 1) * sizeof(*total));
	free(order);
	free(rank);
	free(total);
}

/* ---- entries ------------------------------------------------------------------------ */

static const struct callgraph *sort_g;

static int cmp_entry(const void *pa, const void *pb)
{
	const struct cg_entry *a = pa, *b = pb;
	char x[512], y[512];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	callgraph_entry_name(sort_g, a, x, sizeof(x));
	callgraph_entry_name(sort_g, b, y, sizeof(y));
	return strcmp(x, y);
}

static int cmp_arc_by_samples(const void *pa, const void *pb)
{
	const struct cg_arc *a = &sort_g->arcs[*(const uint32_t *)pa];
	const struct cg_arc *b = &sort_g->arcs[*(const uint32_t *)pb];

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->parent != b->parent ? (a->parent < b->parent ? -1 : 1) :
	       a->child < b->child ? -1 : a->child > b->child;
}

static void make_entries(struct build *b)
{
	struct callgraph *g = b->g;
	size_t n = g->sv->n_nodes, k = 0;

	g->entries = xcalloc(n + g->n_cycles + 1, sizeof(*g->entries));
	for (uint32_t v = 0; v < n; v++) {
		struct cg_entry *e;

		if (!b->ns[v].total)
			continue;
		e = &g->entries[k++];
		e->node = v;
		e->cycle = b->ns[v].cycle;
		e->self = b->ns[v].self;
		e->total = b->ns[v].total;
		e->delayed = b->ns[v].delayed;
	}
	for (uint32_t c = 1; c <= g->n_cycles; c++) {
		struct cg_entry *e = &g->entries[k++];

		e->node = UINT32_MAX;
		e->cycle = c;
		e->total = b->cycle_total[c];
		for (uint32_t v = 0; v < n; v++)
			if (b->ns[v].cycle == c) {
				e->self += b->ns[v].self;
				e->delayed += b->ns[v].delayed;
			}
	}
	g->n_entries = k;
	sort_g = g;
	if (k)
		qsort(g->entries, k, sizeof(*g->entries), cmp_entry);
	g->entry_of = xcalloc(n + 1, sizeof(*g->entry_of));
	for (size_t i = 0; i < k; i++) {
		g->entries[i].index = (uint32_t)i + 1;
		if (g->entries[i].node != UINT32_MAX)
			g->entry_of[g->entries[i].node] = (uint32_t)i + 1;
	}
}

/* Parent and child arcs of every entry; a cycle's parents come from outside it. */
static void link_arcs(struct build *b)
{
	struct callgraph *g = b->g;

	for (size_t a = 0; a < g->n_arcs; a++) {
		const struct cg_arc *arc = &g->arcs[a];
		struct cg_entry *p = &g->entries[g->entry_of[arc->parent] - 1];
		struct cg_entry *c = &g->entries[g->entry_of[arc->child] - 1];

		p->children = xreallocarray(p->children, p->n_children + 1, sizeof(uint32_t));
		p->children[p->n_children++] = (uint32_t)a;
		c->parents = xreallocarray(c->parents, c->n_parents + 1, sizeof(uint32_t));
		c->parents[c->n_parents++] = (uint32_t)a;
	}
	for (size_t i = 0; i < g->n_entries; i++) {
		struct cg_entry *e = &g->entries[i];

		if (e->node != UINT32_MAX)
			continue;
		for (size_t a = 0; a < g->n_arcs; a++) {
			const struct cg_arc *arc = &g->arcs[a];

			if (b->ns[arc->child].cycle == e->cycle && b->ns[arc->parent].cycle != e->cycle) {
				e->parents = xreallocarray(e->parents, e->n_parents + 1, sizeof(uint32_t));
				e->parents[e->n_parents++] = (uint32_t)a;
			}
		}
	}
	sort_g = g;
	for (size_t i = 0; i < g->n_entries; i++) {
		if (g->entries[i].n_parents)
			qsort(g->entries[i].parents, g->entries[i].n_parents, sizeof(uint32_t),
			      cmp_arc_by_samples);
		if (g->entries[i].n_children)
			qsort(g->entries[i].children, g->entries[i].n_children, sizeof(uint32_t),
			      cmp_arc_by_samples);
	}
}

static bool has_event(const struct stack_view *sv, enum dcpi_event ev)
{
	for (size_t i = 0; i < sv->t.n_samples; i++)
		if (sv->t.samples[i].event == ev)
			return true;
	return false;
}

int callgraph_build(struct callgraph *g, const struct stack_view *sv, const struct callgraph_opts *o)
{
	struct build b = { g, NULL, 0, U64MAP_INIT, NULL, NULL, NULL };

	memset(g, 0, sizeof(*g));
	g->sv = sv;
	g->opt = *o;
	/* none because the stack files are damaged (recorded): an empty, partial graph */
	if (!has_event(sv, o->event) && !(!sv->t.n_samples && epoch_view_partial(sv->view)))
		return errorf("epoch %" PRIu32 " has no stacks of event '%s'", sv->view->seq,
			      event_name(o->event));
	for (size_t i = 0; i < sv->view->meta.n_events; i++) {
		const struct epoch_event *e = &sv->view->meta.events[i];

		if (e->event == o->event && e->period_in_ns)
			g->unit = (double)e->period / 1e9;
	}
	b.ns = xcalloc(sv->n_nodes + 1, sizeof(*b.ns));
	count_all(&b);
	find_cycles(&b);
	cycle_totals(&b);
	renumber_cycles(&b);
	make_entries(&b);
	link_arcs(&b);
	g->calls_measured = callgraph_call_counts(g);
	free(b.ns);
	free(b.arc_stamp);
	free(b.cycle_total);
	free(b.cycle_stamp);
	u64map_release(&b.arc_ix);
	return 0;
}

void callgraph_release(struct callgraph *g)
{
	for (size_t i = 0; i < g->n_entries; i++) {
		free(g->entries[i].parents);
		free(g->entries[i].children);
	}
	free(g->entries);
	free(g->entry_of);
	free(g->arcs);
	memset(g, 0, sizeof(*g));
}

uint64_t callgraph_user_samples(const struct callgraph *g, uint64_t *complete)
{
	*complete = g->ends[STACK_END_COMPLETE];
	return g->samples - g->ends[STACK_END_KERNEL];
}

const struct cg_entry *callgraph_entry(const struct callgraph *g, uint32_t node)
{
	return node < g->sv->n_nodes && g->entry_of[node] ? &g->entries[g->entry_of[node] - 1] : NULL;
}

bool callgraph_call_counts(struct callgraph *g)
{
	struct epoch_view *v = g->sv->view;
	struct watch_set ws = WATCH_SET_INIT;
	bool any = false;

	if (db_watch_load(v->db, v->seq, &ws))
		return false;  /* none (1), or unreadable (-1, reported) */
	for (size_t i = 0; i < g->n_entries; i++) {
		struct cg_entry *e = &g->entries[i];
		const struct sv_node *node;
		struct image *img;
		uint64_t off;

		if (e->node == UINT32_MAX)
			continue;
		node = &g->sv->nodes[e->node];
		if (!node->proc || node->kernel || !(img = epoch_view_image(v, node->image)) ||
		    !image_addr_to_offset(img, node->proc->start, &off))
			continue;
		if (watch_set_calls(&ws, v->images[node->image].rec->key, off, &e->calls))
			e->calls_measured = any = true;
	}
	watch_set_release(&ws);
	return any;
}

void callgraph_entry_name(const struct callgraph *g, const struct cg_entry *e, char *buf,
			  size_t size)
{
	if (e->node == UINT32_MAX)
		snprintf(buf, size, "<cycle %" PRIu32 " as a whole>", e->cycle);
	else if (e->cycle)
		snprintf(buf, size, "%s <cycle %" PRIu32 ">", g->sv->nodes[e->node].name, e->cycle);
	else
		snprintf(buf, size, "%s", g->sv->nodes[e->node].name);
}

/* ---- text ---------------------------------------------------------------------------- */

/* A quantity of samples as the listing shows it: seconds for a clock, else samples. */
static void amount(const struct callgraph *g, uint64_t n, char *buf, size_t size)
{
	if (g->unit > 0)
		snprintf(buf, size, "%.3f", (double)n * g->unit);
	else
		snprintf(buf, size, "%" PRIu64, n);
}

static double pct(const struct callgraph *g, uint64_t n)
{
	return g->samples ? 100.0 * (double)n / (double)g->samples : 0.0;
}

static bool selected(const uint32_t *nodes, size_t n, const struct cg_entry *e)
{
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (nodes[i] == e->node)
			return true;
	return false;
}

/*
 * gprof's called/total on an arc: the calls along it are never measured
 * (the stopwatch counts entries, not callers); the total, the calls of the
 * arc's child, where dcpiwatch counted them.
 */
static void called(const struct cg_arc *a, const struct cg_entry *child, char *buf, size_t size)
{
	if (a && a->calls)
		snprintf(buf, size, "%" PRIu64, a->calls);
	else if (child && child->calls_measured)
		snprintf(buf, size, "-/%" PRIu64, child->calls);
	else
		snprintf(buf, size, "-");
}

/* One parent or child line: the arc's share, and the other end's name. */
static void arc_line(const struct callgraph *g, struct draw *out, const struct cg_arc *a, uint32_t other,
		     bool in_cycle)
{
	const struct cg_entry *o = callgraph_entry(g, other);
	char s[32], d[32], c[32], name[512];

	callgraph_entry_name(g, o, name, sizeof(name));
	called(a, callgraph_entry(g, a->child), c, sizeof(c));
	if (in_cycle) {
		draw_printf(out, STYLE_DIM, "%12s %8s %11s %7s       %s [%" PRIu32 "]", "", "", "", c,
			    name, o->index);
		draw_eol(out);
		return;
	}
	amount(g, a->self, s, sizeof(s));
	amount(g, a->samples - a->self, d, sizeof(d));
	draw_printf(out, STYLE_NORMAL, "%12s %8s %11s %7s       %s [%" PRIu32 "]", "", s, d, c, name,
		    o->index);
	draw_eol(out);
}

static bool same_cycle(const struct callgraph *g, uint32_t x, uint32_t y)
{
	const struct cg_entry *a = callgraph_entry(g, x), *b = callgraph_entry(g, y);

	return a && b && a->cycle && a->cycle == b->cycle;
}

/* An entry's own line: "[index]  %time self descendants called name [index]". */
static void primary_line(const struct callgraph *g, struct draw *out, const struct cg_entry *e,
			 const char *s, const char *d, const char *name)
{
	draw_printf(out, STYLE_NORMAL, "[%" PRIu32 "]%*s ", e->index,
		    e->index < 10 ? 4 : e->index < 100 ? 3 : e->index < 1000 ? 2 : 1, "");
	draw_printf(out, draw_share_style(pct(g, e->total) / 100, e->total), "%5.1f", pct(g, e->total));
	char c[32] = "-";

	if (e->calls_measured)
		snprintf(c, sizeof(c), "%" PRIu64, e->calls);
	draw_printf(out, STYLE_NORMAL, " %8s %11s %7s   ", s, d, c);
	draw_printf(out, STYLE_LABEL, "%s [%" PRIu32 "]", name, e->index);
	draw_eol(out);
}

static void cycle_entry(const struct callgraph *g, struct draw *out, const struct cg_entry *e)
{
	char s[32], d[32], name[512];

	for (size_t i = 0; i < e->n_parents; i++)
		arc_line(g, out, &g->arcs[e->parents[i]], g->arcs[e->parents[i]].parent, false);
	amount(g, e->self, s, sizeof(s));
	amount(g, e->total - e->self, d, sizeof(d));
	callgraph_entry_name(g, e, name, sizeof(name));
	primary_line(g, out, e, s, d, name);
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct cg_entry *m = &g->entries[i];

		if (m->node == UINT32_MAX || m->cycle != e->cycle)
			continue;
		amount(g, m->self, s, sizeof(s));
		amount(g, m->total - m->self, d, sizeof(d));
		callgraph_entry_name(g, m, name, sizeof(name));
		draw_printf(out, STYLE_NORMAL, "%12s %8s %11s %7s       %s [%" PRIu32 "]", "", s, d, "-",
			    name, m->index);
		draw_eol(out);
	}
}

static void entry(const struct callgraph *g, struct draw *out, const struct cg_entry *e)
{
	char s[32], d[32], name[512];

	if (e->node == UINT32_MAX) {
		cycle_entry(g, out, e);
		return;
	}
	for (size_t i = 0; i < e->n_parents; i++) {
		const struct cg_arc *a = &g->arcs[e->parents[i]];

		arc_line(g, out, a, a->parent, same_cycle(g, a->parent, a->child));
	}
	if (!e->n_parents) {
		draw_printf(out, STYLE_DIM, "%12s %8s %11s %7s       <spontaneous>", "", "", "", "");
		draw_eol(out);
	}
	amount(g, e->self, s, sizeof(s));
	amount(g, e->total - e->self, d, sizeof(d));
	callgraph_entry_name(g, e, name, sizeof(name));
	primary_line(g, out, e, s, d, name);
	for (size_t i = 0; i < e->n_children; i++) {
		const struct cg_arc *a = &g->arcs[e->children[i]];

		arc_line(g, out, a, a->child, same_cycle(g, a->parent, a->child));
	}
}

static const char dashes[] = "-----------------------------------------------";

void callgraph_draw(const struct callgraph *g, struct draw *out, const uint32_t *nodes, size_t n)
{
	const char *unit = g->unit > 0 ? "seconds" : "samples";

	draw_printf(out, STYLE_DIM, "Call graph: %s are the samples' own (self) and those of the "
		    "procedures they", unit);
	draw_eol(out);
	draw_text(out, STYLE_DIM, "called (descendants); a parent's line is the time spent on its "
		  "behalf, a");
	draw_eol(out);
	draw_text(out, STYLE_DIM, g->calls_measured ?
		  "child's the time it took for this procedure.  Calls: dcpiwatch's counts," :
		  "child's the time it took for this procedure.  Calls were not "
		  "counted (-).");
	if (g->calls_measured) {
		draw_eol(out);
		draw_text(out, STYLE_DIM, "a procedure's own; per caller unknown (-/its total); "
			  "- where not counted.");
	}
	draw_eol(out);
	draw_eol(out);
	draw_printf(out, STYLE_HEADER, "%-6s %5s %8s %11s %7s   %s", "index", "%time", "self",
		    "descendants", "called", "name");
	draw_eol(out);
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct cg_entry *e = &g->entries[i];

		if (!selected(nodes, n, e))
			continue;
		entry(g, out, e);
		draw_text(out, STYLE_DIM, dashes);
		draw_eol(out);
	}
}

static const struct callgraph *flat_g;

static int cmp_flat(const void *pa, const void *pb)
{
	const struct cg_entry *a = &flat_g->entries[*(const uint32_t *)pa];
	const struct cg_entry *b = &flat_g->entries[*(const uint32_t *)pb];

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The index shown for node: its entry's in g (the listing numbers every procedure). */
static uint32_t index_in(const struct callgraph *g, uint32_t node)
{
	const struct cg_entry *e = callgraph_entry(g, node);

	return e ? e->index : 0;
}

void callgraph_draw_flat(const struct callgraph *g, struct draw *out, const uint32_t *nodes, size_t n,
			 const char *title, const struct callgraph *numbering)
{
	uint32_t *order = xcalloc(g->n_entries + 1, sizeof(*order));
	size_t k = 0;
	uint64_t cum = 0;

	for (size_t i = 0; i < g->n_entries; i++)
		if (g->entries[i].node != UINT32_MAX && selected(nodes, n, &g->entries[i]))
			order[k++] = (uint32_t)i;
	flat_g = g;
	if (k)
		qsort(order, k, sizeof(*order), cmp_flat);
	draw_text(out, STYLE_HEADER, title);
	draw_eol(out);
	draw_eol(out);
	draw_text(out, STYLE_HEADER, g->unit > 0 ? "  %   cumulative     self             self    total" :
						     "  %   cumulative     self");
	draw_eol(out);
	draw_text(out, STYLE_HEADER, g->unit > 0 ?
		  " time    seconds  seconds   calls  ms/call  ms/call  name" :
		  " time    samples  samples   calls  name");
	draw_eol(out);
	for (size_t i = 0; i < k; i++) {
		const struct cg_entry *e = &g->entries[order[i]];
		char c[32], s[32], calls[32], selfpc[32], totpc[32], name[512];
		uint32_t idx;

		if (!e->self)
			continue;
		cum += e->self;
		amount(g, cum, c, sizeof(c));
		amount(g, e->self, s, sizeof(s));
		callgraph_entry_name(g, e, name, sizeof(name));
		idx = numbering ? index_in(numbering, e->node) : e->index;
		draw_printf(out, draw_share_style(pct(g, e->self) / 100, e->self), "%5.1f",
			    pct(g, e->self));
		/* gprof's calls and times per call where dcpiwatch counted the calls. */
		snprintf(calls, sizeof(calls), "-");
		selfpc[0] = totpc[0] = 0;
		if (e->calls_measured) {
			snprintf(calls, sizeof(calls), "%" PRIu64, e->calls);
			if (e->calls && g->unit > 0) {
				snprintf(selfpc, sizeof(selfpc), "%.3f",
					 (double)e->self * g->unit * 1e3 / (double)e->calls);
				snprintf(totpc, sizeof(totpc), "%.3f",
					 (double)e->total * g->unit * 1e3 / (double)e->calls);
			}
		}
		if (g->unit > 0)
			draw_printf(out, STYLE_NORMAL, " %10s %8s %7s %8s %8s  %s [%" PRIu32 "]", c, s,
				    calls, selfpc, totpc, name, idx);
		else
			draw_printf(out, STYLE_NORMAL, " %10s %8s %7s  %s [%" PRIu32 "]", c, s, calls,
				    name, idx);
		draw_eol(out);
	}
	free(order);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_node(const struct callgraph *g, struct json_writer *w, uint32_t node)
{
	json_key(w, "procedure");
	json_string(w, g->sv->nodes[node].name);
	json_key(w, "image");
	json_string(w, stack_view_node_image(g->sv, node));
}

static void json_arcs(const struct callgraph *g, struct json_writer *w, const char *key,
		      const uint32_t *arcs, size_t n, bool parents)
{
	json_key(w, key);
	json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		const struct cg_arc *a = &g->arcs[arcs[i]];

		json_object_begin(w);
		json_node(g, w, parents ? a->parent : a->child);
		json_key(w, "samples");
		json_u64(w, a->samples);
		json_key(w, "self");
		json_u64(w, a->self);
		json_key(w, "called");
		if (a->calls)
			json_u64(w, a->calls);
		else
			json_null(w);
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_entry(const struct callgraph *g, struct json_writer *w, const struct cg_entry *e)
{
	json_object_begin(w);
	json_key(w, "index");
	json_u64(w, e->index);
	json_node(g, w, e->node);
	json_key(w, "self");
	json_u64(w, e->self);
	json_key(w, "total");
	json_u64(w, e->total);
	json_key(w, "delayed");
	json_u64(w, e->delayed);
	json_key(w, "cycle");
	if (e->cycle)
		json_u64(w, e->cycle);
	else
		json_null(w);
	json_key(w, "called");
	if (e->calls_measured)
		json_u64(w, e->calls);
	else
		json_null(w);
	json_arcs(g, w, "parents", e->parents, e->n_parents, true);
	json_arcs(g, w, "children", e->children, e->n_children, false);
	json_object_end(w);
}

static void json_cycle(const struct callgraph *g, struct json_writer *w, const struct cg_entry *e)
{
	json_object_begin(w);
	json_key(w, "cycle");
	json_u64(w, e->cycle);
	json_key(w, "index");
	json_u64(w, e->index);
	json_key(w, "self");
	json_u64(w, e->self);
	json_key(w, "total");
	json_u64(w, e->total);
	json_key(w, "members");
	json_array_begin(w);
	for (size_t i = 0; i < g->n_entries; i++)
		if (g->entries[i].node != UINT32_MAX && g->entries[i].cycle == e->cycle) {
			json_object_begin(w);
			json_node(g, w, g->entries[i].node);
			json_object_end(w);
		}
	json_array_end(w);
	json_arcs(g, w, "parents", e->parents, e->n_parents, true);
	json_object_end(w);
}

void callgraph_json(const struct callgraph *g, struct json_writer *w, const uint32_t *nodes,
		    size_t n)
{
	static const char *const ticks[] = { "all", "prompt", "delayed" };

	json_object_begin(w);
	json_key(w, "event");
	json_string(w, event_name(g->opt.event));
	json_key(w, "ticks");
	json_string(w, ticks[g->opt.ticks]);
	json_key(w, "samples");
	json_u64(w, g->samples);
	json_key(w, "delayed");
	json_u64(w, g->delayed);
	json_key(w, "stacks");
	json_object_begin(w);
	for (int i = 0; i < STACK_END__COUNT; i++) {
		json_key(w, stack_end_name((enum stack_end)i));
		json_u64(w, g->ends[i]);
	}
	json_object_end(w);
	json_key(w, "seconds_per_sample");
	if (g->unit > 0)
		json_double(w, g->unit, 9);
	else
		json_null(w);
	json_key(w, "procedures");
	json_array_begin(w);
	for (size_t i = 0; i < g->n_entries; i++)
		if (g->entries[i].node != UINT32_MAX && selected(nodes, n, &g->entries[i]))
			json_entry(g, w, &g->entries[i]);
	json_array_end(w);
	json_key(w, "cycles");
	json_array_begin(w);
	for (size_t i = 0; i < g->n_entries; i++)
		if (g->entries[i].node == UINT32_MAX)
			json_cycle(g, w, &g->entries[i]);
	json_array_end(w);
	json_object_end(w);
}

static int cmp_index(const void *pa, const void *pb)
{
	const struct cg_entry *a = &flat_g->entries[*(const uint32_t *)pa];
	const struct cg_entry *b = &flat_g->entries[*(const uint32_t *)pb];
	char x[512], y[512];
	int r;

	callgraph_entry_name(flat_g, a, x, sizeof(x));
	callgraph_entry_name(flat_g, b, y, sizeof(y));
	if ((r = strcmp(x, y)))
		return r;
	return a->index < b->index ? -1 : a->index > b->index;
}

void callgraph_draw_index(const struct callgraph *g, struct draw *out)
{
	uint32_t *order = xcalloc(g->n_entries + 1, sizeof(*order));

	for (size_t i = 0; i < g->n_entries; i++)
		order[i] = (uint32_t)i;
	flat_g = g;
	if (g->n_entries)
		qsort(order, g->n_entries, sizeof(*order), cmp_index);
	draw_text(out, STYLE_HEADER, "Index by procedure name:");
	draw_eol(out);
	draw_eol(out);
	for (size_t i = 0; i < g->n_entries; i++) {
		const struct cg_entry *e = &g->entries[order[i]];
		char name[512];

		callgraph_entry_name(g, e, name, sizeof(name));
		draw_printf(out, STYLE_NORMAL, "%8s[%" PRIu32 "] %s", "", e->index, name);
		if (e->node != UINT32_MAX)
			draw_printf(out, STYLE_DIM, " (%s)", stack_view_node_image_base(g->sv, e->node));
		draw_eol(out);
	}
	free(order);
}
