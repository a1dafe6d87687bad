/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/table.h - a sortable, filterable table of rows: the model behind the
 * epochs, images, procedures and diff views.
 *
 * A table does not own its rows: it reads the view's array of them (or
 * pointers to them) and keeps an order (`shown`): the indices of the rows
 * that pass the filter, sorted.  Columns say how to compare two rows and
 * how to draw one cell; the generic view code (tui/view.c) turns :sort,
 * :filter, <, >, S, / and column completion into calls on the table, so a
 * view that uses one gets all of that for free.
 *
 * Sorting is stable (ties keep the order rows were given in), so what is
 * shown is deterministic.  A filter is a substring, case-insensitive unless
 * it contains an upper-case letter (smartcase), matched against the text
 * the view gives for a row.
 *
 * A million rows: a column with a key sorts them by a radix sort of the
 * keys (core/radix.h), and the order of every row under the last sorts is
 * kept (a 4-byte index a row each), so that going back to a sort, or the
 * same column the other way, costs a pass, not a sort; a column whose
 * key is another's (a share and its samples) sorts as that one.  A word
 * searched for (table_find()) is looked for in the cells, once per row,
 * and where it was found is kept until the rows or cells change.
 */
#ifndef DCPI_TUI_TABLE_H
#define DCPI_TUI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "present/draw.h"

struct strbuf;
struct table;
struct table_column;

/* Compares two rows for this column, ascending; 0 when equal. */
typedef int (*table_cmp_fn)(const struct table_column *col, const void *a, const void *b);

/*
 * Draws the cell of row (shown at display position pos) in exactly `width`
 * columns.  ctx is the table's ctx (the view's private data).
 */
typedef void (*table_cell_fn)(void *ctx, const struct table_column *col, const void *row,
			      size_t pos, struct draw *d, int width);

struct table_column {
	const char *name;      /* :sort NAME, completion; unique within the table */
	const char *title;     /* header text; NULL: name */
	int width;             /* columns; 0: flexible, takes what is left */
	int min;               /* flexible columns: at least this wide */
	/*
	 * Flexible columns sized by content when > 0: as wide as their widest
	 * cell among the first TABLE_FIT_ROWS shown (at least min and the
	 * title), at most max; the other flexible columns share the rest.
	 * Short of room, the widest gives back first, down to TABLE_FIT_KEEP.
	 */
	int max;
	enum draw_align align;
	bool numeric;          /* sorts descending first */
	int arg;               /* the view's own use (an event, a counter) */
	bool hidden;           /* not drawn: only a sort key (":sort name") */
	const void *data;      /* the column's own data (the sample columns' struct table_samples) */
	table_cmp_fn cmp;      /* NULL: not sortable */
	/* Optional: a number that orders rows as cmp does (a million rows sort on it, not on cmp). */
	uint64_t (*key)(const struct table_column *col, const void *row);
	/*
	 * Optional, with key: every row's key at once, out[i] for row i (for a
	 * view whose rows' figures lie elsewhere in another order: read there
	 * in their order, not a row at a time).  scratch: room for as many
	 * values, the callback's to use (the sort uses it next: no memory of
	 * its own to take, a million rows' worth, for each sort).
	 */
	void (*keys)(const struct table_column *col, const struct table *t, uint64_t *out,
		     uint64_t *scratch);
	table_cell_fn cell;
	/* Optional: the cell's text as drawn, plain (searched without drawing the cell). */
	const char *(*text)(void *ctx, const struct table_column *col, const void *row);
	/* The characters its cells can show, NULL: any (a search skips it for a word of others). */
	const char *chars;
	/*
	 * The cell changes with no table_update() (a background job's figures)
	 * or with its place (cum%): a search reads it as it is drawn, and an
	 * order by it is not kept past table_touch().
	 */
	bool live;
};

/* The widest a cell is drawn for text (search, dumps): long paths stay whole. */
#define TABLE_TEXT_MAX 400

/* The characters of a column of numbers (counts, shares, ratios, "?" unknown, "-" none). */
#define TABLE_CHARS_NUMBER "0123456789.+-?"

struct table_order;
struct table_found;

struct table {
	struct table_column *cols; /* owned */
	size_t n_cols, alloc_cols;
	/* the rows: an array (table_set_row_array) or pointers (table_set_rows, owned copy) */
	const void **ptrs;
	const char *base;
	size_t stride;
	size_t n_rows;
	uint32_t *shown;           /* display order: indices of rows */
	size_t n_shown;
	int sort;                  /* column index, -1: the given order */
	bool desc;
	char sort_name[32];        /* the sort column's name, kept across columns changes */
	char *filter;              /* NULL: every row */
	void *ctx;                 /* passed to cell functions and hooks */
	/* Appends the text a filter is matched against (NULL: the cells' text). */
	void (*filter_text)(void *ctx, const void *row, struct strbuf *out);
	/* Called after every table_update() (e.g. to recompute cumulative sums). */
	void (*updated)(void *ctx, struct table *t);
	/* Rows it rejects are not shown (before the filter); NULL: every row. */
	bool (*keep)(void *ctx, const void *row);
	/* private */
	struct table_order *orders; /* the orders of every row under recent sorts */
	struct table_found *found;  /* where the last word searched for is */
	unsigned generation;        /* bumped when rows or cells change */
	int *widths;               /* from the last table_layout() */
	int *natural;              /* cached widest cells (flexible columns) */
	int natural_max;           /* the max they were measured with, 0: stale */
	int *fit;                  /* cached content widths (columns with a max) */
	bool fit_ok;               /* ... measured since the last change */
};

