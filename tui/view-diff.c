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

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/data-diff.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct diff_view {
	const struct diff_data *dd;
	struct table table;
	bool all;                /* every row, not only the notable ones */
	/* the cursor's row, kept while new data loads */
	char *keep_name, *keep_image;
};

#define DV(v) ((struct diff_view *)(v)->priv)
#define ROW(p) ((const struct diff_vrow *)(p))

/* ---- cells (shared with the diff-procedure view through the same logic) ---- */

static void cell_count(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	uint64_t n = col->arg ? ROW(row)->r->b : ROW(row)->r->a;
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	draw_field(d, n ? STYLE_NORMAL : STYLE_DIM, buf, width, ALIGN_RIGHT);
}

static void cell_share(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	double s = col->arg ? ROW(row)->r->norm_b : ROW(row)->r->norm_a;
	char buf[24];

	snprintf(buf, sizeof(buf), "%.2f", s);
	draw_field(d, s > 0 ? STYLE_NORMAL : STYLE_DIM, buf, width, ALIGN_RIGHT);
}

/* More of the time (worse) in red, less (better) in green: significant changes only. */
static void cell_delta(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%+.2f", ROW(row)->r->effect);
	draw_field(d, diff_row_style(ROW(row)->r), buf, width, ALIGN_RIGHT);
}

static void cell_ratio(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	char buf[24];

	diff_format_ratio(ROW(row)->r->ratio, buf, sizeof(buf));
	draw_field(d, diff_row_style(ROW(row)->r), buf, width, ALIGN_RIGHT);
}

static void cell_verdict(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	struct view *v = ctx;

	draw_field(d, diff_row_style(ROW(row)->r), diff_verdict(&DV(v)->dd->de.diff, ROW(row)->r),
		   width, ALIGN_LEFT);
}

static void cell_name(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	const struct diff_vrow *r = row;

	if (!r->r->builds_differ) {
		draw_field(d, STYLE_NORMAL, r->name, width, ALIGN_LEFT);
		return;
	}
	/* dcpidiff marks procedures of binaries that differ with a star, after the name */
	int w = text_width(r->name, d->flags);

	if (w > width - 1)
		w = width - 1;
	draw_field(d, STYLE_NORMAL, r->name, w, ALIGN_LEFT);
	draw_text(d, STYLE_WARNING, "*");
	draw_space(d, STYLE_NORMAL, width - 1 - w);
}

static void cell_image(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, ROW(row)->base, width, ALIGN_LEFT_TAIL);
}

/* ---- comparisons ---------------------------------------------------------- */

static int cmp_count(const struct table_column *c, const void *a, const void *b)
{
	return c->arg ? table_cmp_u64(ROW(a)->r->b, ROW(b)->r->b)
		      : table_cmp_u64(ROW(a)->r->a, ROW(b)->r->a);
}

static int cmp_share(const struct table_column *c, const void *a, const void *b)
{
	return c->arg ? table_cmp_double(ROW(a)->r->norm_b, ROW(b)->r->norm_b)
		      : table_cmp_double(ROW(a)->r->norm_a, ROW(b)->r->norm_a);
}

static int cmp_delta(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_double(ROW(a)->r->effect, ROW(b)->r->effect);
}

/* NaN (no samples on either side) below everything, +inf (new) above. */
static double ratio_key(const struct diff_row *r)
{
	return isnan(r->ratio) ? -1 : r->ratio;
}

static int cmp_ratio(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_double(ratio_key(ROW(a)->r), ratio_key(ROW(b)->r));
}

static int cmp_verdict(const struct table_column *c, const void *a, const void *b)
{
	if (ROW(a)->r->significant != ROW(b)->r->significant)
		return ROW(a)->r->significant ? 1 : -1;
	return table_cmp_double(fabs(ROW(a)->r->effect), fabs(ROW(b)->r->effect));
}

static int cmp_name(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(ROW(a)->name, ROW(b)->name);
}

/* By file name, then by path (ranked by the job). */
static int cmp_image(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(ROW(a)->image_rank, ROW(b)->image_rank);
}

