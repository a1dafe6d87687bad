/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-stopwatch.c - the stopwatch view: an epoch's dcpiwatch results,
 * a row per function (its calls, open and unwound calls, wall time mean,
 * min, max, standard deviation, on-CPU mean), a row per thread under it,
 * its events, and the log2 histogram of its wall times.  The rows and the
 * histogram are drawn by analysis/watchreport.h, as dcpiwatch prints them.
 */
#include "config.h"
#include "tui/view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/watchreport.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/data-watch.h"
#include "tui/tui.h"

enum sw_kind { SW_FUNCTION, SW_THREAD, SW_EVENT, SW_HIST_HEAD, SW_HIST, SW_BLANK };

struct sw_line {
	enum sw_kind kind;
	const struct watch_rec *r;
	unsigned k;             /* SW_EVENT: the event; SW_HIST: the bucket */
	uint64_t max;           /* SW_HIST: the largest bucket's count */
};

struct sw_view {
	const struct watch_data *wd;
	struct sw_line *lines;
	size_t n, alloc;
};

#define SV(v) ((struct sw_view *)(v)->priv)

static void add(struct sw_view *sv, enum sw_kind kind, const struct watch_rec *r, unsigned k,
		uint64_t max)
{
	ALLOC_GROW(sv->lines, sv->n + 1, sv->alloc);
	sv->lines[sv->n++] = (struct sw_line){ kind, r, k, max };
}

static void add_function(struct sw_view *sv, const struct watch_rec *r)
{
	const struct watch_set *th = &sv->wd->threads;
	unsigned lo, hi;
	uint64_t max;

	if (sv->n)
		add(sv, SW_BLANK, NULL, 0, 0);
	add(sv, SW_FUNCTION, r, 0, 0);
	for (size_t i = 0; i < th->n; i++)
		if (th->v[i].tid && watch_same_target(&th->v[i], r))
			add(sv, SW_THREAD, &th->v[i], 0, 0);
	for (unsigned i = 0; i < r->nevents; i++)
		if (r->ev[i].st.n)
			add(sv, SW_EVENT, r, i, 0);
	if (!watch_hist_range(r, &lo, &hi, &max))
		return;
	add(sv, SW_HIST_HEAD, r, 0, 0);
	for (unsigned k = lo; k <= hi; k++)
		add(sv, SW_HIST, r, k, max);
}

static void stopwatch_reload(struct view *v)
{
	struct sw_view *sv = SV(v);

	sv->n = 0;
	sv->wd = data_watch(v->tui, v->loc.epoch, v);
	if (!sv->wd) {
		v->empty = "(reading the stopwatch results...)";
	} else if (sv->wd->status) {
		v->empty = sv->wd->status > 0 ? "(no stopwatch results in this epoch: dcpiwatch -d DIR stores them)"
					       : "(the stopwatch results cannot be read: see the messages, M)";
	} else {
		for (size_t i = 0; i < sv->wd->functions.n; i++)
			add_function(sv, &sv->wd->functions.v[i]);
	}
	view_set_lines(v, sv->n);
}

static int stopwatch_open(struct view *v)
{
	stopwatch_reload(v);
	return 0;
}

static void stopwatch_close(struct view *v)
{
	free(SV(v)->lines);
}

static void stopwatch_draw(struct view *v, size_t line, struct draw *d)
{
	const struct sw_line *l = &SV(v)->lines[line];
	char label[64];

	switch (l->kind) {
	case SW_FUNCTION:
		watch_row_draw(l->r, d, l->r->name);
		break;
	case SW_THREAD:
		snprintf(label, sizeof(label), "  %" PRIu32 "/%" PRIu32 " %s", l->r->pid, l->r->tid,
			 l->r->comm);
		watch_row_draw(l->r, d, label);
		break;
	case SW_EVENT:
		watch_event_draw(l->r, d, l->k);
		break;
	case SW_HIST_HEAD:
		watch_hist_header_draw(d);
		break;
	case SW_HIST:
		watch_hist_line_draw(l->r, d, l->k, l->max, 40);
		break;
	case SW_BLANK:
		break;
	}
}

static void stopwatch_draw_header(struct view *v, struct draw *d)
{
	(void)v;
	watch_header_draw(d);
}

static void stopwatch_title(struct view *v, struct strbuf *sb)
{
	const struct watch_data *wd = SV(v)->wd;

	strbuf_addf(sb, "stopwatch of epoch %" PRIu32, v->loc.epoch);
	if (wd && !wd->status)
		strbuf_addf(sb, ": %zu function%s", wd->functions.n, wd->functions.n == 1 ? "" : "s");
}

/* :goto FUNCTION */
static int stopwatch_go_to(struct view *v, const char *what)
{
	const struct sw_view *sv = SV(v);

	for (size_t i = 0; i < sv->n; i++)
		if (sv->lines[i].kind == SW_FUNCTION && !strcmp(sv->lines[i].r->name, what)) {
			view_move_to(v, i);
			return 0;
		}
	return errorf("no function '%s' in the stopwatch results", what);
}

static void stopwatch_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	const struct sw_view *sv = SV(v);

	if (kind != ARG_GOTO)
		return;
	for (size_t i = 0; i < sv->n; i++)
		if (sv->lines[i].kind == SW_FUNCTION)
			candidates_add(c, sv->lines[i].r->name);
}

const struct view_ops stopwatch_view_ops = {
	.name = "stopwatch",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "dcpiwatch's results stored in the epoch (dcpiwatch -d DIR): per function its\n"
		  "calls, those still running at the end (open) and those a longjmp or an\n"
		  "exception left (unwound); the wall time per completed call (mean, min, max,\n"
		  "standard deviation) and the on-CPU mean; a row per thread (pid/tid command),\n"
		  "each counted event per call, and the histogram of the wall times in\n"
		  "powers of two.",
	.priv_size = sizeof(struct sw_view),
	.open = stopwatch_open,
	.close = stopwatch_close,
	.reload = stopwatch_reload,
	.draw = stopwatch_draw,
	.draw_header = stopwatch_draw_header,
	.title = stopwatch_title,
	.go_to = stopwatch_go_to,
	.complete = stopwatch_complete,
};
