/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/tui.c - the state of a session and what views do with it
 * (tui/tui.h, tui/tui-int.h): the view stack, epoch, event, marks,
 * messages, and the views' reloads when their data arrives.
 */
#include "config.h"
#include "tui/tui-int.h"

#include "core/die.h"
#include "core/event.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "tui/data.h"
#include "tui/data-epoch.h"
#include "tui/views.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages -------------------------------------------------------------- */

static void status_set(struct tui *t, enum report_level level, bool info, const char *msg)
{
	const char *nl = strchr(msg, '\n');

	free(t->status);
	/* a message of several lines: its first, the rest in the messages view */
	t->status = nl ? xasprintf("%.*s (M: more)", (int)(nl - msg), msg) : xstrdup(msg);
	t->status_level = level;
	t->status_is_info = info;
	t->status_more = 0;
}

void tui_status_clear(struct tui *t)
{
	free(t->status);
	t->status = NULL;
	t->status_more = 0;
}

static bool logged(struct tui *t, const char *msg)
{
	for (size_t i = 0; i < t->n_msgs; i++)
		if (!strcmp(t->msgs[i].text, msg))
			return true;
	return false;
}

/*
 * Logs a message: once (the same bad file is reported by several loaders),
 * and at most TUI_MESSAGES_MAX of them (a damaged epoch of 20,000 images
 * has as many bad files); the rest are counted.
 */
void tui_message(struct tui *t, enum report_level level, const char *msg)
{
	if (logged(t, msg)) {
		if (!t->status)
			status_set(t, level, false, msg);
		return;
	}
	if (t->n_msgs >= TUI_MESSAGES_MAX) {
		t->msgs_dropped++;
		if (!t->status)
			status_set(t, level, false, msg);
		else
			t->status_more++;
		return;
	}
	ALLOC_GROW(t->msgs, t->n_msgs + 1, t->alloc_msgs);
	t->msgs[t->n_msgs].level = level;
	t->msgs[t->n_msgs].text = xstrdup(msg);
	t->n_msgs++;
	for (size_t i = 0; i < t->depth; i++)
		if (t->stack[i]->ops == &messages_view_ops)
			t->stack[i]->ops->reload(t->stack[i]);
	if (!t->status || t->status_is_info)
		status_set(t, level, false, msg);
	else
		t->status_more++;
}

void tui_info(struct tui *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (t->status && !t->status_is_info)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	status_set(t, REPORT_WARNING, true, sb.buf);
	strbuf_release(&sb);
}

unsigned tui_draw_flags(const struct tui *t)
{
	return t->ascii ? DRAW_ASCII : 0;
}

bool tui_has_db(const struct tui *t)
{
	return t->src.env.db != NULL;
}

uint32_t tui_epoch(const struct tui *t)
{
	return t->epoch;
}

int tui_event(const struct tui *t)
{
	return t->src.env.event;
}

uint32_t tui_mark(const struct tui *t, int k)
{
	return t->marks[k ? 1 : 0];
}

const struct tui_message *tui_messages(const struct tui *t, size_t *n, size_t *dropped)
{
	*n = t->n_msgs;
	*dropped = t->msgs_dropped;
	return t->msgs;
}

/* ---- views ----------------------------------------------------------------- */

static const struct view_ops *const registry[] = {
#define VIEW_REGISTER_(X, name, opener, command, keys, help) &name##_view_ops,
	VIEW_INFO(VIEW_REGISTER_, )
#undef VIEW_REGISTER_
};

/* True if a view's name is name, '_' standing for '-' ("diff_procedure"). */
static bool is_called(const char *view, const char *name)
{
	for (; *view && (*view == *name || (*view == '-' && *name == '_')); view++, name++)
		;
	return !*view && !*name;
}

const struct view_ops *tui_view_ops(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		if (is_called(registry[i]->name, name))
			return registry[i];
	return NULL;
}

struct view *tui_view(struct tui *t)
{
	return t->depth ? t->stack[t->depth - 1] : NULL;
}

int tui_push(struct tui *t, const struct view_ops *ops, const struct view_loc *loc)
{
	struct view *v;

	if (t->depth == TUI_STACK_MAX)
		return errorf("too many views open (%d): go back first", TUI_STACK_MAX);
	if (!(v = view_new(t, &t->src, ops, loc)))
		return -1;
	t->stack[t->depth++] = v;
	t->dirty_views = true;
	return 0;
}

int tui_open_view(struct tui *t, const char *name, const struct view_loc *loc)
{
	const struct view_ops *ops = tui_view_ops(name);

	if (!ops) {
		warning("the %s view is not available", name);
		return -1;
	}
	return tui_push(t, ops, loc);
}