/* ---- building --------------------------------------------------------------- */

static void build_columns(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff *d = &dv->dd->de.diff;
	struct table *t = &dv->table;
	int wa = draw_digits(d->total_a), wb = draw_digits(d->total_b);
	bool time = d->opts.norm == PSET_NORM_PERIOD; /* the headers say which */

	table_clear_columns(t);
	table_add_column(t, &(struct table_column){ .name = "A", .width = wa > 3 ? wa : 3,
		.align = ALIGN_RIGHT, .numeric = true, .cmp = cmp_count, .cell = cell_count });
	table_add_column(t, &(struct table_column){ .name = "A%", .title = time ? "A time" : NULL,
		.width = 6, .align = ALIGN_RIGHT,
		.numeric = true, .cmp = cmp_share, .cell = cell_share });
	table_add_column(t, &(struct table_column){ .name = "B", .width = wb > 3 ? wb : 3,
		.align = ALIGN_RIGHT, .numeric = true, .arg = 1, .cmp = cmp_count, .cell = cell_count });
	table_add_column(t, &(struct table_column){ .name = "B%", .title = time ? "B time" : NULL,
		.width = 6, .align = ALIGN_RIGHT,
		.numeric = true, .arg = 1, .cmp = cmp_share, .cell = cell_share });
	table_add_column(t, &(struct table_column){ .name = "delta", .title = time ? "delta t" : NULL,
		.width = 7,
		.align = ALIGN_RIGHT, .numeric = true, .cmp = cmp_delta, .cell = cell_delta });
	table_add_column(t, &(struct table_column){ .name = "ratio", .width = 7,
		.align = ALIGN_RIGHT, .numeric = true, .cmp = cmp_ratio, .cell = cell_ratio });
	table_add_column(t, &(struct table_column){ .name = "verdict", .width = 12,
		.numeric = true, .cmp = cmp_verdict, .cell = cell_verdict });
	table_add_column(t, &(struct table_column){ .name = "procedure", .min = 12,
		.cmp = cmp_name, .cell = cell_name });
	table_add_column(t, &(struct table_column){ .name = "image", .min = 10,
		.align = ALIGN_LEFT_TAIL, .cmp = cmp_image, .cell = cell_image });
}

static void diff_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	strbuf_addf(out, "%s %s", ROW(row)->name, ROW(row)->image);
}

static void remember_cursor(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff_vrow *cur = table_row(v->table, v->pos);

	if (!cur)
		return;
	free(dv->keep_name);
	free(dv->keep_image);
	dv->keep_name = xstrdup(cur->name);
	dv->keep_image = xstrdup(cur->image);
}

static bool find_kept(struct view *v)
{
	struct diff_view *dv = DV(v);

	for (size_t i = 0; dv->keep_name && i < v->lines; i++) {
		const struct diff_vrow *r = table_row(v->table, i);

		if (!strcmp(r->name, dv->keep_name) && !strcmp(r->image, dv->keep_image)) {
			view_move_to(v, i);
			return true;
		}
	}
	return false;
}

/* The rows shown: the notable ones (dcpidiff's without --all), or every one. */
static bool diff_keep(void *ctx, const void *row)
{
	return DV((struct view *)ctx)->all || ROW(row)->shown;
}

/* Every row goes into the table once; a switches what diff_keep() accepts. */
static void set_rows(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff_data *dd = dv->dd;
	const void **ptrs = xcalloc(dd->n ? dd->n : 1, sizeof(*ptrs));

	for (size_t i = 0; i < dd->n; i++)
		ptrs[i] = &dd->rows[i];
	table_set_rows(&dv->table, ptrs, dd->n);
	free(ptrs);
}

static void show_rows(struct view *v)
{
	view_table_update(v);
	if (!find_kept(v))
		view_move_to(v, 0);
}

