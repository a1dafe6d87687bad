/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/table.h"

#include "core/radix.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The orders kept: the last sorts (a column and back, S and S again cost a pass). */
#define TABLE_ORDERS 2

/* The order of every row under a sort: by a column (what it compares) and a direction. */
struct table_order {
	uint32_t *v;               /* NULL: none kept */
	uint64_t *ties;            /* a bit per place: its row ties with the row before */
	uint64_t (*key)(const struct table_column *col, const void *row);
	table_cmp_fn cmp;
	const void *data;
	int arg;
	bool desc, live;
	unsigned generation;       /* a live column's: the cells it was made of */
	unsigned long used;        /* when it was last used (the oldest goes first) */
};

/* Where a word was found: a bit a row, for the cells that are not live. */
struct table_found {
	char *word;
	bool icase;
	unsigned generation;
	uint64_t *bits;
};

static unsigned long order_clock;

void table_init(struct table *t, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->sort = -1;
	t->ctx = ctx;
}

static void forget_orders(struct table *t, bool live_only)
{
	for (size_t k = 0; t->orders && k < TABLE_ORDERS; k++) {
		if (live_only && !t->orders[k].live)
			continue;
		free(t->orders[k].v);
		free(t->orders[k].ties);
		t->orders[k].v = NULL;
		t->orders[k].ties = NULL;
	}
}

static void forget_found(struct table *t)
{
	if (!t->found)
		return;
	free(t->found->word);
	free(t->found->bits);
	free(t->found);
	t->found = NULL;
}

void table_release(struct table *t)
{
	forget_orders(t, false);
	forget_found(t);
	free(t->orders);
	free(t->cols);
	free(t->ptrs);
	free(t->shown);
	free(t->filter);
	free(t->widths);
	free(t->natural);
	free(t->fit);
	table_init(t, NULL);
}

void table_clear_columns(struct table *t)
{
	t->n_cols = 0;
	t->sort = -1; /* sort_name stays: a column of that name sorts again */
	t->generation++;
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
	t->generation++;
}

