/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/command.c - the requests that belong to the session rather than to a
 * view: switching views and epochs, search, the prompt, dumps, reload.
 */
#include "config.h"
#include "tui/session.h"

#include "core/die.h"
#include "core/event.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "tui/data.h"
#include "tui/data-proc.h"
#include "tui/display.h"
#include "tui/prompt.h"
#include "tui/table.h"
#include "tui/views.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shows the view of ops: back to it if it is on the stack, else opened on top. */
static void show_view(struct tui *t, const struct view_ops *ops)
{
	struct view_loc loc = { .epoch = t->epoch };

	for (size_t i = t->depth; i-- > 0;) {
		if (t->stack[i]->ops == ops) {
			tui_pop_to(t, i + 1);
			return;
		}
	}
	tui_push(t, ops, &loc);
}

/* Opens the view of ops on top, or closes it if it is on top already (help). */
static void toggle_view(struct tui *t, const struct view_ops *ops)
{
	struct view_loc loc = { .epoch = t->epoch };
	struct view *v = tui_view(t);

	if (v && v->ops == ops && t->depth > 1)
		tui_pop_to(t, t->depth - 1);
	else
		tui_push(t, ops, &loc);
}

static int resolve_epoch(struct tui *t, const char *name, uint32_t *seq)
{
	if (!t->db)
		return errorf("no database is open ('%s')", t->db_path);
	return db_epoch_resolve(t->db, name, seq);
}

static void do_epoch(struct tui *t, const char *arg)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t seq;

	if (resolve_epoch(t, arg, &seq))
		return;
	tui_set_epoch(t, seq);
	tui_epoch_name(t, seq, &sb);
	tui_info(t, "epoch %s", sb.buf);
	strbuf_release(&sb);
}

static void do_event(struct tui *t, const char *arg)
{
	int ev = event_lookup(arg);

	if (ev < 0) {
		struct strbuf sb = STRBUF_INIT;

		for (int e = 0; e < EVENT__COUNT; e++)
			strbuf_addf(&sb, "%s%s", e ? ", " : "", event_name((enum dcpi_event)e));
		errorf("unknown event '%s' (events: %s)", arg, sb.buf);
		strbuf_release(&sb);
		return;
	}
	tui_set_event(t, ev);
	tui_info(t, "showing %s samples", event_name((enum dcpi_event)ev));
}

/* :normalize [total|period]: without an argument, the other one. */
static void do_normalize(struct tui *t, const char *arg)
{
	bool period;

	if (!arg || !*arg)
		period = !t->norm_period;
	else if (!strcmp(arg, "period"))
		period = true;
	else if (!strcmp(arg, "total"))
		period = false;
	else {
		errorf("unknown normalisation '%s' (total or period)", arg);
		return;
	}
	if (period != t->norm_period)
		tui_set_norm_period(t, period);
	tui_info(t, period ? "diffs compare time: samples times their period, for runs of the same work"
		 : "diffs compare shares: samples over each epoch's total");
}

static void do_diff(struct tui *t, const char *arg)
{
	struct view_loc loc = { 0 };

	if (arg) {
		char a[128], b[128], extra;

		if (sscanf(arg, "%127s %127s %c", a, b, &extra) != 2) {
			errorf("':diff' takes two epochs, or none for the marked pair");
			return;
		}
		if (resolve_epoch(t, a, &loc.epoch) || resolve_epoch(t, b, &loc.epoch_b))
			return;
		t->marks[0] = loc.epoch;
		t->marks[1] = loc.epoch_b;
	} else if (!t->marks[0] || !t->marks[1]) {
		errorf("mark two epochs with m in the epochs view, or give two: ':diff A B'");
		return;
	}
	loc.epoch = t->marks[0];
	loc.epoch_b = t->marks[1];
	tui_open_view(t, "diff", &loc);
}

static void set_search(struct tui *t, const char *pattern)
{
	if (t->search_ok)
		view_pattern_release(&t->search_pat);
	free(t->search);
	t->search = xstrdup(pattern);
	t->search_ok = !view_pattern_init(&t->search_pat, pattern);
}