static void diff_reload(struct view *v)
{
	struct diff_view *dv = DV(v);
	const struct diff_data *dd;

	remember_cursor(v);
	table_set_rows(&dv->table, NULL, 0);
	dd = data_diff(v->src, v->loc.epoch, v->loc.epoch_b, NULL, v);
	dv->dd = dd;
	v->empty = tui_has_db(v->tui) ? "(no samples in either epoch)" : "(no database)";
	if (!dd || dd->status) {
		if (dd)
			v->empty = dd->error;
		view_set_lines(v, 0);
		return;
	}
	build_columns(v);
	set_rows(v);
	show_rows(v);
}

static int diff_open(struct view *v)
{
	struct diff_view *dv = DV(v);

	if (!v->loc.epoch || !v->loc.epoch_b)
		return errorf("a diff needs two epochs: mark them with m, or ':diff A B'");
	table_init(&dv->table, v);
	dv->table.filter_text = diff_filter_text;
	dv->table.keep = diff_keep;
	v->table = &dv->table;
	diff_reload(v);
	return 0;
}

static void diff_close(struct view *v)
{
	table_release(&DV(v)->table);
	free(DV(v)->keep_name);
	free(DV(v)->keep_image);
}

/* ---- requests ------------------------------------------------------------------ */

/*
 * What names a procedure for lookup.h in both epochs: NAME@IMAGE (its
 * address may differ between builds).
 */
static char *row_spec(const struct diff_vrow *r)
{
	return xasprintf("%s@%s", r->r->name, r->r->image);
}

static void open_row(struct view *v, const struct diff_vrow *r)
{
	struct view_loc loc = { .epoch = v->loc.epoch, .epoch_b = v->loc.epoch_b };

	if (!r->r->has_addr) {
		errorf("%s has no instructions to compare (samples outside every known procedure, "
		       "or an image without names)", r->name);
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
	const struct diff_vrow *r = table_row(v->table, v->pos);

	switch (req) {
	case REQ_ENTER:
		if (r)
			open_row(v, r);
		return VIEW_DONE;
	case REQ_SWAP:
		swap_sides(v);
		return VIEW_DONE;
	case REQ_TOGGLE_ALL:
		if (!dv->dd || dv->dd->status)
			return VIEW_DONE;
		remember_cursor(v);
		dv->all = !dv->all;
		show_rows(v);
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
		if (!strcmp(ROW(table_row(v->table, i))->name, what)) {
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
		candidates_add(c, dd->rows[i].name);
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

static void pane_row(const struct diff *d, const struct diff_vrow *r, struct strbuf *sb)
{
	const char *what = d->opts.norm == PSET_NORM_PERIOD ? "time " : "";
	char ratio[24];

	diff_format_ratio(r->r->ratio, ratio, sizeof(ratio));
	strbuf_addf(sb, "%s in %s: A %" PRIu64 " (%s%.2f%%), B %" PRIu64 " (%s%.2f%%), delta %+.2f "
		    "points, ratio %s", r->name, r->image, r->r->a, what, r->r->norm_a, r->r->b, what,
		    r->r->norm_b, r->r->effect, ratio);
}

static void pane_verdict(const struct diff *d, const struct diff_vrow *r, struct strbuf *sb)
{
	strbuf_addf(sb, "%s", diff_verdict(d, r->r));
	if (d->method == DIFF_UNTESTED)
		return;
	if (r->r->tested)
		strbuf_addf(sb, ": q %.2g (p %.2g), effect %+.2f points", r->r->q, r->r->p,
			    r->r->effect);
	else
		strbuf_addstr(sb, ": not tested (too few samples to ever be significant)");
	if (r->r->builds_differ)
		strbuf_addstr(sb, "; * the binaries differ: instructions cannot be compared");
}

static void diff_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "A", "B", "test", "row", "verdict", "note" };
	const struct diff_data *dd = DV(v)->dd;
	const struct diff *df = &dd->de.diff;
	const struct diff_vrow *r = table_row(v->table, v->pos);
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
		       line == PANE_VERDICT && r ? diff_row_style(r->r) : STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops diff_view_ops = {
	.name = "diff",
	.flags = VIEW_CACHE_TEXT,
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
