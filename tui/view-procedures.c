/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-procedures.c - the procedures of one image or of every image of
 * an epoch, as dcpiprof lists them (analysis/procprof.h): samples per
 * event, the share and running share of the current event, the name and
 * the image; and dcpicalc's figures for each procedure with time samples
 * (analysis/calc.h calc_procrow): CPI, best-case CPI, the dominant
 * culprit and the share of samples with high-confidence estimates.
 * Analysing every procedure takes long: a background job does it, hottest
 * first, and the columns fill in as it goes (the rows analysed so far are
 * drawn; sorting by them waits until it is complete).  Enter opens the
 * procedure.
 */
#include "config.h"
#include "tui/view.h"

#include "analysis/lookup.h"
#include "core/radix.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/data-proc.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct procs_view {
	const struct procs_data *pd;
	int by;                         /* enum procprof_by: :group */
	const struct procs_calc *calc;  /* the analysis, maybe still running */
	bool calc_complete;
	struct table table;
	struct table_samples samples;  /* the event the columns were built for, cum% */
	int column_of[EVENT__COUNT];    /* per event: its column in pd->pp, or -1 */
	struct proc_analysis an;        /* a row's analysis as read (procs_calc_get) */
	struct strbuf name;             /* a name escaped to be drawn */
	/* the cursor's row, kept while other data loads */
	char *keep_name;
	size_t keep_image;
	uint64_t keep_start;
};

#define PV(v) ((struct procs_view *)(v)->priv)
#define ROW(p) ((const struct procprof_row *)(p))
/* The index of a row of pv's data. */
#define INDEX(pv, row) ((size_t)(ROW(row) - (pv)->pd->pp.rows))

static uint64_t samples(const struct table_samples *ts, const void *row, int ev)
{
	const struct procs_view *pv = ts->data;

	return ev >= 0 && pv->column_of[ev] >= 0
		? procprof_samples(&pv->pd->pp, INDEX(pv, row), (size_t)pv->column_of[ev]) : 0;
}

/* ---- cells ------------------------------------------------------------- */

static const char *text_name(void *ctx, const struct table_column *col, const void *row)
{
	struct procs_view *pv = PV((struct view *)ctx);

	return procs_row_name(pv->pd, INDEX(pv, row), &pv->name);
}

static void cell_name(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	draw_field(d, ROW(row)->proc ? STYLE_NORMAL : STYLE_DIM, text_name(ctx, col, row), width,
		   ALIGN_LEFT_MIDDLE);
}

/* By process: "gzip", or "4321 gzip" by pid or tgid. */
static void cell_group(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	const struct procs_view *pv = PV((struct view *)ctx);
	const struct procprof_group *g = &pv->pd->pp.groups[ROW(row)->group];
	char buf[64];

	if (pv->by == PROCPROF_BY_COMM)
		snprintf(buf, sizeof(buf), "%s", g->comm ? g->comm : "?");
	else
		snprintf(buf, sizeof(buf), "%" PRIu32 " %s", g->id, g->comm ? g->comm : "?");
	draw_field(d, STYLE_NORMAL, buf, width, ALIGN_LEFT);
}

static int cmp_group(const struct table_column *c, const void *a, const void *b)
{
	const struct procs_view *pv = c->data;
	const struct procprof_group *x = &pv->pd->pp.groups[ROW(a)->group];
	const struct procprof_group *y = &pv->pd->pp.groups[ROW(b)->group];
	int r = strcmp(x->comm ? x->comm : "", y->comm ? y->comm : "");

	return r ? r : table_cmp_u64(x->id, y->id);
}

static const char *text_image(void *ctx, const struct table_column *col, const void *row)
{
	return procs_row_image(PV((struct view *)ctx)->pd, row)->base;
}

static void cell_image(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, text_image(ctx, col, row), width, ALIGN_LEFT_TAIL);
}

/*
 * The analysis of a row: NULL while the background job has not reached it
 * (then *pending says so, and a row being drawn is asked for first), or
 * when it has nothing to analyse.
 */
