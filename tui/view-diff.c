/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-diff.c - two epochs compared procedure by procedure, as
 * dcpidiff compares them (analysis/diff.h): the samples of each side
 * (A, B), their shares, the change in points (delta), the ratio and the
 * verdict: significant changes first, noise last.  Like dcpidiff, rows
 * within noise and below 0.1% on both sides are left out until a (all)
 * shows them.  Enter compares the selected procedure instruction by
 * instruction (the diff-procedure view); x exchanges the sides.
 *
 * The view stands at loc.epoch (A) and loc.epoch_b (B).
 */
#include "config.h"
#include "tui/view.h"

#include "core/radix.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data-diff.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct diff_view;

/* What a column sorts by: a key of each source row (side: A's or B's). */
struct diff_col {
	const struct diff_view *dv;
	uint64_t (*key)(const struct diff_view *dv, size_t src, int side);
	int side;
};

enum { COL_A, COL_A_SHARE, COL_B, COL_B_SHARE, COL_DELTA, COL_RATIO, COL_VERDICT, COL_NAME,
       COL_IMAGE, COL__COUNT };

struct diff_view {
	const struct diff_data *dd;      /* what is shown (maybe an error) */
	const struct diff_data *rows_dd; /* whose rows are in the table */
	struct diff_col cols[COL__COUNT];
	unsigned generation;     /* dd's when its rows went into the table */
	struct table table;
	bool all;                /* every row, not only the notable ones */
	/* the cursor's row, kept while new data loads: its source row in that data, and names */
	const struct diff_data *keep_dd;
	size_t keep_src;
	char *keep_name, *keep_image;
	/* the last row computed (a row's cells are drawn one after another) */
	size_t last_src;
	unsigned last_generation;
	struct diff_row last;
	struct strbuf name;      /* a name escaped to be drawn */
};

#define DV(v) ((struct diff_view *)(v)->priv)
/* The table's rows are the diff's order: each its source row. */
#define SRC(p) ((size_t)*(const uint32_t *)(p))

/* The numbers of the row (of the table) at p. */
static const struct diff_row *row_of(const struct diff_view *dv, const void *p)
{
	struct diff_view *w = (struct diff_view *)dv;  /* the cache is the view's to write */

	if (w->last_src != SRC(p) || w->last_generation != dv->rows_dd->generation + 1) {
		diff_row_of(&dv->rows_dd->de.diff, SRC(p), &w->last);
		w->last_src = SRC(p);
		w->last_generation = dv->rows_dd->generation + 1;
	}
	return &w->last;
}

/* ROW(p): the numbers of the row at p of the view in ctx. */
#define ROW(p) row_of(DV((struct view *)ctx), (p))

/* ---- cells (shared with the diff-procedure view through the same logic) ---- */

static void cell_count(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	uint64_t n = col->arg ? ROW(row)->b : ROW(row)->a;
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	draw_field(d, n ? STYLE_NORMAL : STYLE_DIM, buf, width, ALIGN_RIGHT);
}

static void cell_share(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	double s = col->arg ? ROW(row)->norm_b : ROW(row)->norm_a;
	char buf[24];

	snprintf(buf, sizeof(buf), "%.2f", s);
	draw_field(d, s > 0 ? STYLE_NORMAL : STYLE_DIM, buf, width, ALIGN_RIGHT);
}

/* More of the time (worse) in red, less (better) in green: significant changes only. */
static void cell_delta(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%+.2f", ROW(row)->effect);
	draw_field(d, diff_row_style(ROW(row)), buf, width, ALIGN_RIGHT);
}

static void cell_ratio(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	char buf[24];

	diff_format_ratio(ROW(row)->ratio, buf, sizeof(buf));
	draw_field(d, diff_row_style(ROW(row)), buf, width, ALIGN_RIGHT);
}

static void cell_verdict(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	struct view *v = ctx;

	draw_field(d, diff_row_style(ROW(row)), diff_verdict(&DV(v)->dd->de.diff, ROW(row)),
		   width, ALIGN_LEFT);
}

static const struct pset_row *src_of(const struct view *v, const void *row)
{
	return &DV(v)->rows_dd->de.diff.rows_src.rows[SRC(row)];
}

static const char *text_name(void *ctx, const struct table_column *col, const void *row)
{
	return display_safe_in(src_of(ctx, row)->name, &DV((struct view *)ctx)->name);
}

