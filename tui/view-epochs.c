/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-epochs.c - the epochs of the database: number, label, start and
 * end, duration, samples per event, lost and unknown samples, images.
 * Enter shows an epoch's images (and makes it the current epoch); m marks
 * epochs A and B for a diff and moves to the next epoch.  An epoch whose images were read (its images
 * view) and have a damaged profile is marked: its samples carry a '*', and
 * the title and the pane say how many profiles are damaged, since the
 * images view's totals are then partial.  Only the images the session has
 * read are looked at (the profiles of every epoch are never read for it).
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct epoch_row {
	const struct db_epoch *e;
	size_t index;          /* in the epochs data */
	char *label;           /* terminal-safe, or NULL */
};

struct epochs_view {
	const struct epochs_data *ed;
	const struct epoch_counts *counts; /* the images of every epoch, as far as counted */
	struct epoch_row *rows;
	size_t n_rows;
	struct table table;
	bool short_end;        /* every epoch ends on the day it started */
};

#define EV(v) ((struct epochs_view *)(v)->priv)

/* ---- cells ------------------------------------------------------------- */

static const struct epoch_meta *meta_of(const struct epoch_row *r)
{
	return r->e->meta_ok ? &r->e->meta : NULL;
}

static void cell_mark(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	const struct epoch_row *r = row;
	struct view *v = ctx;
	char mark = tui_mark_of(v->tui, r->e->seq);

	if (r->e->seq == tui_epoch(v->tui))
		draw_glyph(d, STYLE_CURRENT, GLYPH_BULLET);
	else
		draw_space(d, STYLE_NORMAL, 1);
	if (mark)
		draw_printf(d, STYLE_MARK, "%c", mark);
}

static void cell_seq(void *ctx, const struct table_column *col, const void *row, size_t pos,
		     struct draw *d, int width)
{
	const struct epoch_row *r = row;
	struct view *v = ctx;
	char buf[16];

	snprintf(buf, sizeof(buf), "%" PRIu32, r->e->seq);
	draw_field(d, r->e->seq == tui_epoch(v->tui) ? STYLE_CURRENT : STYLE_NORMAL, buf, width,
		   ALIGN_RIGHT);
}

static void cell_label(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	const struct epoch_row *r = row;

	if (!meta_of(r))
		draw_field(d, STYLE_ERROR, "(unreadable)", width, ALIGN_LEFT);
	else
		draw_field(d, STYLE_LABEL, r->label ? r->label : "", width, ALIGN_LEFT);
}

static void cell_time(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	const struct epoch_row *r = row;
	const struct epoch_meta *m = meta_of(r);
	struct view *v = ctx;
	struct strbuf sb = STRBUF_INIT;
	int64_t ns = m ? (col->arg ? m->end_ns : m->start_ns) : 0;

	if (!m)
		strbuf_addstr(&sb, "-");
	else if (col->arg && !ns)
		strbuf_addstr(&sb, "open");
	else
		strbuf_add_time_short(&sb, ns);
	/* "2026-11-22 06:41:00": the end shows only the time on the same day. */
	if (col->arg && ns && EV(v)->short_end && sb.len > 11)
		draw_field(d, STYLE_NORMAL, sb.buf + 11, width, ALIGN_LEFT);
	else
		draw_field(d, m ? STYLE_NORMAL : STYLE_DIM, sb.buf, width, ALIGN_LEFT);
	strbuf_release(&sb);
}

static void cell_duration(void *ctx, const struct table_column *col, const void *row,
			  size_t pos, struct draw *d, int width)
{
	const struct epoch_meta *m = meta_of(row);
	struct strbuf sb = STRBUF_INIT;

	if (m && m->end_ns >= m->start_ns && m->end_ns)
		strbuf_add_duration(&sb, m->end_ns - m->start_ns);
	else
		strbuf_addstr(&sb, "-");
	draw_field(d, STYLE_NORMAL, sb.buf, width, ALIGN_RIGHT);
	strbuf_release(&sb);
}

static uint64_t event_samples(const struct epoch_row *r, int ev)
{
	const struct epoch_meta *m = meta_of(r);
	const struct epoch_event *e = m ? epoch_meta_event(m, (enum dcpi_event)ev) : NULL;

	return e ? e->samples : 0;
}

static void draw_count(struct draw *d, bool known, uint64_t n, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	draw_field(d, known && n ? STYLE_NORMAL : STYLE_DIM, known ? buf : "-", width, ALIGN_RIGHT);
}

/*
 * The images of the epoch if the session has read them (its images view),
 * else NULL: nothing is read for this.
 */