int table_column_index(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

/* New rows: nothing known of the old ones holds. */
static void new_rows(struct table *t, size_t n)
{
	free(t->shown);
	t->shown = xcalloc(n ? n : 1, sizeof(*t->shown));
	t->n_rows = n;
	t->n_shown = 0;
	forget_orders(t, false);
	forget_found(t);
	t->generation++;
}

void table_set_rows(struct table *t, const void *const *rows, size_t n)
{
	free(t->ptrs);
	t->ptrs = n ? xmemdup(rows, n * sizeof(*rows)) : xcalloc(1, sizeof(*t->ptrs));
	t->base = NULL;
	t->stride = 0;
	new_rows(t, n);
}

void table_set_row_array(struct table *t, const void *array, size_t n, size_t size)
{
	if (!t->ptrs && t->base == array && t->stride == size && t->n_rows == n && t->shown)
		return;  /* the same rows */
	free(t->ptrs);
	t->ptrs = NULL;
	t->base = array;
	t->stride = size;
	new_rows(t, n);
}

void table_touch(struct table *t)
{
	forget_orders(t, true);
	t->generation++;
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
		t->filter_text(t->ctx, table_row_at(t, i), sb);
		return;
	}
	draw_init_text(&d, sb, DRAW_UNBOUNDED, 0);
	for (size_t c = 0; c < t->n_cols; c++) {
		if (t->cols[c].hidden)
			continue;
		t->cols[c].cell(t->ctx, &t->cols[c], table_row_at(t, i), i, &d, 64);
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
static void apply_filter(struct table *t, const uint32_t *order)
{
	struct strbuf sb = STRBUF_INIT;
	bool icase = t->filter && !has_upper(t->filter);

	if (!t->keep && !t->filter) {
		if (order) {
			memcpy(t->shown, order, t->n_rows * sizeof(*t->shown));
		} else {
			for (size_t k = 0; k < t->n_rows; k++)
				t->shown[k] = (uint32_t)k;
		}
		t->n_shown = t->n_rows;
		return;
	}
	t->n_shown = 0;
	for (size_t k = 0; k < t->n_rows; k++) {
		size_t i = order ? order[k] : k;

		if (t->keep && !t->keep(t->ctx, table_row_at(t, i)))
			continue;
		if (t->filter) {
			row_text(t, i, &sb);
			if (!(icase ? strcasestr(sb.buf, t->filter) : strstr(sb.buf, t->filter)))
				continue;
		}
		t->shown[t->n_shown++] = (uint32_t)i;
	}
	strbuf_release(&sb);
}

/* ---- orders ------------------------------------------------------------------------ */

static bool same_sort(const struct table_order *o, const struct table_column *col)
{
	if (col->key)
		return o->key == col->key && o->data == col->data && o->arg == col->arg;
	return !o->key && o->cmp == col->cmp && o->data == col->data && o->arg == col->arg;
}

/* The kept order of col in direction desc, or NULL. */
static struct table_order *kept_order(struct table *t, const struct table_column *col, bool desc)
{
	for (size_t k = 0; t->orders && k < TABLE_ORDERS; k++) {
		struct table_order *o = &t->orders[k];

		if (o->v && o->desc == desc && same_sort(o, col) &&
		    (!o->live || o->generation == t->generation))
			return o;
	}
	return NULL;
}

/* Keeps v as the order of col, desc, ties its ties (the oldest kept order makes room). */
static void keep_order(struct table *t, const struct table_column *col, bool desc, uint32_t *v,
		       uint64_t *ties)
{
	struct table_order *o;

	if (!t->orders)
		t->orders = xcalloc(TABLE_ORDERS, sizeof(*t->orders));
	o = &t->orders[0];
	for (size_t k = 1; k < TABLE_ORDERS; k++)
		if (o->v && (!t->orders[k].v || t->orders[k].used < o->used))
			o = &t->orders[k];
	free(o->v);
	free(o->ties);
	*o = (struct table_order){ v, ties, col->key, col->cmp, col->data, col->arg, desc, col->live,
				   t->generation, ++order_clock };
}

static bool tied(const uint64_t *ties, size_t k)
{
	return ties[k / 64] >> (k % 64) & 1;
}

/*
 * The order the other way round from another kept one: reversed, then
 * each run of ties reversed back (ties keep the given order either way);
 * the runs are known from the sort, no row is compared again.
 */
static uint32_t *reversed(const uint32_t *from, const uint64_t *from_ties, size_t n,
			  uint64_t **ties)
{
	uint32_t *v = xreallocarray(NULL, n ? n : 1, sizeof(*v));

	*ties = xcalloc(n / 64 + 1, sizeof(**ties));
	for (size_t k = 0; k < n; k++)
		v[k] = from[n - 1 - k];
	/* place k of v ties with the one before if place n - k of from did */
	for (size_t k = 1; k < n; k++)
		if (tied(from_ties, n - k))
			(*ties)[k / 64] |= UINT64_C(1) << (k % 64);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && tied(*ties, j))
			j++;
		for (size_t a = i, b = j - 1; a < b; a++, b--) {
			uint32_t x = v[a];

			v[a] = v[b];
			v[b] = x;
		}
		i = j;
	}
	return v;
}

static int compare_rows(const void *pa, const void *pb, void *arg)
{
	const struct table *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct table_column *col = &t->cols[t->sort];
	int r = col->cmp(col, table_row_at(t, a), table_row_at(t, b));

	if (t->desc)
		r = -r;
	return r ? r : (a > b) - (a < b);
}

/*
 * sort_indices() of every row (v[k] == k) by keys that fit in 32 bits
 * (all[k]: row k's, overwritten; tmp: room for n): each row a word of its
 * key above its index (descending: the key's complement), made in place,
 * half what (key, index) pairs take to sort.  0, or -1 if n does not fit.
 */
static int sort_small_keys(const struct table *t, uint32_t *v, size_t n, uint64_t *all,
			   uint64_t *tmp, uint64_t *ties)
{
	uint64_t flip = t->desc ? UINT32_MAX : 0;
	size_t k, sorted = 1;

	if (n > UINT32_MAX)
		return -1;
	for (k = 0; k < n; k++) {
		all[k] = (all[k] ^ flip) << 32 | k;
		sorted += k && all[k] >> 32 >= all[k - 1] >> 32;
	}
	if (sorted < n)
		radix_sort_high(all, n, tmp);
	for (k = 0; k < n; k++) {
		v[k] = (uint32_t)all[k];
		if (ties && k && all[k] >> 32 == all[k - 1] >> 32)
			ties[k / 64] |= UINT64_C(1) << (k % 64);
	}
	return 0;
}