static void cell_name(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	const char *name = text_name(ctx, col, row);

	if (!src_of(ctx, row)->builds_differ) {
		draw_field(d, STYLE_NORMAL, name, width, ALIGN_LEFT);
		return;
	}
	/* dcpidiff marks procedures of binaries that differ with a star, after the name */
	int w = text_width(name, d->flags);

	if (w > width - 1)
		w = width - 1;
	draw_field(d, STYLE_NORMAL, name, w, ALIGN_LEFT);
	draw_text(d, STYLE_WARNING, "*");
	draw_space(d, STYLE_NORMAL, width - 1 - w);
}

static const char *text_image(void *ctx, const struct table_column *col, const void *row)
{
	return diff_data_base(display_safe_in(src_of(ctx, row)->image, &DV((struct view *)ctx)->name));
}

static void cell_image(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, text_image(ctx, col, row), width, ALIGN_LEFT_TAIL);
}

/* ---- comparisons: a key for each column (a million rows sort by radix) ---------- */

static int by_key(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(c->key(c, a), c->key(c, b));
}

/* The numbers of source row src (not cached: the rows are read in another order). */
static struct diff_row numbers(const struct diff_view *dv, size_t src)
{
	struct diff_row r;

	diff_row_of(&dv->rows_dd->de.diff, src, &r);
	return r;
}

/* A side's count: with one set a side, what its share and time grow with too. */
static uint64_t key_count(const struct diff_view *dv, size_t src, int b)
{
	const struct diff *d = &dv->rows_dd->de.diff;
	/* the row's counts, n_sets a row (pset.h), without reading the row */
	const uint64_t *counts = d->rows_src.counts + src * d->rows_src.n_sets;
	const size_t *side = b ? d->side_b : d->side_a;
	uint64_t n = 0;

	for (size_t k = 0, n_side = b ? d->n_b : d->n_a; k < n_side; k++)
		n += counts[side[k]];
	return n;
}

static uint64_t key_share(const struct diff_view *dv, size_t src, int b)
{
	const struct diff *d = &dv->rows_dd->de.diff;
	struct diff_row r;

	if (d->n_a == 1 && d->n_b == 1)
		return key_count(dv, src, b);  /* the share is the count over the side's total */
	r = numbers(dv, src);
	return radix_key_double(b ? r.norm_b : r.norm_a);
}

static uint64_t key_delta(const struct diff_view *dv, size_t src, int side)
{
	return radix_key_double(numbers(dv, src).effect);
}

/* NaN (no samples on either side) below everything, +inf (new) above. */
static uint64_t key_ratio(const struct diff_view *dv, size_t src, int side)
{
	double r = numbers(dv, src).ratio;

	return radix_key_double(isnan(r) ? -1 : r);
}

static uint64_t key_verdict(const struct diff_view *dv, size_t src, int side)
{
	struct diff_row r = numbers(dv, src);
	uint64_t mag = radix_key_double(fabs(r.effect));

	/* significant above the rest; within each, by the size of the change */
	return r.significant ? mag | (UINT64_C(1) << 63) : mag & ~(UINT64_C(1) << 63);
}

/* Names by their place among the rows' (diff.h's ranks: by name, image, address). */
static uint64_t key_name(const struct diff_view *dv, size_t src, int side)
{
	return dv->rows_dd->de.diff.name_rank[src];
}

/* By file name, then by path (ranked by the job). */
static uint64_t key_image(const struct diff_view *dv, size_t src, int side)
{
	return dv->rows_dd->path_rank[dv->rows_dd->de.diff.rows_src.rows[src].path];
}

static uint64_t key_row(const struct table_column *c, const void *row)
{
	const struct diff_col *dc = c->data;

	return dc->key(dc->dv, SRC(row), dc->side);
}

/*
 * Every row's key: computed source row after source row (their counts
 * and numbers lie in that order), then put in the rows' order.
 */
static void keys_all(const struct table_column *c, const struct table *t, uint64_t *out,
		     uint64_t *scratch)
{
	const struct diff_col *dc = c->data;
	const struct diff *d = &dc->dv->rows_dd->de.diff;
	uint64_t *by_src = d->n_rows <= t->n_rows ? scratch : xcalloc(d->n_rows, sizeof(*by_src));

	for (size_t src = 0; src < d->n_rows; src++)
		by_src[src] = dc->key(dc->dv, src, dc->side);
	for (size_t i = 0; i < t->n_rows && i < d->n_rows; i++)
		out[i] = by_src[d->order[i]];
	if (by_src != scratch)
		free(by_src);
}