static void find(struct tui *t, int dir)
{
	struct view *v = tui_view(t);
	bool wrapped;
	long line;

	if (!t->search) {
		errorf("no search yet (/ starts one)");
		return;
	}
	if (!t->search_ok || !v)
		return;
	line = view_search(v, &t->search_pat, dir, &wrapped);
	if (line < 0) {
		errorf("no match for '%s'", t->search);
		return;
	}
	view_move_to(v, (size_t)line);
	if (wrapped)
		tui_info(t, "search wrapped around: '%s'", t->search);
	else
		tui_info(t, "/%s", t->search);
}

static void do_prompt(struct tui *t, const char *initial)
{
	bool search = initial && !strcmp(initial, "/");
	char *line;

	if (t->prompt.active) {
		errorf("the prompt is open already");
		return;
	}
	line = prompt_read(t, search ? "/" : ":", search ? NULL : initial);
	if (!line)
		return;
	if (search)
		tui_request(t, REQ_SEARCH, line, false);
	else
		tui_command(t, line);
	free(line);
}

static void save_display(struct tui *t, const char *arg)
{
	bool attrs = false;

	if (!strncmp(arg, "-a ", 3)) {
		attrs = true;
		arg += 3;
		arg += strspn(arg, " ");
	}
	display_redraw(t);
	display_save(t, arg, attrs);
}

static void save_view(struct tui *t, const char *arg)
{
	struct view *v = tui_view(t);
	FILE *f;

	if (!v)
		return;
	if (!(f = fopen(arg, "w"))) {
		errorf_errno("cannot write '%s'", arg);
		return;
	}
	view_dump(v, f, tui_draw_flags(t));
	if (fclose(f))
		errorf_errno("cannot write '%s'", arg);
}

static void do_resize(struct tui *t, const char *arg)
{
	int cols, lines;
	char extra;

	if (!t->opt.headless) {
		errorf("':resize' only works headless (resize the terminal instead)");
		return;
	}
	if (sscanf(arg, "%d %d %c", &cols, &lines, &extra) != 2) {
		errorf("':resize' takes COLUMNS LINES");
		return;
	}
	display_set_size(t, cols, lines);
}

static void reload(struct tui *t)
{
	uint32_t seq;

	if (!t->db && !(t->db = db_open(t->db_path, DB_READ)))
		return;
	jobs_invalidate(&t->jobs);
	data_ctx_invalidate(t->data);
	if (!t->epoch && !db_epoch_resolve(t->db, NULL, &seq))
		t->epoch = seq;
	for (size_t i = 0; i < t->depth; i++) {
		struct view *v = t->stack[i];

		if ((v->ops->flags & VIEW_FOLLOWS_EPOCH) && !v->loc.epoch)
			v->loc.epoch = t->epoch;
		view_wait(v, NULL);
		if (v->ops->reload)
			v->ops->reload(v);
	}
	t->dirty_views = true;
	tui_info(t, "reread the database");
}

static void show_images(struct tui *t)
{
	if (!t->epoch) {
		errorf("no epoch to show the images of");
		return;
	}
	show_view(t, &images_view_ops);
}