static const struct proc_analysis *analysis(struct view *v, const struct procprof_row *r,
					    bool *pending)
{
	struct procs_view *pv = PV(v);
	size_t i = INDEX(pv, r);

	*pending = false;
	if (!pv->calc)
		return NULL;
	if (!pv->calc_complete && !procs_calc_ready(pv->calc, i)) {
		if ((*pending = r->proc != NULL))
			procs_calc_want(pv->calc, i);
		return NULL;
	}
	return procs_calc_get(pv->calc, i, &pv->an);
}

/* A cell without a figure: "." while being analysed, "-" when there is none. */
static bool no_figure(struct draw *d, const struct proc_analysis *an, bool pending, int width)
{
	if (an)
		return false;
	draw_field(d, STYLE_DIM, pending ? "." : "-", width, ALIGN_RIGHT);
	return true;
}

/*
 * A best case above the actual CPI: the model gave some instructions more
 * cycles than the samples say they took (bytes the decoder could not follow,
 * a cold schedule's overstatement); dcpicalc lists them as unexplained gains.
 */
static bool best_above_cpi(const struct proc_analysis *an)
{
	return an->cpi >= 0 && an->best_cpi > 1.05 * an->cpi + 0.005;
}

static void cell_cpi(void *ctx, const struct table_column *col, const void *row, size_t pos,
		     struct draw *d, int width)
{
	bool pending;
	const struct proc_analysis *an = analysis(ctx, row, &pending);
	double x;
	char buf[16];

	if (no_figure(d, an, pending, width))
		return;
	x = col->arg ? an->best_cpi : an->cpi;
	snprintf(buf, sizeof(buf), "%.2f", x);
	draw_field(d, x < 0 ? STYLE_DIM : col->arg && best_above_cpi(an) ? STYLE_WARNING : STYLE_NORMAL,
		   x >= 0 ? buf : "?", width, ALIGN_RIGHT);
}

static void cell_culprit(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	bool pending;
	const struct proc_analysis *an = analysis(ctx, row, &pending);

	if (!an) {
		draw_field(d, STYLE_DIM, pending ? "." : "-", width, ALIGN_LEFT);
		return;
	}
	draw_field(d, proc_analysis_culprit(an) ? STYLE_BUBBLE : STYLE_DIM,
		   proc_analysis_culprit(an) ? proc_analysis_culprit(an) : "-", width, ALIGN_LEFT);
}

static void cell_conf(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	bool pending;
	const struct proc_analysis *an = analysis(ctx, row, &pending);
	double h;

	if (no_figure(d, an, pending, width))
		return;
	h = an->high_conf;
	table_draw_percent(d, h >= 0.8 ? STYLE_CONF_HIGH : h >= 0.5 ? STYLE_CONF_MEDIUM : STYLE_CONF_LOW,
		     h, width);
}

/* ---- comparisons ----------------------------------------------------------- */

static int cmp_name(const struct table_column *c, const void *a, const void *b)
{
	const struct procs_view *pv = c->data;

	return strcmp(procprof_name(&pv->pd->pp, INDEX(pv, a)), procprof_name(&pv->pd->pp, INDEX(pv, b)));
}

/* Names sort by their ranks, found once for every row (procprof's). */
static uint64_t key_name(const struct table_column *c, const void *row)
{
	const struct procs_view *pv = c->data;

	return pv->pd->pp.name_rank[INDEX(pv, row)];
}

static uint64_t key_address(const struct table_column *c, const void *row)
{
	return ROW(row)->proc ? ROW(row)->proc->start : 0;
}

static int cmp_address(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(key_address(c, a), key_address(c, b));
}

/*
 * The analysis of a row for sorting: none until the analysis is complete
 * (col->data is the view's struct procs_view).
 */