static int cmp_name(const struct table_column *c, const void *a, const void *b)
{
	const struct diff_col *dc = c->data;
	const struct pset_row *rows = dc->dv->rows_dd->de.diff.rows_src.rows;

	return strcmp(rows[SRC(a)].name, rows[SRC(b)].name);
}

/* ---- building --------------------------------------------------------------- */

static void build_columns(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff *d = &dv->rows_dd->de.diff;
	struct table *t = &dv->table;
	int wa = draw_digits(d->total_a), wb = draw_digits(d->total_b);
	bool time = d->opts.norm == PSET_NORM_PERIOD; /* the headers say which */

	static const struct { uint64_t (*key)(const struct diff_view *, size_t, int); int side; }
		keys[COL__COUNT] = {
		[COL_A] = { key_count, 0 }, [COL_A_SHARE] = { key_share, 0 },
		[COL_B] = { key_count, 1 }, [COL_B_SHARE] = { key_share, 1 },
		[COL_DELTA] = { key_delta, 0 }, [COL_RATIO] = { key_ratio, 0 },
		[COL_VERDICT] = { key_verdict, 0 }, [COL_NAME] = { key_name, 0 },
		[COL_IMAGE] = { key_image, 0 },
	};

	for (size_t k = 0; k < COL__COUNT; k++)
		dv->cols[k] = (struct diff_col){ dv, keys[k].key, keys[k].side };
	table_clear_columns(t);
	table_add_column(t, &(struct table_column){ .name = "A", .width = wa > 3 ? wa : 3,
		.align = ALIGN_RIGHT, .numeric = true, .data = &dv->cols[COL_A], .cmp = by_key,
		.key = key_row, .keys = keys_all, .cell = cell_count, .chars = TABLE_CHARS_NUMBER });
	table_add_column(t, &(struct table_column){ .name = "A%", .title = time ? "A time" : NULL,
		.width = 6, .align = ALIGN_RIGHT, .numeric = true, .data = &dv->cols[COL_A_SHARE],
		.cmp = by_key, .key = key_row, .keys = keys_all, .cell = cell_share,
		.chars = TABLE_CHARS_NUMBER });
	table_add_column(t, &(struct table_column){ .name = "B", .width = wb > 3 ? wb : 3,
		.align = ALIGN_RIGHT, .numeric = true, .arg = 1, .data = &dv->cols[COL_B],
		.cmp = by_key, .key = key_row, .keys = keys_all, .cell = cell_count,
		.chars = TABLE_CHARS_NUMBER });
	table_add_column(t, &(struct table_column){ .name = "B%", .title = time ? "B time" : NULL,
		.width = 6, .align = ALIGN_RIGHT, .numeric = true, .arg = 1,
		.data = &dv->cols[COL_B_SHARE], .cmp = by_key, .key = key_row, .keys = keys_all,
		.cell = cell_share, .chars = TABLE_CHARS_NUMBER });
	table_add_column(t, &(struct table_column){ .name = "delta", .title = time ? "delta t" : NULL,
		.width = 7, .align = ALIGN_RIGHT, .numeric = true, .data = &dv->cols[COL_DELTA],
		.cmp = by_key, .key = key_row, .keys = keys_all, .cell = cell_delta,
		.chars = TABLE_CHARS_NUMBER });
	table_add_column(t, &(struct table_column){ .name = "ratio", .width = 7,
		.align = ALIGN_RIGHT, .numeric = true, .data = &dv->cols[COL_RATIO], .cmp = by_key,
		.key = key_row, .keys = keys_all, .cell = cell_ratio,
		.chars = TABLE_CHARS_NUMBER "xnewgo" });
	table_add_column(t, &(struct table_column){ .name = "verdict", .width = 12,
		.numeric = true, .data = &dv->cols[COL_VERDICT], .cmp = by_key, .key = key_row,
		.keys = keys_all, .cell = cell_verdict, .chars = "~-abcdeghilnprs" });
	table_add_column(t, &(struct table_column){ .name = "procedure", .min = 12,
		.data = &dv->cols[COL_NAME], .cmp = cmp_name, .key = key_row, .keys = keys_all,
		.cell = cell_name, .text = text_name });
	table_add_column(t, &(struct table_column){ .name = "image", .min = 10,
		.align = ALIGN_LEFT_TAIL, .data = &dv->cols[COL_IMAGE], .cmp = by_key, .key = key_row,
		.keys = keys_all, .cell = cell_image, .text = text_image });
}

