/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/command.c - keys, commands and requests (tui/command.h): what the
 * current view does not handle belongs to the session: the views of
 * VIEW_INFO, epochs, events, search, the prompt, dumps, reload.
 */
#include "config.h"
#include "tui/command.h"

#include "core/die.h"
#include "core/event.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "tui/data.h"
#include "tui/display.h"
#include "tui/prompt.h"
#include "tui/table.h"
#include "tui/tui-int.h"
#include "tui/views.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A view's request (VIEW_INFO): shows it (back to it if it is on the stack),
 * opens one more on top, or toggles it (closed if it is on top).
 */
static void open_view(struct tui *t, const struct request_info *info)
{
	struct view *v = tui_view(t);

	switch (info->opener) {
	case VIEW_SHOW:
		tui_show_view(t, info->view);
		break;
	case VIEW_TOGGLE:
		if (v && !strcmp(v->ops->name, info->view) && t->depth > 1) {
			tui_pop_to(t, t->depth - 1);
			break;
		}
		/* fall through */
	case VIEW_OPEN:
		tui_open_view(t, info->view, &(struct view_loc){ .epoch = t->epoch });
		break;
	}
}

static int resolve_epoch(struct tui *t, const char *name, uint32_t *seq)
{
	if (!t->src.env.db)
		return errorf("no database is open ('%s')", t->db_path);
	return db_epoch_resolve(t->src.env.db, name, seq);
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
		period = !t->src.env.norm_period;
	else if (!strcmp(arg, "period"))
		period = true;
	else if (!strcmp(arg, "total"))
		period = false;
	else {
		errorf("unknown normalisation '%s' (total or period)", arg);
		return;
	}
	if (period != t->src.env.norm_period)
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

static void session_request(struct tui *t, enum request req, const char *arg)
{
	if (request_info(req)->view) {
		open_view(t, request_info(req));
		return;
	}
	if (view_requests(t, req, arg))
		return;
	switch (req) {
	case REQ_REFRESH:
		display_clear(t);
		break;
	case REQ_RELOAD:
		if (!tui_reload(t))
			tui_info(t, "reread the database");
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
		tui_set_force(t, !t->src.env.force);
		tui_info(t, t->src.env.force ? "using binaries that changed since profiling (:force again stops)"
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

/* ---- keys and commands ------------------------------------------------------------------ */

void tui_key(struct tui *t, int key)
{
	enum request req;

	key = key_normalize(key);
	if (key == KEY_RESIZE) {
		display_layout(t);
		return;
	}
	tui_status_clear(t);
	req = key_request(key);
	if (req == REQ_NONE) {
		struct strbuf sb = STRBUF_INIT;

		key_describe(key, &sb);
		errorf("no request is bound to '%s' (? shows the keys)", sb.buf);
		strbuf_release(&sb);
		return;
	}
	tui_request(t, req, NULL, true);
}

void tui_command(struct tui *t, const char *line)
{
	struct strbuf name = STRBUF_INIT, arg = STRBUF_INIT;
	size_t n;
	enum request req;

	line += strspn(line, " \t");
	if (!*line)
		return;
	n = strcspn(line, " \t");
	strbuf_add(&name, line, n);
	line += n;
	line += strspn(line, " \t");
	strbuf_addstr(&arg, line);
	strbuf_rtrim(&arg);
	req = request_lookup(name.buf);
	if (req == REQ_NONE)
		errorf("unknown command ':%s' (? shows the commands)", name.buf);
	else
		tui_request(t, req, arg.len ? arg.buf : NULL, false);
	strbuf_release(&name);
	strbuf_release(&arg);
}

/* Arguments a key cannot supply: the prompt asks for them. */
static bool key_needs_prompt(enum arg_kind kind)
{
	return kind != ARG_NONE && kind != ARG_EPOCH_PAIR && kind != ARG_NORM;
}

static bool arg_required(enum arg_kind kind)
{
	return kind != ARG_NONE && kind != ARG_EPOCH_PAIR && kind != ARG_OPT_TEXT &&
	       kind != ARG_NORM;
}

static void prompt_for(struct tui *t, const struct request_info *info)
{
	struct strbuf sb = STRBUF_INIT;

	if (info->req == REQ_SEARCH) {
		session_request(t, REQ_PROMPT, "/");
		return;
	}
	strbuf_addf(&sb, "%s ", info->name);
	session_request(t, REQ_PROMPT, sb.buf);
	strbuf_release(&sb);
}

void tui_request(struct tui *t, enum request req, const char *arg, bool from_key)
{
	const struct request_info *info = request_info(req);
	struct view *v = tui_view(t);

	if (!arg || !*arg) {
		arg = NULL;
		if (from_key && key_needs_prompt(info->arg)) {
			prompt_for(t, info);
			return;
		}
		if (arg_required(info->arg)) {
			errorf("':%s' needs an argument", info->name);
			return;
		}
	}
	if (v && v->ops->request && v->ops->request(v, req, arg) == VIEW_DONE)
		return;
	if (v && view_request(v, req, arg) == VIEW_DONE)
		return;
	session_request(t, req, arg);
}


/* ---- completion ------------------------------------------------------------- */

void tui_complete(struct tui *t, enum arg_kind kind, struct candidates *c)
{
	struct view *v = tui_view(t);

	switch (kind) {
	case ARG_EPOCH:
	case ARG_EPOCH_PAIR:
		epochs_data_complete(source_peek(&t->src, &epochs_source, NULL), c);
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