static const struct images_data *images_read(const struct view *v, const struct epoch_row *r)
{
	return source_peek(v->src, &images_source, &r->e->seq);
}

/* Profiles of the epoch found damaged when its images were read (0: none, or not read). */
static size_t damaged_of(const struct view *v, const struct epoch_row *r)
{
	const struct images_data *id = images_read(v, r);

	return id ? id->n_damaged : 0;
}

static void cell_event(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	const struct epoch_row *r = row;
	const struct epoch_meta *m = meta_of(r);
	bool known = m && epoch_meta_event(m, (enum dcpi_event)col->arg);
	char buf[24];

	if (!known || !damaged_of(col->data, r)) {
		draw_count(d, known, event_samples(r, col->arg), width);
		return;
	}
	/* its images sum to less: a profile is damaged (the title says how many) */
	snprintf(buf, sizeof(buf), "%" PRIu64 "*", event_samples(r, col->arg));
	draw_field(d, STYLE_WARNING, buf, width, ALIGN_RIGHT);
}

/* "lost/unknown": samples the kernel dropped, samples in no image. */
static void cell_lost(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	const struct epoch_meta *m = meta_of(row);
	uint64_t lost = m ? epoch_meta_counter(m, "lost") : 0;
	uint64_t unknown = m ? epoch_meta_counter(m, "unknown") : 0;
	char buf[48];

	snprintf(buf, sizeof(buf), "%" PRIu64 "/%" PRIu64, lost, unknown);
	draw_field(d, !m || !(lost + unknown) ? STYLE_DIM : STYLE_WARNING, m ? buf : "-", width,
		   ALIGN_RIGHT);
}

/* The images of an epoch; false while they are being counted. */
static bool images_of(const struct view *v, const struct epoch_row *r, size_t *n)
{
	return epoch_counts_get(EV(v)->counts, r->index, n);
}

static void cell_images(void *ctx, const struct table_column *col, const void *row, size_t pos,
			struct draw *d, int width)
{
	size_t n;

	if (!images_of(ctx, row, &n))
		draw_field(d, STYLE_DIM, "...", width, ALIGN_RIGHT);
	else if (n == SIZE_MAX)
		draw_field(d, STYLE_ERROR, "?", width, ALIGN_RIGHT);
	else
		draw_count(d, true, n, width);
}

/* ---- comparisons -------------------------------------------------------- */

#define ROW(p) ((const struct epoch_row *)(p))

static int cmp_seq(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(ROW(a)->e->seq, ROW(b)->e->seq);
}

static int cmp_label(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(ROW(a)->label ? ROW(a)->label : "", ROW(b)->label ? ROW(b)->label : "");
}

static int64_t time_of(const struct epoch_row *r, int which)
{
	const struct epoch_meta *m = meta_of(r);

	if (!m)
		return 0;
	if (which == 0)
		return m->start_ns;
	if (which == 1)
		return m->end_ns ? m->end_ns : INT64_MAX;
	return m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
}

static int cmp_time(const struct table_column *c, const void *a, const void *b)
{
	int64_t x = time_of(a, c->arg), y = time_of(b, c->arg);

	return (x > y) - (x < y);
}

static int cmp_event(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(event_samples(a, c->arg), event_samples(b, c->arg));
}

static uint64_t lost_of(const struct epoch_row *r)
{
	const struct epoch_meta *m = meta_of(r);

	return m ? epoch_meta_counter(m, "lost") : 0;
}

static int cmp_lost(const struct table_column *c, const void *a, const void *b)
{
	int r = table_cmp_u64(lost_of(a), lost_of(b));
	const struct epoch_meta *ma = meta_of(a), *mb = meta_of(b);

	if (r)
		return r;
	return table_cmp_u64(ma ? epoch_meta_counter(ma, "unknown") : 0,
			     mb ? epoch_meta_counter(mb, "unknown") : 0);
}

static int cmp_images(const struct table_column *c, const void *a, const void *b)
{
	size_t x = 0, y = 0;

	images_of(c->data, a, &x);
	images_of(c->data, b, &y);
	return table_cmp_u64(x, y);
}

/* ---- building -------------------------------------------------------------- */

static void add_event_columns(struct view *v)
{
	struct epochs_view *ev = EV(v);

	for (int e = 0; e < EVENT__COUNT; e++) {
		uint64_t max = 0;

		if (!ev->ed->events[e])
			continue;
		for (size_t i = 0; i < ev->n_rows; i++)
			if (event_samples(&ev->rows[i], e) > max)
				max = event_samples(&ev->rows[i], e);
		/* + 1: room for the mark of an epoch with a damaged profile */
		table_add_column(&ev->table, &(struct table_column){
			.name = event_name((enum dcpi_event)e), .width = draw_digits(max) + 1,
			.align = ALIGN_RIGHT, .numeric = true, .arg = e, .data = v,
			.cmp = cmp_event, .cell = cell_event });
	}
}