/*
 * Sorts the rows v[0..n) (indices, ascending) by the sort column; a column
 * with a key sorts its keys, read once a row (all at once when every row
 * is sorted and the column can).  Rows given in the order asked for (a
 * report sorted by the same column) cost one pass.  ties (if not NULL):
 * a bit per place set when its row ties with the one before.
 */
static void sort_indices(struct table *t, uint32_t *v, size_t n, uint64_t *ties)
{
	const struct table_column *col = &t->cols[t->sort];
	struct radix_item *items;
	size_t k = 1;

	if (n < 2)
		return;
	if (!col->key) {
		while (k < n && compare_rows(&v[k - 1], &v[k], t) < 0)
			k++;
		if (k < n)
			qsort_r(v, n, sizeof(*v), compare_rows, t);
		for (k = 1; ties && k < n; k++)
			if (!col->cmp(col, table_row_at(t, v[k - 1]), table_row_at(t, v[k])))
				ties[k / 64] |= UINT64_C(1) << (k % 64);
		return;
	}
	if (col->keys && n == t->n_rows) {
		uint64_t *all = xreallocarray(NULL, n, sizeof(*all)), max = 0;
		uint64_t *tmp = xreallocarray(NULL, n, sizeof(*tmp));

		/* every row: v[k] == k */
		col->keys(col, t, all, tmp);
		for (k = 0; k < n; k++)
			max |= all[k];
		if (max <= UINT32_MAX && !sort_small_keys(t, v, n, all, tmp, ties)) {
			free(tmp);
			free(all);
			return;
		}
		free(tmp);
		items = xreallocarray(NULL, n, sizeof(*items));
		for (k = 0; k < n; k++)
			items[k] = (struct radix_item){ all[k], v[k] };
		free(all);
	} else {
		items = xreallocarray(NULL, n, sizeof(*items));
		for (k = 0; k < n; k++)
			items[k] = (struct radix_item){ col->key(col, table_row_at(t, v[k])), v[k] };
	}
	for (k = 1; k < n; k++)
		if (t->desc ? items[k - 1].key < items[k].key : items[k - 1].key > items[k].key)
			break;
	if (k < n)
		radix_sort(items, n, t->desc);
	for (k = 0; k < n; k++) {
		v[k] = items[k].i;
		if (ties && k && items[k].key == items[k - 1].key)
			ties[k / 64] |= UINT64_C(1) << (k % 64);
	}
	free(items);
}

/* The order of every row under the sort: kept, made from the other direction's, or sorted. */
static const uint32_t *full_order(struct table *t)
{
	const struct table_column *col = &t->cols[t->sort];
	struct table_order *o = kept_order(t, col, t->desc);
	uint64_t *ties;
	uint32_t *v;

	if (o) {
		o->used = ++order_clock;
		return o->v;
	}
	if ((o = kept_order(t, col, !t->desc))) {
		o->used = ++order_clock;
		v = reversed(o->v, o->ties, t->n_rows, &ties);
	} else {
		v = xreallocarray(NULL, t->n_rows ? t->n_rows : 1, sizeof(*v));
		ties = xcalloc(t->n_rows / 64 + 1, sizeof(*ties));
		for (size_t k = 0; k < t->n_rows; k++)
			v[k] = (uint32_t)k;
		sort_indices(t, v, t->n_rows, ties);
	}
	keep_order(t, col, t->desc, v, ties);
	return v;
}

static bool sorting(const struct table *t)
{
	return t->sort >= 0 && (size_t)t->sort < t->n_cols && t->cols[t->sort].cmp;
}

void table_update(struct table *t)
{
	t->natural_max = 0;
	t->fit_ok = false;
	if (!sorting(t)) {
		apply_filter(t, NULL);
	} else if (!kept_order(t, &t->cols[t->sort], t->desc) &&
		   !kept_order(t, &t->cols[t->sort], !t->desc) && (t->keep || t->filter)) {
		/* a few rows of many: those are sorted (a whole order once most are shown) */
		apply_filter(t, NULL);
		if (t->n_shown > t->n_rows / 8)
			apply_filter(t, full_order(t));
		else
			sort_indices(t, t->shown, t->n_shown, NULL);
	} else {
		apply_filter(t, full_order(t));
	}
	if (t->updated)
		t->updated(t->ctx, t);
}