static const struct proc_analysis *sort_analysis(const struct table_column *c, const void *row)
{
	struct procs_view *pv = (struct procs_view *)c->data;  /* its buffer: read at once */

	if (!pv->calc || !pv->calc_complete)
		return NULL;
	return procs_calc_get(pv->calc, INDEX(pv, row), &pv->an);
}

/* Rows without a figure sort below every figure. */
static double figure(const struct proc_analysis *an, double x)
{
	return an && x >= 0 ? x : -1;
}

static double cpi_of(const struct table_column *c, const void *row)
{
	const struct proc_analysis *x = sort_analysis(c, row);

	return figure(x, x ? (c->arg ? x->best_cpi : x->cpi) : 0);
}

static int cmp_cpi(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_double(cpi_of(c, a), cpi_of(c, b));
}

static uint64_t key_cpi(const struct table_column *c, const void *row)
{
	return radix_key_double(cpi_of(c, row));
}

static const char *culprit_of(const struct table_column *c, const void *row)
{
	const struct proc_analysis *x = sort_analysis(c, row);
	const char *p = x ? proc_analysis_culprit(x) : NULL;

	return p ? p : "";
}

static int cmp_culprit(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(culprit_of(c, a), culprit_of(c, b));
}

/* The word's first eight letters (the words are shorter): they sort as the word. */
static uint64_t key_culprit(const struct table_column *c, const void *row)
{
	const char *w = culprit_of(c, row);
	uint64_t k = 0;

	for (size_t i = 0; i < 8; i++)
		k = k << 8 | (unsigned char)(*w ? *w++ : 0);
	return k;
}

static double conf_of(const struct table_column *c, const void *row)
{
	const struct proc_analysis *x = sort_analysis(c, row);

	return figure(x, x ? x->high_conf : 0);
}

static int cmp_conf(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_double(conf_of(c, a), conf_of(c, b));
}

static uint64_t key_conf(const struct table_column *c, const void *row)
{
	return radix_key_double(conf_of(c, row));
}

/* ---- building -------------------------------------------------------------- */

/* Filled in by a background job: live. */
static void add_analysis_columns(struct table *t, const struct procs_view *pv)
{
	table_add_column(t, &(struct table_column){ .name = "cpi", .title = "CPI", .width = 5,
		.align = ALIGN_RIGHT, .numeric = true, .data = pv, .cmp = cmp_cpi, .key = key_cpi,
		.cell = cell_cpi, .chars = TABLE_CHARS_NUMBER, .live = true });
	table_add_column(t, &(struct table_column){ .name = "best", .title = "best", .width = 5,
		.align = ALIGN_RIGHT, .numeric = true, .arg = 1, .data = pv, .cmp = cmp_cpi,
		.key = key_cpi, .cell = cell_cpi, .chars = TABLE_CHARS_NUMBER, .live = true });
	table_add_column(t, &(struct table_column){ .name = "culprit", .width = 7, .data = pv,
		.cmp = cmp_culprit, .key = key_culprit, .cell = cell_culprit,
		.chars = "abcdefghijklmnopqrstuvwxyz4.-", .live = true });
	table_add_column(t, &(struct table_column){ .name = "conf", .title = "conf%", .width = 5,
		.align = ALIGN_RIGHT, .numeric = true, .data = pv, .cmp = cmp_conf, .key = key_conf,
		.cell = cell_conf, .chars = TABLE_CHARS_NUMBER, .live = true });
}