static void build_columns(struct view *v)
{
	struct table *t = &EV(v)->table;

	table_clear_columns(t);
	table_add_column(t, &(struct table_column){ .name = "mark", .title = "", .width = 2,
						    .cell = cell_mark });
	table_add_column(t, &(struct table_column){ .name = "epoch", .title = "#", .width = 2,
						    .align = ALIGN_RIGHT, .cmp = cmp_seq, .cell = cell_seq });
	table_add_column(t, &(struct table_column){ .name = "label", .min = 5, .cmp = cmp_label,
						    .cell = cell_label });
	table_add_column(t, &(struct table_column){ .name = "start", .width = 19, .arg = 0,
						    .cmp = cmp_time, .cell = cell_time });
	table_add_column(t, &(struct table_column){ .name = "end", .width = EV(v)->short_end ? 8 : 19,
						    .arg = 1, .cmp = cmp_time, .cell = cell_time });
	table_add_column(t, &(struct table_column){ .name = "duration", .width = 6, .arg = 2,
						    .align = ALIGN_RIGHT, .numeric = true,
						    .cmp = cmp_time, .cell = cell_duration });
	add_event_columns(v);
	table_add_column(t, &(struct table_column){ .name = "lost", .title = "lost/unk",
						    .width = 1, .align = ALIGN_RIGHT, .numeric = true,
						    .cmp = cmp_lost, .cell = cell_lost });
	table_add_column(t, &(struct table_column){ .name = "images", .width = 1,
						    .align = ALIGN_RIGHT, .numeric = true, .data = v,
						    .cmp = cmp_images, .cell = cell_images });
}

static bool same_day(const struct epoch_meta *m)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	bool same;

	if (!m->end_ns)
		return true;
	strbuf_add_time_short(&a, m->start_ns);
	strbuf_add_time_short(&b, m->end_ns);
	same = !strncmp(a.buf, b.buf, 10);
	strbuf_release(&a);
	strbuf_release(&b);
	return same;
}

static void free_rows(struct epochs_view *ev)
{
	for (size_t i = 0; i < ev->n_rows; i++)
		free(ev->rows[i].label);
	free(ev->rows);
	ev->rows = NULL;
	ev->n_rows = 0;
}

static void build_rows(struct view *v)
{
	struct epochs_view *ev = EV(v);
	const void **ptrs;

	free_rows(ev);
	ev->n_rows = ev->ed->list.n;
	ev->rows = xcalloc(ev->n_rows ? ev->n_rows : 1, sizeof(*ev->rows));
	ptrs = xcalloc(ev->n_rows ? ev->n_rows : 1, sizeof(*ptrs));
	ev->short_end = true;
	for (size_t i = 0; i < ev->n_rows; i++) {
		struct epoch_row *r = &ev->rows[i];

		r->e = &ev->ed->list.v[i];
		r->index = i;
		if (r->e->meta_ok && r->e->meta.label)
			r->label = display_safe(r->e->meta.label);
		if (r->e->meta_ok && !same_day(&r->e->meta))
			ev->short_end = false;
		ptrs[i] = r;
	}
	table_set_rows(&ev->table, ptrs, ev->n_rows);
	free(ptrs);
}

/* Puts the cursor on epoch seq, if it is shown. */
static void select_seq(struct view *v, uint32_t seq)
{
	for (size_t i = 0; i < v->lines; i++) {
		const struct epoch_row *r = table_row(v->table, i);

		if (r->e->seq == seq) {
			view_move_to(v, i);
			return;
		}
	}
}

static void epochs_reload(struct view *v)
{
	struct epochs_view *ev = EV(v);
	const struct epoch_row *cur = table_row(v->table, v->pos);
	uint32_t seq = cur ? cur->e->seq : tui_epoch(v->tui);
	const struct epochs_data *ed = data_epochs(v->src, v);
	bool counted;

	v->empty = tui_has_db(v->tui) ? "(no epochs)" : "(no database: R rereads it)";
	table_set_rows(&ev->table, NULL, 0);
	free_rows(ev);
	ev->ed = ed;
	ev->counts = NULL;
	if (!ed) {
		view_set_lines(v, 0);
		return;
	}
	/* counted in the background: reloaded when they are */
	ev->counts = data_epoch_counts(v->src, ed, v, &counted);
	build_rows(v);
	build_columns(v);
	if (ev->table.sort < 0)
		table_sort_by(&ev->table, 1, false);
	view_table_update(v);
	select_seq(v, seq);
}