static void diff_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	const struct pset_row *r = src_of(ctx, row);

	strbuf_addf(out, "%s %s", r->name, r->image);
}

static void remember_cursor(struct view *v)
{
	struct diff_view *dv = DV(v);
	const void *cur = v->lines ? table_row(v->table, v->pos) : NULL;

	if (!cur)
		return;
	free(dv->keep_name);
	free(dv->keep_image);
	dv->keep_dd = dv->rows_dd;
	dv->keep_src = SRC(cur);
	dv->keep_name = xstrdup(src_of(v, cur)->name);
	dv->keep_image = xstrdup(src_of(v, cur)->image);
}

/*
 * The row the cursor was on: in the same data (remade by x or %), where
 * its source row went, two passes over indices; else by name and image.
 */
static bool find_kept(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff *d = &dv->rows_dd->de.diff;

	if (dv->keep_name && dv->keep_dd == dv->rows_dd && dv->keep_src < d->n_rows &&
	    !strcmp(d->rows_src.rows[dv->keep_src].name, dv->keep_name)) {
		for (size_t i = 0; i < d->n_rows; i++) {
			long pos;

			if (d->order[i] != dv->keep_src)
				continue;
			if ((pos = table_position(v->table, i)) < 0)
				return false;
			view_move_to(v, (size_t)pos);
			return true;
		}
		return false;
	}
	for (size_t i = 0; dv->keep_name && i < v->lines; i++) {
		const struct pset_row *r = src_of(v, table_row(v->table, i));

		if (!strcmp(r->name, dv->keep_name) && !strcmp(r->image, dv->keep_image)) {
			view_move_to(v, i);
			return true;
		}
	}
	return false;
}

/* The rows shown: the notable ones (dcpidiff's without --all); every one has no keep(). */
static bool diff_keep(void *ctx, const void *row)
{
	const struct diff_view *dv = DV((struct view *)ctx);

	return diff_src_shown(&dv->rows_dd->de.diff, SRC(row));
}

/*
 * Every row goes into the table once (the diff's order: each row its
 * source row); a switches what diff_keep() accepts.  The same rows again
 * keep the table's orders.
 */
static void set_rows(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff_data *dd = dv->rows_dd;

	table_set_row_array(&dv->table, dd->de.diff.order, dd->n, sizeof(*dd->de.diff.order));
	dv->generation = dd->generation;
}

/* The rows again (same: the cursor stays on its row; other: found again, else the first). */
static void show_rows(struct view *v, bool same)
{
	view_table_update(v);
	if (!same && !find_kept(v))
		view_move_to(v, 0);
}

static void diff_reload(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff_data *dd;
	bool same;

	remember_cursor(v);
	dd = data_diff(v->src, v->loc.epoch, v->loc.epoch_b, NULL, v);
	same = dd && dd == dv->rows_dd && !dd->status && dd->generation == dv->generation;
	/* an error shown leaves the table as it is: back to those rows, their orders hold */
	if (!same && dd && !dd->status)
		table_set_rows(&dv->table, NULL, 0);
	dv->dd = dd;
	v->empty = tui_has_db(v->tui) ? "(no samples in either epoch)" : "(no database)";
	if (!dd || dd->status) {
		if (dd)
			v->empty = dd->error;
		view_set_lines(v, 0);
		return;
	}
	dv->rows_dd = dd;
	build_columns(v);
	set_rows(v);
	show_rows(v, same);
}

static int diff_open(struct view *v)
{
	struct diff_view *dv = DV(v);

	if (!v->loc.epoch || !v->loc.epoch_b)
		return errorf("a diff needs two epochs: mark them with m, or ':diff A B'");
	table_init(&dv->table, v);
	dv->table.filter_text = diff_filter_text;
	dv->table.keep = diff_keep;
	strbuf_init(&dv->name, 0);
	v->table = &dv->table;
	diff_reload(v);
	return 0;
}

static void diff_close(struct view *v)
{
	table_release(&DV(v)->table);
	strbuf_release(&DV(v)->name);
	free(DV(v)->keep_name);
	free(DV(v)->keep_image);
}

/* ---- requests ------------------------------------------------------------------ */

/*
 * What names a procedure for lookup.h in both epochs: NAME@IMAGE (its
 * address may differ between builds).
 */
static char *row_spec(const struct pset_row *r)
{
	return xasprintf("%s@%s", r->name, r->image);
}