/* The current event first, with its % and cum%, then the other events. */
static void build_columns(struct view *v)
{
	struct procs_view *pv = PV(v);
	struct table *t = &pv->table;

	int widths[EVENT__COUNT];

	/* as wide as the epoch's total */
	for (int e = 0; e < EVENT__COUNT; e++) {
		widths[e] = draw_digits(pv->pd->pp.totals[e]);
		pv->column_of[e] = -1;
	}
	for (size_t c = 0; c < pv->pd->pp.n_events; c++)
		pv->column_of[pv->pd->pp.events[c]] = (int)c;
	table_clear_columns(t);
	table_add_sample_columns(t, &pv->samples, pv->pd->pp.events, pv->pd->pp.n_events, widths);
	if (pv->calc)
		add_analysis_columns(t, pv);
	if (pv->by != PROCPROF_BY_IMAGE)
		table_add_column(t, &(struct table_column){ .name = procprof_by_name(pv->by),
			.max = pv->by == PROCPROF_BY_COMM ? 16 : 24, .data = pv, .cmp = cmp_group,
			.cell = cell_group });
	table_add_column(t, &(struct table_column){ .name = "procedure", .min = 12,
		.max = DRAW_NAME_MAX, .data = pv, .cmp = cmp_name, .key = key_name,
		.cell = cell_name, .text = text_name });
	if (!v->loc.image)
		table_add_column(t, &(struct table_column){ .name = "image", .min = 10,
			.align = ALIGN_LEFT_TAIL, .cell = cell_image, .text = text_image });
	/* Sorting without a column of their own: ":sort address", ":sort name". */
	table_add_column(t, &(struct table_column){ .name = "address", .hidden = true,
		.cmp = cmp_address, .key = key_address });
}

static void procs_updated(void *ctx, struct table *t)
{
	table_samples_update(t, &PV((struct view *)ctx)->samples);
}

static void procs_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	struct procs_view *pv = PV((struct view *)ctx);

	strbuf_addf(out, "%s %s", text_name(ctx, NULL, row), procs_row_image(pv->pd, row)->path);
}

/* The row the cursor was on before other data loaded (by image, address and name). */
static bool find_kept(struct view *v)
{
	struct procs_view *pv = PV(v);

	for (size_t i = 0; pv->keep_name && i < v->lines; i++) {
		const struct procprof_row *r = table_row(v->table, i);

		if (r->image == pv->keep_image && (r->proc ? r->proc->start : 0) == pv->keep_start &&
		    !strcmp(procprof_name(&pv->pd->pp, INDEX(pv, r)), pv->keep_name)) {
			view_move_to(v, i);
			return true;
		}
	}
	return false;
}

static bool has_time_event(const struct procs_data *pd)
{
	for (size_t e = 0; e < pd->pp.n_events; e++)
		if (event_is_time(pd->pp.events[e]))
			return true;
	return false;
}

/*
 * Asks for the analysis of every procedure (a background job, reloading
 * the view when complete); sorting by its columns waits until then.
 */
static void load_analysis(struct view *v)
{
	struct procs_view *pv = PV(v);

	if (!has_time_event(pv->pd))
		return;
	pv->calc = data_procs_calc(v->src, pv->pd, v, &pv->calc_complete);
}

static void procs_reload(struct view *v)
{
	struct procs_view *pv = PV(v);
	const struct procprof_row *cur = table_row(v->table, v->pos);
	const struct procs_data *pd = data_procs_by(v->src, v->loc.epoch, v->loc.image, pv->by, v);

	if (cur && pd != pv->pd) {
		free(pv->keep_name);
		pv->keep_name = xstrdup(procprof_name(&pv->pd->pp, INDEX(pv, cur)));
		pv->keep_image = cur->image;
		pv->keep_start = cur->proc ? cur->proc->start : 0;
	}
	if (!pd || pd->status || pd != pv->pd)
		table_set_rows(&pv->table, NULL, 0);
	pv->pd = pd;
	pv->calc = NULL;
	v->empty = tui_has_db(v->tui) ? "(no samples in this epoch)" : "(no database)";
	if (!pd || pd->status) {
		if (pd)
			v->empty = pd->error;
		view_set_lines(v, 0);
		return;
	}
	tui_default_event(v->tui, pd->events);
	load_analysis(v);
	pv->samples.totals = pd->pp.totals;
	table_samples_set_event(&pv->table, &pv->samples, tui_event(v->tui));
	build_columns(v);
	table_samples_default_sort(&pv->table, &pv->samples, "procedure");
	/* the same rows again keep their orders; the analysis' figures may have come */
	table_set_row_array(&pv->table, pd->pp.rows, pd->n, sizeof(*pd->pp.rows));
	table_touch(&pv->table);
	view_table_update(v);
	if (pv->keep_name && !find_kept(v))
		view_move_to(v, 0);
	free(pv->keep_name);
	pv->keep_name = NULL;
}