static void epochs_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	const struct epoch_row *r = row;

	strbuf_addf(out, "%" PRIu32 " %s", r->e->seq, r->label ? r->label : "");
}

static int epochs_open(struct view *v)
{
	table_init(&EV(v)->table, v);
	EV(v)->table.filter_text = epochs_filter_text;
	v->table = &EV(v)->table;
	epochs_reload(v);
	return 0;
}

static void epochs_close(struct view *v)
{
	free_rows(EV(v));
	table_release(&EV(v)->table);
}

static const struct epoch_row *selected(struct view *v)
{
	return table_row(v->table, v->pos);
}

static enum view_result epochs_request(struct view *v, enum request req, const char *arg)
{
	const struct epoch_row *r = selected(v);
	struct strbuf sb = STRBUF_INIT;

	switch (req) {
	case REQ_ENTER:
		if (!r)
			return VIEW_PASS;
		tui_set_epoch(v->tui, r->e->seq);
		tui_show_view(v->tui, "images");
		return VIEW_DONE;
	case REQ_MARK:
		if (!r)
			return VIEW_DONE;
		tui_toggle_mark(v->tui, r->e->seq);
		tui_epoch_name(v->tui, r->e->seq, &sb);
		if (tui_mark_of(v->tui, r->e->seq))
			tui_info(v->tui, "epoch %s marked %c", sb.buf, tui_mark_of(v->tui, r->e->seq));
		else
			tui_info(v->tui, "epoch %s unmarked", sb.buf);
		strbuf_release(&sb);
		/* then the next epoch, as mutt's tag: m, m marks two in a row */
		if (v->pos + 1 < v->lines)
			view_move_to(v, v->pos + 1);
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

/* The epochs whose images the session read with damaged profiles. */
struct damage {
	size_t epochs, profiles;
	uint32_t seq;          /* the last one found */
};

static void count_damage(const void *result, void *data)
{
	const struct images_data *id = result;
	struct damage *dm = data;

	if (!id || !id->n_damaged)
		return;
	dm->epochs++;
	dm->profiles += id->n_damaged;
	dm->seq = id->seq;
}

/* The footnote of the '*' marks: "*partial: 1 damaged profile in epoch 2". */
static void damage_note(struct view *v, struct strbuf *sb)
{
	struct damage dm = { 0 };

	source_foreach_loaded(v->src, &images_source, "", count_damage, &dm);
	if (!dm.profiles)
		return;
	strbuf_addf(sb, ", *partial: %zu damaged profile%s in ", dm.profiles,
		    dm.profiles == 1 ? "" : "s");
	if (dm.epochs == 1)
		strbuf_addf(sb, "epoch %" PRIu32, dm.seq);
	else
		strbuf_addf(sb, "%zu epochs", dm.epochs);
}

static void epochs_title(struct view *v, struct strbuf *sb)
{
	struct epochs_view *ev = EV(v);

	if (!ev->ed)
		return;
	strbuf_addf(sb, "%zu epoch%s", ev->ed->list.n, ev->ed->list.n == 1 ? "" : "s");
	if (v->lines != ev->ed->list.n)
		strbuf_addf(sb, ", %zu shown", v->lines);
	if (tui_mark(v->tui, 0))
		strbuf_addf(sb, ", diff A=%" PRIu32, tui_mark(v->tui, 0));
	if (tui_mark(v->tui, 1))
		strbuf_addf(sb, " B=%" PRIu32, tui_mark(v->tui, 1));
	damage_note(v, sb);
}

static int epochs_goto(struct view *v, const char *what)
{
	for (size_t i = 0; i < v->lines; i++) {
		const struct epoch_row *r = table_row(v->table, i);
		char num[16];

		snprintf(num, sizeof(num), "%" PRIu32, r->e->seq);
		if (!strcmp(num, what) || (r->label && !strcmp(r->label, what))) {
			view_move_to(v, i);
			return 0;
		}
	}
	return errorf("no epoch '%s' in this list", what);
}

static void epochs_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	if (kind == ARG_GOTO)
		epochs_data_complete(EV(v)->ed, c);
}

/* ---- the details pane: how the selected epoch was sampled --------------------- */

enum { PANE_EPOCH, PANE_MACHINE, PANE_COMMAND, PANE_EVENTS, PANE_COUNTERS, PANE__LINES };

static size_t epochs_pane_lines(struct view *v)
{
	const struct epoch_row *r = table_row(v->table, v->pos);

	return r ? (meta_of(r) ? PANE__LINES : 1) : 0;
}

static void add_safe(struct strbuf *sb, const char *s)
{
	char *safe = display_safe(s ? s : "?");

	strbuf_addstr(sb, safe);
	free(safe);
}

static void pane_epoch(const struct epoch_row *r, const struct epoch_meta *m, struct strbuf *sb)
{
	strbuf_addf(sb, "%" PRIu32, r->e->seq);
	if (r->label)
		strbuf_addf(sb, " (%s)", r->label);
	if (!m) {
		strbuf_addstr(sb, ": its metadata is unreadable (M lists why)");
		return;
	}
	strbuf_addstr(sb, ", ");
	strbuf_add_time_iso(sb, m->start_ns);
	strbuf_addstr(sb, " to ");
	if (m->end_ns)
		strbuf_add_time_iso(sb, m->end_ns);
	else
		strbuf_addstr(sb, "now (open)");
}

static void pane_machine(const struct epoch_meta *m, struct strbuf *sb)
{
	add_safe(sb, m->host);
	strbuf_addstr(sb, ", ");
	add_safe(sb, m->cpu_model);
	if (m->cpu_mhz > 0)
		strbuf_addf(sb, " at %.0f MHz", m->cpu_mhz);
}

static void pane_command(const struct epoch_meta *m, struct strbuf *sb)
{
	if (!m->command || !m->command[0]) {
		strbuf_addstr(sb, "- (system-wide)");
		return;
	}
	for (char **a = m->command; *a; a++) {
		if (a != m->command)
			strbuf_addch(sb, ' ');
		add_safe(sb, *a);
	}
}

static void pane_events(struct view *v, const struct epoch_row *r, const struct epoch_meta *m,
			struct strbuf *sb)
{
	const struct images_data *id = images_read(v, r);