static void open_row(struct view *v, const struct pset_row *r)
{
	struct view_loc loc = { .epoch = v->loc.epoch, .epoch_b = v->loc.epoch_b };

	if (!r->has_addr) {
		errorf("%s has no instructions to compare (samples outside every known procedure, "
		       "or an image without names)", display_safe_in(r->name, &DV(v)->name));
		return;
	}
	loc.procedure = row_spec(r);
	tui_open_view(v->tui, "diff-procedure", &loc);
	free(loc.procedure);
}

static void swap_sides(struct view *v)
{
	uint32_t a = v->loc.epoch;
	struct strbuf sb = STRBUF_INIT;

	v->loc.epoch = v->loc.epoch_b;
	v->loc.epoch_b = a;
	view_wait(v, NULL);
	diff_reload(v);
	strbuf_addstr(&sb, "A is now epoch ");
	tui_epoch_name(v->tui, v->loc.epoch, &sb);
	strbuf_addstr(&sb, ", B epoch ");
	tui_epoch_name(v->tui, v->loc.epoch_b, &sb);
	tui_info(v->tui, "%s", sb.buf);
	strbuf_release(&sb);
}

static enum view_result diff_request(struct view *v, enum request req, const char *arg)
{
	struct diff_view *dv = DV(v);
	const void *r = table_row(v->table, v->pos);

