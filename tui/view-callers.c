/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-callers.c - the callers and callees of one procedure, from the
 * epoch's sampled stacks (dcpicg's entry of it, analysis/callgraph.h): its
 * parents, each with the samples of the procedure spent on its behalf
 * (its own and its descendants'), the procedure itself (self, total),
 * and its children, each with the samples it took for this procedure.
 * Enter follows a parent or a child: the view of that procedure.
 * Reached by C from the procedures and procedure views.
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data-callers.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum line_kind { L_TITLE, L_PARENT, L_SELF, L_CHILD, L_NONE };

struct cline {
	enum line_kind kind;
	uint32_t node;            /* the other end (L_SELF: the procedure) */
	uint64_t samples, self;   /* an arc's samples and the callee's own part of them */
	const char *title;        /* L_TITLE, L_NONE */
};

struct callers_view {
	const struct callers_data *cd;
	const struct cg_entry *e;
	struct cline *lines;
	size_t n, alloc;
};

#define CV(v) ((struct callers_view *)(v)->priv)

static void add(struct callers_view *cv, struct cline l)
{
	ALLOC_GROW(cv->lines, cv->n + 1, cv->alloc);
	cv->lines[cv->n++] = l;
}

/* Parents, the procedure, children: as gprof lists an entry. */
static void build(struct callers_view *cv)
{
	const struct callgraph *g = &cv->cd->g;
	const struct cg_entry *e = cv->e;

	add(cv, (struct cline){ .kind = L_TITLE, .title = "called by" });
	for (size_t i = 0; i < e->n_parents; i++) {
		const struct cg_arc *a = &g->arcs[e->parents[i]];

		add(cv, (struct cline){ L_PARENT, a->parent, a->samples, a->self, NULL });
	}
	if (!e->n_parents)
		add(cv, (struct cline){ .kind = L_NONE, .title = "<spontaneous>: never seen called" });
	add(cv, (struct cline){ L_SELF, e->node, e->total, e->self, NULL });
	add(cv, (struct cline){ .kind = L_TITLE, .title = "calls" });
	for (size_t i = 0; i < e->n_children; i++) {
		const struct cg_arc *a = &g->arcs[e->children[i]];

		add(cv, (struct cline){ L_CHILD, a->child, a->samples, a->self, NULL });
	}
	if (!e->n_children)
		add(cv, (struct cline){ .kind = L_NONE, .title = "nothing: every sample is its own" });
}

static void callers_reload(struct view *v)
{
	struct callers_view *cv = CV(v);
	const struct callers_data *cd = data_callers(v->src, v->loc.epoch, tui_event(v->tui), v);
	uint32_t node;

	cv->n = 0;
	cv->e = NULL;
	cv->cd = cd;
	v->empty = "(loading)";
	if (!cd) {
		view_set_lines(v, 0);
		return;
	}
	if (cd->status) {
		v->empty = cd->error;
		view_set_lines(v, 0);
		return;
	}
	node = callers_find(cd, v->loc.image, v->loc.address, v->loc.procedure);
	if (node == UINT32_MAX || !(cv->e = callgraph_entry(&cd->g, node))) {
		v->empty = "(this procedure is on no sampled stack of the event)";
		view_set_lines(v, 0);
		return;
	}
	build(cv);
	view_set_lines(v, cv->n);
	if (v->pos < cv->n && cv->lines[v->pos].kind != L_PARENT && cv->lines[v->pos].kind != L_CHILD)
		for (size_t i = 0; i < cv->n; i++)
			if (cv->lines[i].kind == L_SELF)
				view_move_to(v, i);
}

static int callers_open(struct view *v)
{
	if (!v->loc.epoch || (!v->loc.procedure && !v->loc.address))
		return errorf("no procedure to show the callers of");
	callers_reload(v);
	return 0;
}

static void callers_close(struct view *v)
{
	free(CV(v)->lines);
}

static void draw_node(struct view *v, uint32_t node, enum style st, struct draw *d)
{
	const struct callers_data *cd = CV(v)->cd;
	const struct cg_entry *e = callgraph_entry(&cd->g, node);
	char name[512];
	char *safe;

	if (e)
		callgraph_entry_name(&cd->g, e, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", cd->sv.nodes[node].name);
	safe = display_safe(name);
	draw_text(d, st, safe);
	draw_printf(d, STYLE_DIM, "  %s", stack_view_node_image_base(&cd->sv, node));
	free(safe);
}

static void callers_draw(struct view *v, size_t line, struct draw *d)
{
	const struct callers_view *cv = CV(v);
	const struct cline *l = &cv->lines[line];
	uint64_t total = cv->e->total;
	double share = total ? (double)l->samples / (double)total : 0;

	switch (l->kind) {
	case L_TITLE:
		draw_text(d, STYLE_SECTION, l->title);
		return;
	case L_NONE:
		draw_printf(d, STYLE_DIM, "  %s", l->title);
		return;
	case L_SELF:
		draw_printf(d, STYLE_NORMAL, "%9" PRIu64 " %6.1f%% %8" PRIu64 "  ", l->samples,
			    cv->cd->g.samples ? 100.0 * (double)l->samples / (double)cv->cd->g.samples
					      : 0.0, l->self);
		draw_node(v, l->node, STYLE_LABEL, d);
		return;
	default:
		draw_printf(d, draw_share_style(share, l->samples), "%9" PRIu64 " %6.1f%% ",
			    l->samples, 100 * share);
		draw_printf(d, STYLE_NORMAL, "%8" PRIu64 "    ", l->self);
		draw_node(v, l->node, STYLE_NORMAL, d);
	}
}

static void callers_draw_header(struct view *v, struct draw *d)
{
	draw_text(d, STYLE_HEADER, "  samples       % own part  procedure  image");
}

static enum view_result callers_request(struct view *v, enum request req, const char *arg)
{
	const struct callers_view *cv = CV(v);
	const struct cline *l = v->pos < cv->n ? &cv->lines[v->pos] : NULL;
	struct view_loc loc = { .epoch = v->loc.epoch };
	const struct sv_node *n;

	if ((req == REQ_MOVE_UP || req == REQ_MOVE_DOWN) && l) {
		/* Up and down step over the headings: from procedure to procedure. */
		for (size_t i = v->pos; req == REQ_MOVE_UP ? i-- > 0 : ++i < cv->n;)
			if (cv->lines[i].kind != L_TITLE && cv->lines[i].kind != L_NONE) {
				view_move_to(v, i);
				break;
			}
		return VIEW_DONE;
	}
	if (req != REQ_ENTER && req != REQ_CALLERS)
		return VIEW_PASS;
	if (!l || (l->kind != L_PARENT && l->kind != L_CHILD))
		return VIEW_DONE;
	n = &cv->cd->sv.nodes[l->node];
	loc.image = (char *)callers_node_key(cv->cd, l->node);
	loc.procedure = (char *)n->name;
	loc.address = n->proc ? n->proc->start : 0;
	tui_open_view(v->tui, "callers", &loc);
	return VIEW_DONE;
}

static void callers_title(struct view *v, struct strbuf *sb)
{
	const struct callers_view *cv = CV(v);
	char *safe = display_safe(v->loc.procedure ? v->loc.procedure : "?");

	strbuf_addf(sb, "callers of %s, epoch ", safe);
	free(safe);
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	if (!cv->e)
		return;
	strbuf_addf(sb, ": %" PRIu64 " %s samples with it on the stack (%.1f%%), %" PRIu64
		    " in it", cv->e->total, event_name(cv->cd->event),
		    cv->cd->g.samples ? 100.0 * (double)cv->e->total / (double)cv->cd->g.samples : 0,
		    cv->e->self);
}

const struct view_ops callers_view_ops = {
	.name = "callers",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "The callers and callees of a procedure, from the sampled stacks (dcpi-tui\n"
		  "needs an epoch recorded with -g; dcpicg prints the same entries).  Under\n"
		  "\"called by\": each parent with the samples of this procedure spent on its\n"
		  "behalf (samples, and % of this procedure's), of which its own (own part);\n"
		  "then the procedure: the samples with it on the stack, % of the epoch's, and\n"
		  "its own.  Under \"calls\": each child with the samples it took for this\n"
		  "procedure.  Calls are not counted (sampling cannot).  Enter follows a parent\n"
		  "or a child; q goes back.",
	.priv_size = sizeof(struct callers_view),
	.open = callers_open,
	.close = callers_close,
	.reload = callers_reload,
	.draw = callers_draw,
	.draw_header = callers_draw_header,
	.request = callers_request,
	.title = callers_title,
};