	for (size_t i = 0; i < m->n_events; i++) {
		const struct epoch_event *e = &m->events[i];

		strbuf_addf(sb, "%s%s", i ? "; " : "", event_name(e->event));
		if (e->used != e->event)
			strbuf_addf(sb, " as %s", event_name(e->used));
		strbuf_addf(sb, " every %" PRIu64 " %s", e->period, e->period_in_ns ? "ns" : "events");
		if (e->freq_hz)
			strbuf_addf(sb, " (%" PRIu64 " Hz)", e->freq_hz);
		strbuf_addf(sb, ", %" PRIu64 " samples", e->samples);
	}
	if (!m->n_events)
		strbuf_addstr(sb, "none recorded");
	if (id && id->n_damaged)
		strbuf_addf(sb, "; its images partial: %zu damaged profile%s", id->n_damaged,
			    id->n_damaged == 1 ? "" : "s");
}

static void pane_counters(const struct epoch_meta *m, struct strbuf *sb)
{
	for (size_t i = 0; i < m->n_counters; i++)
		strbuf_addf(sb, "%s%s %" PRIu64, i ? ", " : "", m->counters[i].name,
			    m->counters[i].value);
	if (!m->n_counters)
		strbuf_addstr(sb, "none");
}

static void epochs_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "epoch", "machine", "command", "events", "counters" };
	const struct epoch_row *r = table_row(v->table, v->pos);
	const struct epoch_meta *m = r ? meta_of(r) : NULL;
	struct strbuf sb = STRBUF_INIT;

	if (!r || (!m && line))
		return;
	switch (line) {
	case PANE_EPOCH: pane_epoch(r, m, &sb); break;
	case PANE_MACHINE: pane_machine(m, &sb); break;
	case PANE_COMMAND: pane_command(m, &sb); break;
	case PANE_EVENTS: pane_events(v, r, m, &sb); break;
	case PANE_COUNTERS: pane_counters(m, &sb); break;
	}
	view_pane_line(d, labels[line], 9, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops epochs_view_ops = {
	.name = "epochs",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "The first column marks the current epoch, and A and B the epochs marked\n"
		  "for a diff.  Samples are per event as recorded in each epoch's metadata;\n"
		  "lost: samples the kernel dropped; unknown: samples in no image.  p shows how\n"
		  "the selected epoch was sampled (machine, command, events, periods, counters).\n"
		  "A * after the samples: the epoch's images, once read, had a damaged profile\n"
		  "(its images view counts the others only: partial); the title says how many.",
	.priv_size = sizeof(struct epochs_view),
	.open = epochs_open,
	.close = epochs_close,
	.reload = epochs_reload,
	.request = epochs_request,
	.title = epochs_title,
	.go_to = epochs_goto,
	.complete = epochs_complete,
	.pane_lines = epochs_pane_lines,
	.draw_pane = epochs_draw_pane,
};