/* Requests that change what is shown. */
static bool view_requests(struct tui *t, enum request req, const char *arg)
{
	struct view *v = tui_view(t);

	switch (req) {
	case REQ_ENTER:
		tui_info(t, "nothing to open here");
		break;
	case REQ_BACK:
		if (t->depth > 1)
			tui_pop_to(t, t->depth - 1);
		else
			t->quit = true;
		break;
	case REQ_QUIT:
		t->quit = true;
		break;
	case REQ_VIEW_EPOCHS:
		show_view(t, &epochs_view_ops);
		break;
	case REQ_VIEW_IMAGES:
		show_images(t);
		break;
	case REQ_VIEW_PROCEDURES:
		tui_open_view(t, "procedures", &(struct view_loc){ .epoch = t->epoch });
		break;
	case REQ_VIEW_HELP:
		toggle_view(t, &help_view_ops);
		break;
	case REQ_VIEW_MESSAGES:
		toggle_view(t, &messages_view_ops);
		break;
	case REQ_VIEW_STOPWATCH:
		tui_open_view(t, "stopwatch", &(struct view_loc){ .epoch = t->epoch });
		break;
	case REQ_GOTO:
		errorf("nothing to go to in the %s view", v ? v->ops->name : "empty");
		break;
	case REQ_MARK:
		errorf("epochs are marked in the epochs view (E)");
		break;
	case REQ_HOTTEST:
	case REQ_TOGGLE_SOURCE:
	case REQ_TOGGLE_VALUES:
	case REQ_NEXT_STALL:
	case REQ_PREV_STALL:
	case REQ_CULPRIT:
		errorf("':%s' works in the procedure view", request_info(req)->name);
		break;
	case REQ_SWAP:
	case REQ_TOGGLE_ALL:
		errorf("':%s' works in the diff views", request_info(req)->name);
		break;
	default:
		return false;
	}
	return true;
}

void tui_session_request(struct tui *t, enum request req, const char *arg)
{
	if (view_requests(t, req, arg))
		return;
	switch (req) {
	case REQ_REFRESH:
		display_clear(t);
		break;
	case REQ_RELOAD:
		reload(t);
		break;
	case REQ_SEARCH:
		set_search(t, arg);
		find(t, 1);
		break;
	case REQ_FIND_NEXT:
	case REQ_FIND_PREV:
		find(t, req == REQ_FIND_NEXT ? 1 : -1);
		break;
	case REQ_EPOCH:
		do_epoch(t, arg);
		break;
	case REQ_EVENT:
		do_event(t, arg);
		break;
	case REQ_DIFF:
		do_diff(t, arg);
		break;
	case REQ_NORMALIZE:
		do_normalize(t, arg);
		break;
	case REQ_FORCE:
		tui_set_force(t, !t->force);
		tui_info(t, t->force ? "using binaries that changed since profiling (:force again stops)"
			 : "no longer using binaries that changed since profiling");
		break;
	case REQ_PROMPT:
		do_prompt(t, arg);
		break;
	case REQ_SAVE_DISPLAY:
		save_display(t, arg);
		break;
	case REQ_SAVE_VIEW:
		save_view(t, arg);
		break;
	case REQ_RESIZE:
		do_resize(t, arg);
		break;
	default:
		errorf("':%s' does nothing here", request_info(req)->name);
		break;
	}
}

/* ---- completion ------------------------------------------------------------- */

static void complete_epochs(struct tui *t, struct candidates *c)
{
	const struct epochs_data *ed = tui_peek(t, &epochs_source, NULL);
	char num[32];

	candidates_add(c, "latest");
	for (size_t i = 0; ed && i < ed->list.n; i++) {
		const struct db_epoch *e = &ed->list.v[i];

		snprintf(num, sizeof(num), "%" PRIu32, e->seq);
		candidates_add(c, num);
		if (e->meta_ok && e->meta.label)
			candidates_add(c, e->meta.label);
		if (i + 1 < ed->list.n) {
			snprintf(num, sizeof(num), "latest~%zu", ed->list.n - 1 - i);
			candidates_add(c, num);
		}
	}
}

void tui_complete(struct tui *t, enum arg_kind kind, struct candidates *c)
{
	struct view *v = tui_view(t);

	switch (kind) {
	case ARG_EPOCH:
	case ARG_EPOCH_PAIR:
		complete_epochs(t, c);
		break;
	case ARG_EVENT:
		for (int e = 0; e < EVENT__COUNT; e++)
			candidates_add(c, event_name((enum dcpi_event)e));
		break;
	case ARG_NORM:
		candidates_add(c, "period");
		candidates_add(c, "total");
		break;
	case ARG_COLUMN:
		for (size_t i = 0; v && v->table && i < v->table->n_cols; i++)
			if (v->table->cols[i].cmp)
				candidates_add(c, v->table->cols[i].name);
		break;
	default:
		if (v && v->ops->complete)
			v->ops->complete(v, kind, c);
		break;
	}
}