static int procs_open(struct view *v)
{
	struct procs_view *pv = PV(v);

	if (!v->loc.epoch)
		return errorf("no epoch to show the procedures of");
	table_init(&pv->table, v);
	pv->table.filter_text = procs_filter_text;
	pv->table.updated = procs_updated;
	pv->samples.event = -1;
	pv->samples.samples = samples;
	pv->samples.data = pv;
	strbuf_init(&pv->name, 0);
	v->table = &pv->table;
	procs_reload(v);
	return 0;
}

static void procs_close(struct view *v)
{
	table_release(&PV(v)->table);
	table_samples_release(&PV(v)->samples);
	strbuf_release(&PV(v)->name);
	free(PV(v)->keep_name);
}

/* Why an unnamed row has no procedure to open. */
static void refuse(struct view *v, const struct procprof_row *r)
{
	const struct procs_image *pi = procs_row_image(PV(v)->pd, r);

	errorf("no procedure to open: %s in '%s'%s%s%s", text_name(v, NULL, r), pi->path,
	       pi->why ? ": " : " (samples outside every known procedure)",
	       pi->why ? pi->why : "",
	       pi->state == IMAGE_CHANGED && !pi->forced ? " (:force uses it anyway)" : "");
}

static void open_row(struct view *v, const struct procprof_row *r)
{
	char spec[32];

	if (!r->proc) {
		refuse(v, r);
		return;
	}
	snprintf(spec, sizeof(spec), "0x%" PRIx64, r->proc->start);
	tui_open_procedure(v->tui, v->loc.epoch, procs_row_key(PV(v)->pd, r), spec);
}

/* C: the callers and callees of the selected procedure. */
static void open_callers(struct view *v, const struct procprof_row *r)
{
	struct view_loc loc = { .epoch = v->loc.epoch };

	if (!r->proc) {
		refuse(v, r);
		return;
	}
	loc.image = (char *)procs_row_key(PV(v)->pd, r);
	loc.procedure = (char *)text_name(v, NULL, r);
	loc.address = r->proc->start;
	tui_open_view(v->tui, "callers", &loc);
}

/* :group comm|pid|tgid|image: rows per process too (from the epoch's stacks), or not. */
static void group_by(struct view *v, const char *arg)
{
	int by = procprof_by_lookup(arg ? arg : "");

	if (by < 0) {
		errorf("cannot group by '%s' (comm, pid, tgid or image)", arg ? arg : "");
		return;
	}
	PV(v)->by = by;
	procs_reload(v);
}

static enum view_result procs_request(struct view *v, enum request req, const char *arg)
{
	const struct procprof_row *r = table_row(v->table, v->pos);