long table_position(const struct table *t, size_t i)
{
	for (size_t k = 0; k < t->n_shown; k++)
		if (t->shown[k] == i)
			return (long)k;
	return -1;
}

/* ---- search ------------------------------------------------------------------------ */

/* True if text holds word (icase: compared folded to lower case, word already is). */
static bool holds(const char *text, const char *word, size_t len, bool icase)
{
	if (!icase)
		return strstr(text, word) != NULL;
	for (; *text; text++) {
		size_t k = 0;

		while (k < len && text[k] && tolower((unsigned char)text[k]) == (unsigned char)word[k])
			k++;
		if (k == len)
			return true;
	}
	return false;
}

/* True if a cell of col could show word: every character of it is one col can show. */
static bool could_show(const struct table_column *col, const char *word, bool icase)
{
	if (col->hidden)
		return false;
	if (!col->chars)
		return true;
	for (const char *c = word; *c; c++)
		if (!strchr(col->chars, *c) &&
		    !(icase && strchr(col->chars, toupper((unsigned char)*c))))
			return false;
	return true;
}

/* True if col's cell of row (at display position pos) shows word. */
static bool cell_holds(struct table *t, const struct table_column *col, const void *row,
		       size_t pos, const char *word, size_t len, bool icase, struct strbuf *sb)
{
	struct draw d;

	if (col->text)
		return holds(col->text(t->ctx, col, row), word, len, icase);
	strbuf_reset(sb);
	draw_init_text(&d, sb, DRAW_UNBOUNDED, 0);
	col->cell(t->ctx, col, row, pos, &d, TABLE_TEXT_MAX);
	return holds(sb->buf, word, len, icase);
}

/* Marks the rows whose cells (not live ones) show the word. */
static void find_rows(struct table *t, struct table_found *f)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = strlen(f->word);
	bool *cols = xcalloc(t->n_cols + 1, sizeof(*cols));
	bool any = false;

	for (size_t c = 0; c < t->n_cols; c++)
		any |= cols[c] = !t->cols[c].live && could_show(&t->cols[c], f->word, f->icase);
	f->bits = xcalloc(t->n_rows / 64 + 1, sizeof(*f->bits));
	for (size_t i = 0; any && i < t->n_rows; i++) {
		const void *row = table_row_at(t, i);

		for (size_t c = 0; c < t->n_cols; c++) {
			if (cols[c] && cell_holds(t, &t->cols[c], row, i, f->word, len, f->icase, &sb)) {
				f->bits[i / 64] |= UINT64_C(1) << (i % 64);
				break;
			}
		}
	}
	free(cols);
	strbuf_release(&sb);
}