	switch (req) {
	case REQ_ENTER:
		if (r)
			open_row(v, src_of(v, r));
		return VIEW_DONE;
	case REQ_SWAP:
		swap_sides(v);
		return VIEW_DONE;
	case REQ_TOGGLE_ALL:
		if (!dv->dd || dv->dd->status)
			return VIEW_DONE;
		dv->all = !dv->all;
		dv->table.keep = dv->all ? NULL : diff_keep;
		show_rows(v, true);
		tui_info(v->tui, dv->all ? "every row (a again: the notable ones)"
			 : "significant rows, and those above 0.1%% on a side (a again: every row)");
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

static void diff_title(struct view *v, struct strbuf *sb)
{
	const struct diff_data *dd = DV(v)->dd;
	const struct diff *d;

	strbuf_addstr(sb, "A ");
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	strbuf_addstr(sb, " vs B ");
	tui_epoch_name(v->tui, v->loc.epoch_b, sb);
	if (!dd || dd->status)
		return;
	d = &dd->de.diff;
	if (d->opts.norm == PSET_NORM_PERIOD)
		strbuf_addstr(sb, " by period");
	strbuf_addf(sb, ": %zu significant change%s among %zu procedures", d->n_significant,
		    d->n_significant == 1 ? "" : "s", d->n_rows);
	if (v->lines != d->n_rows)
		strbuf_addf(sb, " (%zu shown)", v->lines);
	strbuf_addf(sb, ", %s", dd->label);
}

static int diff_goto(struct view *v, const char *what)
{
	for (size_t i = 0; i < v->lines; i++) {
		if (!strcmp(text_name(v, NULL, table_row(v->table, i)), what)) {
			view_move_to(v, i);
			return 0;
		}
	}
	return errorf("no procedure '%s' among the rows shown%s", what,
		      DV(v)->all ? "" : " (a shows every row)");
}

static void diff_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	const struct diff_data *dd = DV(v)->dd;

	if (kind != ARG_GOTO || !dd || dd->status)
		return;
	for (size_t i = 0; i < dd->n; i++)
		candidates_add(c, display_safe_in(dd->de.diff.rows_src.rows[i].name, &DV(v)->name));
}

/* ---- the pane: what is compared, how, and the selected row ---------------------- */

enum { PANE_A, PANE_B, PANE_TEST, PANE_ROW, PANE_VERDICT, PANE_NOTE, PANE__LINES };

static size_t diff_pane_lines(struct view *v)
{
	const struct diff_data *dd = DV(v)->dd;

	return dd && !dd->status ? PANE_NOTE + (dd->n_notes ? dd->n_notes : 0) : 0;
}

static const char *method_words(enum diff_method m)
{
	switch (m) {
	case DIFF_POISSON: return "Poisson counts, conditional binomial test";
	case DIFF_WELCH: return "Welch's t-test";
	case DIFF_PREDICTION: return "prediction-interval t-test";
	default: return "not tested (a side has no samples)";
	}
}

static void pane_row(const struct diff *d, const struct diff_row *r, struct strbuf *sb)
{
	const char *what = d->opts.norm == PSET_NORM_PERIOD ? "time " : "";
	char ratio[24], *name = display_safe(r->name), *image = display_safe(r->image);

	diff_format_ratio(r->ratio, ratio, sizeof(ratio));
	strbuf_addf(sb, "%s in %s: A %" PRIu64 " (%s%.2f%%), B %" PRIu64 " (%s%.2f%%), delta %+.2f "
		    "points, ratio %s", name, image, r->a, what, r->norm_a, r->b, what,
		    r->norm_b, r->effect, ratio);
	free(name);
	free(image);
}

static void pane_verdict(const struct diff *d, const struct diff_row *r, struct strbuf *sb)
{
	strbuf_addf(sb, "%s", diff_verdict(d, r));
	if (d->method == DIFF_UNTESTED)
		return;
	if (r->tested)
		strbuf_addf(sb, ": q %.2g (p %.2g), effect %+.2f points", r->q, r->p, r->effect);
	else
		strbuf_addstr(sb, ": not tested (too few samples to ever be significant)");
	if (r->builds_differ)
		strbuf_addstr(sb, "; * the binaries differ: instructions cannot be compared");
}

static void diff_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "A", "B", "test", "row", "verdict", "note" };
	const struct diff_data *dd = DV(v)->dd;
	const struct diff *df = &dd->de.diff;
	const void *cur = table_row(v->table, v->pos);
	const struct diff_row *r = cur ? row_of(DV(v), cur) : NULL;
	struct strbuf sb = STRBUF_INIT;

	switch (line) {
	case PANE_A:
		strbuf_addf(&sb, "%s: %" PRIu64 " samples of %s", dd->desc_a, df->total_a, dd->label);
		break;
	case PANE_B:
		strbuf_addf(&sb, "%s: %" PRIu64 " samples of %s", dd->desc_b, df->total_b, dd->label);
		break;
	case PANE_TEST:
		strbuf_addf(&sb, "by %s; %s; significant: q < %g and at least %.2f points and %.0f%%; "
			    "%zu of %zu rows could be tested",
			    df->opts.norm == PSET_NORM_PERIOD ? "period" : "total",
			    method_words(df->method), df->opts.alpha, df->opts.min_delta,
			    (df->opts.min_ratio - 1) * 100, df->n_tested, df->n_rows);
		break;
	case PANE_ROW:
		if (r)
			pane_row(df, r, &sb);
		break;
	case PANE_VERDICT:
		if (r)
			pane_verdict(df, r, &sb);
		break;
	default:
		if (line - PANE_NOTE < dd->n_notes)
			strbuf_addstr(&sb, dd->notes[line - PANE_NOTE]);
		break;
	}
	view_pane_line(d, labels[line < PANE_NOTE ? line : PANE_NOTE], 8,
		       line == PANE_VERDICT && r ? diff_row_style(r) : STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops diff_view_ops = {
	.name = "diff",
	.flags = 0,
	.legend = "Two epochs compared procedure by procedure, as dcpidiff compares them: the\n"
		  "samples of side A and side B, their shares of each side's samples (A%, B%),\n"
		  "delta (B% - A%, in points), ratio (B/A of the shares; new, gone) and the\n"
		  "verdict: changed, appeared, disappeared when significant (q < 0.05 after\n"
		  "Benjamini-Hochberg, and at least 0.1 points and 10%); ~ (within noise),\n"
		  "~appeared, ~disappeared when not; - when untested.  Significant changes come\n"
		  "first, red when B takes more of the time, green when less; noise last.  Rows\n"
		  "within noise and below 0.1% on both sides are left out: a shows them.  A star\n"
		  "marks a procedure whose binary differs between the epochs.  Enter compares the\n"
		  "procedure instruction by instruction; x exchanges A and B; p shows what is\n"
		  "compared, the test, and the selected row in a pane.  % (:normalize) compares\n"
		  "time instead of shares: samples times their period, dcpidiff -N period, for\n"
		  "runs of the same work (a function that grew no longer shrinks the others):\n"
		  "A time and B time are then in percent of the mean of the two sides' totals,\n"
		  "equal where the time did not change, and delta t is their change.",
	.priv_size = sizeof(struct diff_view),
	.open = diff_open,
	.close = diff_close,
	.reload = diff_reload,
	.request = diff_request,
	.title = diff_title,
	.go_to = diff_goto,
	.complete = diff_complete,
	.pane_lines = diff_pane_lines,
	.draw_pane = diff_draw_pane,
};