	switch (req) {
	case REQ_ENTER:
		if (r)
			open_row(v, r);
		return VIEW_DONE;
	case REQ_CALLERS:
		if (r)
			open_callers(v, r);
		return VIEW_DONE;
	case REQ_GROUP_BY:
		group_by(v, arg);
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

static void procs_title(struct view *v, struct strbuf *sb)
{
	struct procs_view *pv = PV(v);
	const struct procs_data *pd = pv->pd;

	strbuf_addstr(sb, "epoch ");
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	if (!pd || pd->status)
		return;
	strbuf_addf(sb, ": %zu procedure%s", pd->n, pd->n == 1 ? "" : "s");
	if (v->loc.image)
		strbuf_addf(sb, " of %s", pd->n ? procs_row_image(pd, &pd->pp.rows[0])->base : v->loc.image);
	if (pv->by != PROCPROF_BY_IMAGE)
		strbuf_addf(sb, " by %s", procprof_by_name(pv->by));
	if (v->lines != pd->n)
		strbuf_addf(sb, ", %zu shown", v->lines);
	if (pv->samples.event >= 0)
		strbuf_addf(sb, ", %" PRIu64 " %s samples", pd->pp.shown[pv->samples.event],
			    event_name((enum dcpi_event)pv->samples.event));
	if (pv->calc && !pv->calc_complete)
		strbuf_addf(sb, ", %zu of %zu analysed", atomic_load(&pv->calc->n_analysed),
			    pv->calc->n_todo);
	if (pd->force)
		strbuf_addstr(sb, " (forced)");
}

static bool matches(struct view *v, const struct procprof_row *r, const char *what, uint64_t addr,
		    bool is_addr)
{
	if (is_addr)
		return r->proc && addr >= r->proc->start && addr < r->proc->end;
	return !strcmp(text_name(v, NULL, r), what);
}

/*
 * :goto NAME|0xADDRESS: the row of that procedure; else (it may have no
 * samples, or be hidden by the filter) the procedure itself.
 */
static int procs_goto(struct view *v, const char *what)
{
	uint64_t addr = 0;
	bool is_addr = lookup_parse_address(what, false, &addr);

	for (size_t i = 0; i < v->lines; i++) {
		if (matches(v, table_row(v->table, i), what, addr, is_addr)) {
			view_move_to(v, i);
			return 0;
		}
	}
	return tui_open_procedure(v->tui, v->loc.epoch, v->loc.image, what);
}

static void procs_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	const struct procs_data *pd = PV(v)->pd;

	if (kind != ARG_GOTO || !pd)
		return;
	for (size_t i = 0; i < pd->n; i++)
		if (pd->pp.rows[i].proc)
			candidates_add(c, text_name(v, NULL, &pd->pp.rows[i]));
	procs_complete_names(v->src, v->loc.epoch, c);
}

/* ---- the details pane: the selected procedure ------------------------------ */

enum { PANE_NAME, PANE_IMAGE, PANE_SAMPLES, PANE_ANALYSIS, PANE__LINES };

static size_t procs_pane_lines(struct view *v)
{
	return table_row(v->table, v->pos) ? PANE__LINES : 0;
}

static void describe_samples(const struct procs_data *pd, size_t i, struct strbuf *sb)
{
	for (size_t k = 0; k < pd->pp.n_events; k++) {
		enum dcpi_event e = pd->pp.events[k];
		uint64_t total = pd->pp.totals[e], n = procprof_samples(&pd->pp, i, k);

		strbuf_addf(sb, "%s%s %" PRIu64 " (%.2f%% of the epoch)", k ? ", " : "",
			    event_name(e), n, total ? 100.0 * (double)n / (double)total : 0.0);
	}
}

static bool has_time(const struct procs_data *pd, size_t i)
{
	for (size_t e = 0; e < pd->pp.n_events; e++)
		if (event_is_time(pd->pp.events[e]) && procprof_samples(&pd->pp, i, e))
			return true;
	return false;
}

/* dcpicalc's figures for the procedure (calc_procrow). */
static void describe_analysis(struct view *v, const struct procprof_row *r, struct strbuf *sb)
{
	bool pending;
	const struct proc_analysis *an = analysis(v, r, &pending);
	char cpi[16], best[16];

	if (!an) {
		const struct procs_image *pi = procs_row_image(PV(v)->pd, r);

		if (pending)
			strbuf_addstr(sb, "being analysed (in the background)");
		else if (!r->proc)
			strbuf_addstr(sb, "none: no procedure");
		else if (pi->state != IMAGE_OK && !(pi->state == IMAGE_CHANGED && pi->forced))
			strbuf_addf(sb, "none: no code to analyse (%s)", image_state_name(pi->state));
		else if (!PV(v)->calc || !has_time(PV(v)->pd, INDEX(PV(v), r)))
			strbuf_addstr(sb, "none: no time samples");
		else
			strbuf_addstr(sb, "none: the analysis failed (M lists why)");
		return;
	}
	snprintf(cpi, sizeof(cpi), an->cpi >= 0 ? "%.2f" : "?", an->cpi);
	snprintf(best, sizeof(best), an->best_cpi >= 0 ? "%.2f" : "?", an->best_cpi);
	strbuf_addf(sb, "CPI %s, best-case %s%s; ", cpi, best,
		    best_above_cpi(an) ? " (above the CPI: the model gives some instructions more "
		    "cycles than they took, see its unexplained gains)" : "");
	if (proc_analysis_culprit(an))
		strbuf_addf(sb, "dominant culprit %c %s (up to %.1f%% of its samples); ",
			    calc_culprit_letter((enum calc_culprit)an->dominant),
			    calc_culprit_name((enum calc_culprit)an->dominant), 100 * an->culprit_share);
	strbuf_addf(sb, "%.0f%% of its samples in high-confidence estimates (Enter: the details)",
		    100 * an->high_conf);
}

static void procs_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "procedure", "image", "samples", "analysis" };
	const struct procprof_row *r = table_row(v->table, v->pos);
	const struct procs_data *pd = PV(v)->pd;
	const struct procs_image *pi;
	struct strbuf sb = STRBUF_INIT;

	if (!r)
		return;
	pi = procs_row_image(pd, r);
	switch (line) {
	case PANE_NAME:
		strbuf_addstr(&sb, text_name(v, NULL, r));
		if (r->proc)
			strbuf_addf(&sb, "  0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes)",
				    r->proc->start, r->proc->end, r->proc->end - r->proc->start);
		else
			strbuf_addf(&sb, "  (no procedure: %s)",
				    pi->why ? pi->why : "samples outside every known procedure");
		break;
	case PANE_IMAGE:
		strbuf_addf(&sb, "%s, key %s, %s%s", pi->path, procs_row_key(pd, r),
			    image_state_name(pi->state), pi->forced ? " (forced)" : "");
		break;
	case PANE_SAMPLES:
		describe_samples(pd, INDEX(PV(v), r), &sb);
		break;
	case PANE_ANALYSIS:
		describe_analysis(v, r, &sb);
		break;
	}
	view_pane_line(d, labels[line], 10, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops procedures_view_ops = {
	.name = "procedures",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "Samples per event in each procedure (dcpiprof's rows); % and cum% are shares\n"
		  "of all samples of the current event in the epoch.  CPI, best (best-case CPI),\n"
		  "culprit (the dominant reason of the dynamic stalls: icache, itlb, dcache, dtlb,\n"
		  "branch, storeq, mul, div, sync, unexpl) and conf% (the share of the\n"
		  "procedure's samples in high-confidence estimates) are dcpicalc's; they fill in\n"
		  "as a background job analyses every procedure with time samples, hottest first\n"
		  "(\".\": not yet; \"-\": nothing to analyse).  Samples no procedure holds\n"
		  "are one row per image: [unknown], or why it has no names ([no binary],\n"
		  "[changed binary]: :force uses it anyway, [no symbols], [kernel]).  Enter opens\n"
		  "the procedure, C its callers and callees (epochs recorded with -g); :sort\n"
		  "address and :sort procedure sort by address or name; :filter matches names\n"
		  "and image paths; p shows the selected row in a pane.  :group comm, pid or\n"
		  "tgid (b) lists them per process name, thread or process (the epoch's stacks:\n"
		  "-g or --threads; the analysis columns stay the procedure's, every process\n"
		  "together), :group image together again.",
	.priv_size = sizeof(struct procs_view),
	.open = procs_open,
	.close = procs_close,
	.reload = procs_reload,
	.request = procs_request,
	.title = procs_title,
	.go_to = procs_goto,
	.complete = procs_complete,
	.pane_lines = procs_pane_lines,
	.draw_pane = procs_draw_pane,
};