long table_find(struct table *t, const char *word, bool icase, size_t from, int dir)
{
	struct table_found *f = t->found;
	struct strbuf sb = STRBUF_INIT;
	size_t n = t->n_shown, len = strlen(word);
	bool *live = xcalloc(t->n_cols + 1, sizeof(*live)), any_live = false;
	long found = -1;

	if (!f || f->generation != t->generation || f->icase != icase || strcmp(f->word, word)) {
		forget_found(t);
		f = t->found = XNEW(struct table_found);
		f->word = xstrdup(word);
		f->icase = icase;
		f->generation = t->generation;
		find_rows(t, f);
	}
	for (size_t c = 0; c < t->n_cols; c++)
		any_live |= live[c] = t->cols[c].live && could_show(&t->cols[c], word, icase);
	for (size_t k = 1; k <= n && found < 0; k++) {
		size_t pos = dir > 0 ? (from + k) % n : (from + n - k % n) % n;
		uint32_t i = t->shown[pos];

		if (f->bits[i / 64] >> (i % 64) & 1) {
			found = (long)pos;
			break;
		}
		for (size_t c = 0; any_live && c < t->n_cols; c++) {
			if (live[c] && cell_holds(t, &t->cols[c], table_row_at(t, i), pos, word, len,
						  icase, &sb)) {
				found = (long)pos;
				break;
			}
		}
	}
	free(live);
	strbuf_release(&sb);
	return found;
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

void table_draw_percent(struct draw *d, enum style st, double share, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%.1f", share * 100);
	draw_field(d, st, buf, width, ALIGN_RIGHT);
}

/* ---- sample columns ----------------------------------------------------------- */

/* cum% is summed as far as it is drawn, and kept every this many positions. */
#define CUM_STEP 1024

double table_samples_share(const struct table_samples *ts, const void *row)
{
	uint64_t total = ts->event >= 0 ? ts->totals[ts->event] : 0;

	return total ? (double)ts->samples(ts, row, ts->event) / (double)total : 0;
}

/*
 * The running share at display position pos: the shares of the rows up to
 * it added one after another from the first, as a sum of every row's
 * would be (the same double), from the nearest kept one before it.
 */
static double cum_at(struct table_samples *ts, size_t pos)
{
	const struct table *t = ts->t;
	size_t from;
	double sum;

	if (!t || pos >= t->n_shown)
		return 0;
	/* ts->cum[k]: the sum of the shares of positions [0, k * CUM_STEP) */
	while (ts->n_cum <= pos / CUM_STEP) {
		size_t k = ts->n_cum;

		ts->cum = xreallocarray(ts->cum, k + 1, sizeof(*ts->cum));
		sum = k ? ts->cum[k - 1] : 0;
		for (size_t p = k ? (k - 1) * CUM_STEP : 0; k && p < k * CUM_STEP; p++)
			sum += table_samples_share(ts, table_row(t, p));
		ts->cum[k] = sum;
		ts->n_cum = k + 1;
	}
	if (ts->last_pos != SIZE_MAX && ts->last_pos <= pos && pos / CUM_STEP == ts->last_pos / CUM_STEP) {
		from = ts->last_pos + 1;
		sum = ts->last_sum;
	} else {
		from = pos / CUM_STEP * CUM_STEP;
		sum = ts->cum[pos / CUM_STEP];
	}
	for (size_t p = from; p <= pos; p++)
		sum += table_samples_share(ts, table_row(t, p));
	ts->last_pos = pos;
	ts->last_sum = sum;
	return sum;
}

static void cell_samples(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	const struct table_samples *ts = col->data;
	uint64_t n = ts->samples(ts, row, col->arg);
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

	table_draw_percent(d, draw_share_style(s, ts->samples(ts, row, ts->event)), s, width);
}

static void cell_cum(void *ctx, const struct table_column *col, const void *row, size_t pos,
		     struct draw *d, int width)
{
	table_draw_percent(d, STYLE_NORMAL, cum_at((struct table_samples *)col->data, pos), width);
}

static int cmp_samples(const struct table_column *c, const void *a, const void *b)
{
	const struct table_samples *ts = c->data;

	return table_cmp_u64(ts->samples(ts, a, c->arg), ts->samples(ts, b, c->arg));
}

static uint64_t key_samples(const struct table_column *c, const void *row)
{
	const struct table_samples *ts = c->data;

	return ts->samples(ts, row, c->arg);
}

static void add_samples(struct table *t, struct table_samples *ts, int ev, int width)
{
	table_add_column(t, &(struct table_column){ .name = event_name((enum dcpi_event)ev),
		.width = width, .align = ALIGN_RIGHT, .numeric = true, .arg = ev, .data = ts,
		.cmp = cmp_samples, .key = key_samples, .cell = cell_samples,
		.chars = TABLE_CHARS_NUMBER });
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
			.data = ts, .cmp = cmp_samples, .key = key_samples, .cell = cell_percent,
			.chars = TABLE_CHARS_NUMBER });
		table_add_column(t, &(struct table_column){ .name = "cum", .title = "cum%",
			.width = 5, .align = ALIGN_RIGHT, .data = ts, .cell = cell_cum,
			.chars = TABLE_CHARS_NUMBER, .live = true });
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
	ts->t = t;
	ts->n_cum = 0;
	ts->last_pos = SIZE_MAX;
}

void table_samples_release(struct table_samples *ts)
{
	free(ts->cum);
	ts->cum = NULL;
	ts->n_cum = 0;
	ts->t = NULL;
}
