/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/table.h"

#include "core/strbuf.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->sort = -1;
	t->ctx = ctx;
}

void table_release(struct table *t)
{
	free(t->cols);
	free(t->rows);
	free(t->shown);
	free(t->filter);
	free(t->widths);
	free(t->natural);
	free(t->fit);
	free(t->order);
	table_init(t, NULL);
}

void table_clear_columns(struct table *t)
{
	t->n_cols = 0;
	t->order_ok = false;
	t->sort = -1; /* sort_name stays: a column of that name sorts again */
}

void table_add_column(struct table *t, const struct table_column *col)
{
	ALLOC_GROW(t->cols, t->n_cols + 1, t->alloc_cols);
	t->cols[t->n_cols++] = *col;
	if (t->sort < 0 && col->cmp && !strcmp(col->name, t->sort_name))
		t->sort = (int)t->n_cols - 1;
	t->widths = xreallocarray(t->widths, t->alloc_cols, sizeof(*t->widths));
	t->natural = xreallocarray(t->natural, t->alloc_cols, sizeof(*t->natural));
	t->fit = xreallocarray(t->fit, t->alloc_cols, sizeof(*t->fit));
	t->natural_max = 0;
	t->fit_ok = false;
}

int table_column_index(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

void table_set_rows(struct table *t, const void *const *rows, size_t n)
{
	free(t->rows);
	free(t->shown);
	t->rows = n ? xmemdup(rows, n * sizeof(*rows)) : NULL;
	t->n_rows = n;
	t->shown = xcalloc(n ? n : 1, sizeof(*t->shown));
	t->n_shown = 0;
	free(t->order);
	t->order = NULL;
	t->order_ok = false;
}

void table_sort_by(struct table *t, int col, bool desc)
{
	t->sort = col >= 0 && (size_t)col < t->n_cols && t->cols[col].cmp ? col : -1;
	t->desc = desc;
	snprintf(t->sort_name, sizeof(t->sort_name), "%s", t->sort >= 0 ? t->cols[col].name : "");
}

void table_set_filter(struct table *t, const char *text)
{
	free(t->filter);
	t->filter = text && *text ? xstrdup(text) : NULL;
}

/* The text of a row for filtering: the view's, else the drawn cells. */
static void row_text(struct table *t, size_t i, struct strbuf *sb)
{
	struct draw d;

	strbuf_reset(sb);
	if (t->filter_text) {
		t->filter_text(t->ctx, t->rows[i], sb);
		return;
	}
	draw_init_text(&d, sb, DRAW_UNBOUNDED, 0);
	for (size_t c = 0; c < t->n_cols; c++) {
		if (t->cols[c].hidden)
			continue;
		t->cols[c].cell(t->ctx, &t->cols[c], t->rows[i], i, &d, 64);
		strbuf_addch(sb, ' ');
	}
}

static bool has_upper(const char *s)
{
	for (; *s; s++)
		if (isupper((unsigned char)*s))
			return true;
	return false;
}

/* Shows the rows of order (NULL: all, in their order) that keep() and the filter accept. */
static void apply_filter(struct table *t, const size_t *order)
{
	struct strbuf sb = STRBUF_INIT;
	bool icase = t->filter && !has_upper(t->filter);

	t->n_shown = 0;
	for (size_t k = 0; k < t->n_rows; k++) {
		size_t i = order ? order[k] : k;

		if (t->keep && !t->keep(t->ctx, t->rows[i]))
			continue;
		if (t->filter) {
			row_text(t, i, &sb);
			if (!(icase ? strcasestr(sb.buf, t->filter) : strstr(sb.buf, t->filter)))
				continue;
		}
		t->shown[t->n_shown++] = i;
	}
	strbuf_release(&sb);
}

static int compare_shown(const void *pa, const void *pb, void *arg)
{
	const struct table *t = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct table_column *col = &t->cols[t->sort];
	int r = col->cmp(col, t->rows[a], t->rows[b]);

	if (t->desc)
		r = -r;
	return r ? r : (a > b) - (a < b);
}

struct keyed {
	uint64_t key;
	size_t i;
};

/*
 * Sorts keyed rows by key (ascending, or descending with desc), ties in
 * the order given: a radix sort, a byte of the key a pass, passes over
 * bytes every key shares skipped (sample counts fit in two or three).  A
 * million rows sort in a few passes of a few milliseconds, where qsort
 * took a tenth of a second.
 */
static void radix_sort(struct keyed *v, size_t n, bool desc)
{
	size_t (*count)[256] = xcalloc(8, sizeof(*count));
	struct keyed *tmp = xcalloc(n ? n : 1, sizeof(*tmp)), *from = v, *to = tmp;
	uint64_t flip = desc ? UINT64_MAX : 0;

	if (n < 2) {
		free(tmp);
		free(count);
		return;
	}
	for (size_t k = 0; k < n; k++)
		for (unsigned b = 0; b < 8; b++)
			count[b][((v[k].key ^ flip) >> (8 * b)) & 0xff]++;
	for (unsigned b = 0; b < 8; b++) {
		size_t at = 0;

		if (count[b][((v[0].key ^ flip) >> (8 * b)) & 0xff] == n)
			continue;  /* every key has this byte */
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[b][d];

			count[b][d] = at;
			at += c;
		}
		for (size_t k = 0; k < n; k++)
			to[count[b][((from[k].key ^ flip) >> (8 * b)) & 0xff]++] = from[k];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	free(count);
}

/*
 * Sorts the shown rows; rows given already in the order asked for (a
 * report sorted by the same column: the procedures of a million rows by
 * samples) cost one pass.  A column with a key sorts the keys, read once
 * per row, not rows through cmp.
 */
static void sort_shown(struct table *t)
{
	const struct table_column *col = &t->cols[t->sort];
	struct keyed *v;
	size_t k = 1;

	while (k < t->n_shown && compare_shown(&t->shown[k - 1], &t->shown[k], t) < 0)
		k++;
	if (k >= t->n_shown)
		return;
	if (!col->key) {
		qsort_r(t->shown, t->n_shown, sizeof(*t->shown), compare_shown, t);
		return;
	}
	v = xcalloc(t->n_shown, sizeof(*v));
	for (k = 0; k < t->n_shown; k++)
		v[k] = (struct keyed){ col->key(col, t->rows[t->shown[k]]), t->shown[k] };
	radix_sort(v, t->n_shown, t->desc);
	for (k = 0; k < t->n_shown; k++)
		t->shown[k] = v[k].i;
	free(v);
}

static bool sorting(const struct table *t)
{
	return t->sort >= 0 && (size_t)t->sort < t->n_cols && t->cols[t->sort].cmp;
}

/*
 * keep(): once every row has been shown under a sort, their order is kept
 * until the sort changes; then each update is one pass over it.
 */
static void update_kept(struct table *t)
{
	int sort = sorting(t) ? t->sort : -1;

	if (t->order_ok && t->order_sort == sort && (sort < 0 || t->order_desc == t->desc)) {
		apply_filter(t, t->order);
		return;
	}
	apply_filter(t, NULL);
	if (sort < 0)
		return;
	sort_shown(t);
	if (t->n_shown < t->n_rows)
		return;
	t->order = xreallocarray(t->order, t->n_rows ? t->n_rows : 1, sizeof(*t->order));
	memcpy(t->order, t->shown, t->n_rows * sizeof(*t->order));
	t->order_sort = sort;
	t->order_desc = t->desc;
	t->order_ok = true;
}

void table_update(struct table *t)
{
	t->natural_max = 0;
	t->fit_ok = false;
	if (t->keep) {
		update_kept(t);
	} else {
		apply_filter(t, NULL);
		if (sorting(t))
			sort_shown(t);
	}
	if (t->updated)
		t->updated(t->ctx, t);
}

const void *table_row(const struct table *t, size_t pos)
{
	return pos < t->n_shown ? t->rows[t->shown[pos]] : NULL;
}

static int title_width(const struct table_column *c)
{
	return text_width(c->title ? c->title : c->name, 0);
}

/* The width of the widest cell of a column among its first rows shown (at most max). */
static int natural_width(struct table *t, const struct table_column *c, int max, size_t rows)
{
	struct strbuf sb = STRBUF_INIT;
	int w = title_width(c) > c->min ? title_width(c) : c->min;

	for (size_t pos = 0; pos < t->n_shown && pos < rows; pos++) {
		struct draw d;
		int cw;

		strbuf_reset(&sb);
		draw_init_text(&d, &sb, max, 0);
		c->cell(t->ctx, c, table_row(t, pos), pos, &d, max);
		strbuf_rtrim(&sb);
		cw = text_width(sb.buf, 0);
		w = cw > w ? cw : w;
	}
	strbuf_release(&sb);
	return w;
}

/* The width of a column sized by content (cached until the next change). */
static int fit_width(struct table *t, size_t i)
{
	const struct table_column *c = &t->cols[i];
	int w;

	if (!t->fit_ok) {
		for (size_t k = 0; k < t->n_cols; k++)
			if (!t->cols[k].hidden && !t->cols[k].width && t->cols[k].max > 0)
				t->fit[k] = natural_width(t, &t->cols[k], t->cols[k].max,
							  TABLE_FIT_ROWS);
		t->fit_ok = true;
	}
	w = t->fit[i] < c->max ? t->fit[i] : c->max;
	return w > title_width(c) ? w : title_width(c);
}

/*
 * The narrowest a column sized by content is made to leave the others
 * their min: its min, its title, and up to TABLE_FIT_KEEP of its content.
 */
static int floor_width(const struct table *t, size_t i)
{
	const struct table_column *c = &t->cols[i];
	int w = c->min > title_width(c) ? c->min : title_width(c);
	int keep = t->fit[i] < TABLE_FIT_KEEP ? t->fit[i] : TABLE_FIT_KEEP;

	return w > keep ? w : keep;
}

void table_layout(struct table *t, int width)
{
	int fixed = 0, n_flex = 0, flex_min = 0, excess;

	for (size_t i = 0; i < t->n_cols; i++) {
		const struct table_column *c = &t->cols[i];

		t->widths[i] = 0;
		if (c->hidden)
			continue;
		fixed++; /* the margin before each column */
		if (c->width) {
			fixed += c->width > title_width(c) ? c->width : title_width(c);
		} else if (c->max > 0 && width > 0) {
			t->widths[i] = fit_width(t, i);
			fixed += t->widths[i];
		} else {
			n_flex++;
			flex_min += c->min;
		}
	}
	/*
	 * Columns sized by content give back what the others need to reach
	 * their min, the widest first, down to their own floor; what is still
	 * missing runs off the right edge (scrolling right shows it).
	 */
	for (excess = fixed + flex_min - width; width > 0 && excess > 0; excess--) {
		int widest = -1;

		for (size_t i = 0; i < t->n_cols; i++) {
			const struct table_column *c = &t->cols[i];

			if (!c->hidden && !c->width && c->max > 0 && t->widths[i] > floor_width(t, i) &&
			    (widest < 0 || t->widths[i] > t->widths[widest]))
				widest = (int)i;
		}
		if (widest < 0)
			break;
		t->widths[widest]--;
		fixed--;
	}
	for (size_t i = 0; i < t->n_cols; i++) {
		const struct table_column *c = &t->cols[i];
		int w = c->width > title_width(c) ? c->width : title_width(c);

		if (c->hidden)
			w = 0;
		else if (!c->width && c->max > 0 && width > 0)
			w = t->widths[i];
		else if (!c->width) {
			w = n_flex ? (width - fixed) / n_flex : 0;
			if (w < c->min)
				w = c->min;
		}
		t->widths[i] = w;
	}
}

void table_layout_natural(struct table *t, int max)
{
	table_layout(t, 0);
	for (size_t i = 0; i < t->n_cols; i++) {
		if (t->cols[i].hidden || t->cols[i].width)
			continue;
		if (t->natural_max != max)
			t->natural[i] = natural_width(t, &t->cols[i], max, SIZE_MAX);
		t->widths[i] = t->natural[i];
	}
	t->natural_max = max;
}

void table_draw_header(struct table *t, struct draw *d)
{
	for (size_t i = 0; i < t->n_cols; i++) {
		const struct table_column *c = &t->cols[i];
		const char *title = c->title ? c->title : c->name;
		int w = text_width(title, d->flags);

		if (c->hidden)
			continue;
		/* The sort glyph sits in the margin, next to the title. */
		if ((int)i == t->sort) {
			if (c->align == ALIGN_RIGHT && w < t->widths[i])
				draw_space(d, STYLE_HEADER, t->widths[i] - w);
			draw_glyph(d, STYLE_HEADER, t->desc ? GLYPH_SORT_DESC : GLYPH_SORT_ASC);
			if (c->align == ALIGN_RIGHT && w < t->widths[i]) {
				draw_field(d, STYLE_HEADER, title, w, ALIGN_LEFT);
				continue;
			}
		} else {
			draw_space(d, STYLE_HEADER, 1);
		}
		draw_field(d, STYLE_HEADER, title, t->widths[i],
			   c->align == ALIGN_RIGHT ? ALIGN_RIGHT : ALIGN_LEFT);
	}
	draw_fill(d, STYLE_HEADER);
}

void table_draw_row(struct table *t, size_t pos, struct draw *d)
{
	const void *row = table_row(t, pos);

	if (!row)
		return;
	for (size_t i = 0; i < t->n_cols; i++) {
		int before;

		if (t->cols[i].hidden)
			continue;
		draw_space(d, STYLE_NORMAL, 1);
		before = d->vcol;
		t->cols[i].cell(t->ctx, &t->cols[i], row, pos, d, t->widths[i]);
		/* Keep columns aligned even if a cell drew too little. */
		if (d->vcol - before < t->widths[i])
			draw_space(d, STYLE_NORMAL, t->widths[i] - (d->vcol - before));
	}
}

void table_set_row_array(struct table *t, const void *array, size_t n, size_t size)
{
	const void **ptrs = xcalloc(n ? n : 1, sizeof(*ptrs));

	for (size_t i = 0; i < n; i++)
		ptrs[i] = (const char *)array + i * size;
	table_set_rows(t, ptrs, n);
	free(ptrs);
}

void table_draw_percent(struct draw *d, enum style st, double share, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%.1f", share * 100);
	draw_field(d, st, buf, width, ALIGN_RIGHT);
}

/* ---- sample columns ----------------------------------------------------------- */

double table_samples_share(const struct table_samples *ts, const void *row)
{
	uint64_t total = ts->event >= 0 ? ts->totals[ts->event] : 0;

	return total ? (double)ts->samples(row, ts->event) / (double)total : 0;
}

static void cell_samples(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	const struct table_samples *ts = col->data;
	uint64_t n = ts->samples(row, col->arg);
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	draw_field(d, col->arg == ts->event ? draw_share_style(table_samples_share(ts, row), n)
		   : (n ? STYLE_NORMAL : STYLE_DIM), buf, width, ALIGN_RIGHT);
}

static void cell_percent(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	const struct table_samples *ts = col->data;
	double s = table_samples_share(ts, row);

	table_draw_percent(d, draw_share_style(s, ts->samples(row, ts->event)), s, width);
}

static void cell_cum(void *ctx, const struct table_column *col, const void *row, size_t pos,
		     struct draw *d, int width)
{
	const struct table_samples *ts = col->data;

	table_draw_percent(d, STYLE_NORMAL, pos < ts->n_cum ? ts->cum[pos] : 0, width);
}

static int cmp_samples(const struct table_column *c, const void *a, const void *b)
{
	const struct table_samples *ts = c->data;

	return table_cmp_u64(ts->samples(a, c->arg), ts->samples(b, c->arg));
}

static uint64_t key_samples(const struct table_column *c, const void *row)
{
	const struct table_samples *ts = c->data;

	return ts->samples(row, c->arg);
}

static void add_samples(struct table *t, struct table_samples *ts, int ev, int width)
{
	table_add_column(t, &(struct table_column){ .name = event_name((enum dcpi_event)ev),
		.width = width, .align = ALIGN_RIGHT, .numeric = true, .arg = ev, .data = ts,
		.cmp = cmp_samples, .key = key_samples, .cell = cell_samples });
}

void table_samples_set_event(struct table *t, struct table_samples *ts, int ev)
{
	if (ts->event >= 0 && ts->event != ev &&
	    !strcmp(t->sort_name, event_name((enum dcpi_event)ts->event)))
		t->sort_name[0] = '\0';
	ts->event = ev;
}

void table_add_sample_columns(struct table *t, struct table_samples *ts,
			      const enum dcpi_event *events, size_t n, const int *widths)
{
	if (ts->event >= 0) {
		add_samples(t, ts, ts->event, widths[ts->event]);
		table_add_column(t, &(struct table_column){ .name = "percent", .title = "%",
			.width = 5, .align = ALIGN_RIGHT, .numeric = true, .arg = ts->event,
			.data = ts, .cmp = cmp_samples, .key = key_samples, .cell = cell_percent });
		table_add_column(t, &(struct table_column){ .name = "cum", .title = "cum%",
			.width = 5, .align = ALIGN_RIGHT, .data = ts, .cell = cell_cum });
	}
	for (size_t k = 0; k < n; k++)
		if ((int)events[k] != ts->event)
			add_samples(t, ts, events[k], widths[events[k]]);
}

void table_samples_default_sort(struct table *t, const struct table_samples *ts, const char *other)
{
	if (t->sort < 0)
		table_sort_by(t, ts->event >= 0 ? 0 : table_column_index(t, other), ts->event >= 0);
}

void table_samples_update(struct table *t, struct table_samples *ts)
{
	double sum = 0;

	free(ts->cum);
	ts->cum = xcalloc(t->n_shown ? t->n_shown : 1, sizeof(*ts->cum));
	ts->n_cum = t->n_shown;
	for (size_t i = 0; i < t->n_shown; i++) {
		sum += table_samples_share(ts, table_row(t, i));
		ts->cum[i] = sum;
	}
}

void table_samples_release(struct table_samples *ts)
{
	free(ts->cum);
	ts->cum = NULL;
	ts->n_cum = 0;
}