int tui_show_view(struct tui *t, const char *name)
{
	const struct view_ops *ops = tui_view_ops(name);

	for (size_t i = t->depth; ops && i-- > 0;) {
		if (t->stack[i]->ops == ops) {
			tui_pop_to(t, i + 1);
			return 0;
		}
	}
	return tui_open_view(t, name, &(struct view_loc){ .epoch = t->epoch });
}

void tui_pop_to(struct tui *t, size_t depth)
{
	while (t->depth > depth && t->depth > 1)
		view_free(t->stack[--t->depth]);
	t->dirty_views = true;
}

int tui_open_procedure(struct tui *t, uint32_t seq, const char *image, const char *spec)
{
	struct view_loc loc = { .epoch = seq, .image = (char *)image, .procedure = (char *)spec };

	if (!seq)
		return errorf("no epoch to look for procedures in");
	return tui_open_view(t, "procedure", &loc);
}

static void job_finished(struct job *job, void *data)
{
	struct tui *t = data;

	for (size_t i = 0; i < t->depth; i++) {
		struct view *v = t->stack[i];

		if (v->pending && !strcmp(v->pending, job->key)) {
			view_wait(v, NULL);
			if (v->ops->reload)
				v->ops->reload(v);
		}
	}
	t->dirty_views = true;
}

size_t tui_collect(struct tui *t)
{
	return jobs_collect(&t->src.jobs, job_finished, t);
}

static void reload_views(struct tui *t, bool following_only)
{
	for (size_t i = 0; i < t->depth; i++) {
		struct view *v = t->stack[i];

		if (following_only && !(v->ops->flags & VIEW_FOLLOWS_EPOCH))
			continue;
		if (v->ops->flags & VIEW_FOLLOWS_EPOCH)
			v->loc.epoch = t->epoch;
		view_wait(v, NULL);
		if (v->ops->reload)
			v->ops->reload(v);
	}
	t->dirty_views = true;
}

void tui_set_epoch(struct tui *t, uint32_t seq)
{
	t->epoch = seq;
	reload_views(t, true);
}

int tui_reload(struct tui *t)
{
	uint32_t seq;

	if (!t->src.env.db)
		sources_set_db(&t->src, db_open(t->db_path, DB_READ));
	if (!t->src.env.db)
		return -1;
	jobs_invalidate(&t->src.jobs);
	data_ctx_invalidate(t->src.env.analysis);
	if (!t->epoch && !db_epoch_resolve(t->src.env.db, NULL, &seq))
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
	return 0;
}

void tui_set_force(struct tui *t, bool force)
{
	t->src.env.force = force;
	reload_views(t, false);
}

void tui_set_norm_period(struct tui *t, bool period)
{
	t->src.env.norm_period = period;
	reload_views(t, false);
}

void tui_set_event(struct tui *t, int ev)
{
	t->src.env.event = ev;
	t->event_chosen = true;
	reload_views(t, false);
}

void tui_default_event(struct tui *t, const bool events[])
{
	int ev, cur = t->src.env.event;

	if (cur >= 0 && events[cur])
		return;
	if ((ev = data_default_event(events)) < 0)
		return;
	if (t->event_chosen && cur >= 0)
		tui_info(t, "no %s samples here: showing %s", event_name((enum dcpi_event)cur),
			 event_name((enum dcpi_event)ev));
	t->src.env.event = ev;
	t->event_chosen = false;
}

void tui_epoch_name(struct tui *t, uint32_t seq, struct strbuf *sb)
{
	const struct db_epoch *e = epochs_data_find(source_peek(&t->src, &epochs_source, NULL), seq);

	strbuf_addf(sb, "%" PRIu32, seq);
	if (e && e->meta_ok && e->meta.label) {
		char *label = display_safe(e->meta.label);

		strbuf_addf(sb, " (%s)", label);
		free(label);
	}
}

void tui_toggle_mark(struct tui *t, uint32_t seq)
{
	if (t->marks[0] == seq) {
		t->marks[0] = t->marks[1];
		t->marks[1] = 0;
	} else if (t->marks[1] == seq) {
		t->marks[1] = 0;
	} else if (!t->marks[0]) {
		t->marks[0] = seq;
	} else if (!t->marks[1]) {
		t->marks[1] = seq;
	} else {
		t->marks[0] = t->marks[1];
		t->marks[1] = seq;
	}
}

char tui_mark_of(const struct tui *t, uint32_t seq)
{
	if (seq && t->marks[0] == seq)
		return 'A';
	if (seq && t->marks[1] == seq)
		return 'B';
	return 0;
}