/* The rows that measure a column sized by content: the first shown. */
#define TABLE_FIT_ROWS 1000
/* Short of room, a column sized by content keeps this much of it. */
#define TABLE_FIT_KEEP 16

void table_init(struct table *t, void *ctx);
void table_release(struct table *t);

/* Removes every column (rows and order are kept). */
void table_clear_columns(struct table *t);
/* Appends a copy of col. */
void table_add_column(struct table *t, const struct table_column *col);
/* The index of the column called name, or -1. */
int table_column_index(const struct table *t, const char *name);

/* Replaces the rows (the pointers are copied, not what they point to). */
void table_set_rows(struct table *t, const void *const *rows, size_t n);
/*
 * Replaces the rows with the n elements of an array (each size bytes).
 * The same array again keeps what was found of it (orders, searches):
 * call table_touch() if cells changed.
 */
void table_set_row_array(struct table *t, const void *array, size_t n, size_t size);
/* Says that cells changed (live columns': a background job's figures). */
void table_touch(struct table *t);

/* Row i (an index of shown[]). */
static inline const void *table_row_at(const struct table *t, size_t i)
{
	return t->ptrs ? t->ptrs[i] : t->base + i * t->stride;
}

/* Sorts by column col (-1: given order); desc: descending. */
void table_sort_by(struct table *t, int col, bool desc);
/* Sets the filter (NULL or "": none). */
void table_set_filter(struct table *t, const char *text);
/* Recomputes the shown rows from rows, filter and sort. */
void table_update(struct table *t);

/* The row shown at display position pos. */
static inline const void *table_row(const struct table *t, size_t pos)
{
	return pos < t->n_shown ? table_row_at(t, t->shown[pos]) : NULL;
}

/* The display position of row i (an index of the rows), or -1 if not shown. */
long table_position(const struct table *t, size_t i);

/*
 * The first display position after from (dir 1) or before it (dir -1),
 * wrapping around, whose row shows word (no space; icase: word is lower
 * case and cells are compared folded to lower case) in one of its cells,
 * from may be the position itself last; -1 if none.
 */
long table_find(struct table *t, const char *word, bool icase, size_t from, int dir);

/* Computes the width of every column for a line of `width` columns. */
void table_layout(struct table *t, int width);
/*
 * Lays out for text (dumps, search): flexible columns as wide as their
 * widest shown cell, at most max.  The measure is cached until the next
 * table_update() or column change: views whose cells change without one
 * must call table_update().
 */
void table_layout_natural(struct table *t, int max);
/* Draws the header line (titles, with a sort-order glyph). */
void table_draw_header(struct table *t, struct draw *d);
/* Draws the row at display position pos. */
void table_draw_row(struct table *t, size_t pos, struct draw *d);

/* Draws a share (0..1) as a percentage with one decimal. */
void table_draw_percent(struct draw *d, enum style st, double share, int width);

/*
 * The sample columns of a table whose rows have samples per event (the
 * images and procedures views): the current event's samples with their %
 * and cum% (hot, warm and cold rows stand out), then the other events'.
 * The view keeps a struct table_samples, sets what it needs, adds the
 * columns and calls table_samples_update() from its table's updated hook.
 */
struct table_samples {
	int event;                              /* the current event, -1: none */
	const uint64_t *totals;                 /* per event: the % base */
	uint64_t (*samples)(const struct table_samples *ts, const void *row, int ev);
	const void *data;                       /* the view's, for samples() */
	/* private: the running share, every CUM_STEP display positions, as far as drawn */
	const struct table *t;
	double *cum;
	size_t n_cum;
	size_t last_pos;                        /* the last position asked for ... */
	double last_sum;                        /* ... and its running share */
};

/*
 * Makes ev the current event; a sort by the old one's samples is dropped
 * (the columns change).  Call before adding the columns.
 */
void table_samples_set_event(struct table *t, struct table_samples *ts, int ev);
/*
 * Adds the sample columns of events (the current one first whatever its
 * place), each widths[event] wide.
 */
void table_add_sample_columns(struct table *t, struct table_samples *ts,
			      const enum dcpi_event *events, size_t n, const int *widths);
/* With no sort yet: by the current event's samples, else by the column called other. */
void table_samples_default_sort(struct table *t, const struct table_samples *ts, const char *other);
/* The share of row in the current event (0 without one). */
double table_samples_share(const struct table_samples *ts, const void *row);
/* Forgets cum% (from the table's updated hook): it is summed again as far as it is drawn. */
void table_samples_update(struct table *t, struct table_samples *ts);
void table_samples_release(struct table_samples *ts);

/* Three-way comparisons for comparators. */
static inline int table_cmp_u64(unsigned long long a, unsigned long long b)
{
	return (a > b) - (a < b);
}

static inline int table_cmp_double(double a, double b)
{
	return (a > b) - (a < b);
}

#endif
