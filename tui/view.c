/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/view.h"

#include "core/die.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/u64map.h"
#include "core/workpool.h"
#include "core/xalloc.h"
#include "tui/table.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void view_loc_copy(struct view_loc *dst, const struct view_loc *src)
{
	*dst = *src;
	dst->image = src->image ? xstrdup(src->image) : NULL;
	dst->procedure = src->procedure ? xstrdup(src->procedure) : NULL;
}

void view_loc_release(struct view_loc *loc)
{
	free(loc->image);
	free(loc->procedure);
	memset(loc, 0, sizeof(*loc));
}

/* True if word is a candidate already (procedure names come by the 100,000). */
static bool candidates_has(struct candidates *c, const char *word)
{
	uint64_t h = hash_bytes(HASH_FNV_INIT, word, strlen(word)), *slot;

	if (!c->seen) {
		c->seen = XNEW(struct u64map);
		u64map_init(c->seen);
	}
	slot = u64map_slot(c->seen, h);
	if (!*slot) {
		*slot = c->n + 1;
		return false;
	}
	if (!strcmp(c->v[*slot - 1], word))
		return true;
	for (size_t i = 0; i < c->n; i++) /* a hash collision: rare */
		if (!strcmp(c->v[i], word))
			return true;
	return false;
}

void candidates_add(struct candidates *c, const char *word)
{
	size_t plen = c->prefix ? strlen(c->prefix) : 0;

	if (plen && strncmp(word, c->prefix, plen))
		return;
	if (candidates_has(c, word))
		return;
	ALLOC_GROW(c->v, c->n + 1, c->alloc);
	c->v[c->n++] = xstrdup(word);
}

void candidates_release(struct candidates *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	if (c->seen) {
		u64map_release(c->seen);
		free(c->seen);
	}
	c->v = NULL;
	c->seen = NULL;
	c->n = c->alloc = 0;
}

static void texts_free(struct view *v);

/* ---- lifecycle ----------------------------------------------------------- */

struct view *view_new(struct tui *tui, struct sources *src, const struct view_ops *ops,
		      const struct view_loc *loc)
{
	struct view *v = XNEW(struct view);

	v->ops = ops;
	v->tui = tui;
	v->src = src;
	v->height = 1;
	v->width = 80;
	v->empty = "(nothing to show)";
	view_loc_copy(&v->loc, loc);
	if (ops->priv_size)
		v->priv = xcalloc(1, ops->priv_size);
	if (ops->open && ops->open(v)) {
		view_free(v);
		return NULL;
	}
	return v;
}

void view_free(struct view *v)
{
	if (!v)
		return;
	if (v->ops->close)
		v->ops->close(v);
	view_loc_release(&v->loc);
	texts_free(v);
	free(v->pending);
	free(v->priv);
	free(v);
}

void view_wait(struct view *v, const char *key)
{
	free(v->pending);
	v->pending = key ? xstrdup(key) : NULL;
}

/* ---- cursor ---------------------------------------------------------------- */

static void clamp(struct view *v)
{
	size_t h = v->height > 0 ? (size_t)v->height : 1;

	if (v->pos >= v->lines)
		v->pos = v->lines ? v->lines - 1 : 0;
	if (v->offset > v->pos)
		v->offset = v->pos;
	if (v->pos >= v->offset + h)
		v->offset = v->pos - h + 1;
	/* No empty space below the last line when the view could be full. */
	if (v->lines >= h && v->offset + h > v->lines)
		v->offset = v->lines - h;
	if (v->lines < h)
		v->offset = 0;
}

void view_set_lines(struct view *v, size_t lines)
{
	texts_free(v);
	v->lines = lines;
	clamp(v);
}

void view_move_to(struct view *v, size_t line)
{
	v->pos = line;
	clamp(v);
}

void view_resize(struct view *v, int height, int width)
{
	v->height = height > 0 ? height : 1;
	v->width = width > 0 ? width : 1;
	clamp(v);
}

static void move_by(struct view *v, long delta)
{
	long pos = (long)v->pos + delta;

	if (pos < 0)
		pos = 0;
	view_move_to(v, (size_t)pos);
}

/* Page moves scroll the window with the cursor (tig, less). */
static void page_by(struct view *v, long delta)
{
	long off = (long)v->offset + delta, h = v->height;
	long max_off = (long)v->lines > h ? (long)v->lines - h : 0;

	if (off < 0)
		off = 0;
	if (off > max_off)
		off = max_off;
	v->offset = (size_t)off;
	move_by(v, delta);
	if (v->pos < v->offset)
		v->pos = v->offset;
	clamp(v);
}

/* How far a view scrolls sideways (text layouts cap cells at 400 columns). */
#define MAX_HSCROLL 400

static enum view_result move_request(struct view *v, enum request req)
{
	long h = v->height > 0 ? v->height : 1;

	switch (req) {
	case REQ_MOVE_UP:
		move_by(v, -1);
		break;
	case REQ_MOVE_DOWN:
		move_by(v, 1);
		break;
	case REQ_MOVE_PAGE_UP:
		page_by(v, -h);
		break;
	case REQ_MOVE_PAGE_DOWN:
		page_by(v, h);
		break;
	case REQ_MOVE_HALF_UP:
		page_by(v, -(h + 1) / 2);
		break;
	case REQ_MOVE_HALF_DOWN:
		page_by(v, (h + 1) / 2);
		break;
	case REQ_MOVE_FIRST:
		view_move_to(v, 0);
		break;
	case REQ_MOVE_LAST:
		view_move_to(v, v->lines ? v->lines - 1 : 0);
		break;
	case REQ_SCROLL_LEFT:
		v->hscroll = v->hscroll > 8 ? v->hscroll - 8 : 0;
		break;
	case REQ_SCROLL_RIGHT:
		if (v->hscroll < MAX_HSCROLL)
			v->hscroll += 8;
		break;
	default:
		return VIEW_PASS;
	}
	return VIEW_DONE;
}

/* ---- tables ---------------------------------------------------------------- */

void view_table_update(struct view *v)
{
	struct table *t = v->table;
	long cur = v->pos < t->n_shown ? (long)t->shown[v->pos] : -1, pos;

	table_update(t);
	view_set_lines(v, t->n_shown); /* also forgets the texts of the lines */
	if (cur < 0)
		return;
	pos = table_position(t, (size_t)cur);
	view_move_to(v, pos < 0 ? 0 : (size_t)pos);
}

static void column_names(const struct table *t, struct strbuf *sb)
{
	for (size_t i = 0; i < t->n_cols; i++)
		if (t->cols[i].cmp)
			strbuf_addf(sb, "%s%s", sb->len ? ", " : "", t->cols[i].name);
}

static int sort_by_name(struct view *v, const char *name)
{
	struct table *t = v->table;
	int col = table_column_index(t, name);

	if (col < 0 || !t->cols[col].cmp) {
		struct strbuf sb = STRBUF_INIT;

		column_names(t, &sb);
		errorf("no column '%s' to sort by here (columns: %s)", name, sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	if (col == t->sort)
		table_sort_by(t, col, !t->desc);
	else
		table_sort_by(t, col, t->cols[col].numeric);
	return 0;
}

/* Sorts by the next (dir 1) or previous (dir -1) sortable column. */
static void sort_step(struct table *t, int dir)
{
	int n = (int)t->n_cols, col = t->sort < 0 ? (dir > 0 ? -1 : 0) : t->sort;

	for (int k = 0; k < n; k++) {
		col = ((col + dir) % n + n) % n;
		if (t->cols[col].cmp && !t->cols[col].hidden) {
			table_sort_by(t, col, t->cols[col].numeric);
			return;
		}
	}
}

static enum view_result table_request(struct view *v, enum request req, const char *arg)
{
	struct table *t = v->table;

	switch (req) {
	case REQ_SORT:
		if (sort_by_name(v, arg))
			return VIEW_DONE;
		break;
	case REQ_SORT_NEXT:
	case REQ_SORT_PREV:
		sort_step(t, req == REQ_SORT_NEXT ? 1 : -1);
		break;
	case REQ_SORT_REVERSE:
		if (t->sort >= 0)
			table_sort_by(t, t->sort, !t->desc);
		break;
	case REQ_FILTER:
		table_set_filter(t, arg);
		break;
	default:
		return VIEW_PASS;
	}
	view_table_update(v);
	return VIEW_DONE;
}

enum view_result view_request(struct view *v, enum request req, const char *arg)
{
	if (move_request(v, req) == VIEW_DONE)
		return VIEW_DONE;
	if (v->table && table_request(v, req, arg) == VIEW_DONE)
		return VIEW_DONE;
	switch (req) {
	case REQ_TOGGLE_PANE:
		if (!v->ops->draw_pane)
			errorf("the %s view has no details pane", v->ops->name);
		else
			v->pane = !v->pane;
		return VIEW_DONE;
	case REQ_GOTO:
		if (!v->ops->go_to)
			return VIEW_PASS;
		v->ops->go_to(v, arg);
		return VIEW_DONE;
	case REQ_SORT:
	case REQ_SORT_NEXT:
	case REQ_SORT_PREV:
	case REQ_SORT_REVERSE:
	case REQ_FILTER:
		errorf("the %s view cannot be sorted or filtered", v->ops->name);
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

/* ---- drawing --------------------------------------------------------------- */

void view_draw_line(struct view *v, size_t line, struct draw *d)
{
	if (v->table)
		table_draw_row(v->table, line, d);
	else if (v->ops->draw)
		v->ops->draw(v, line, d);
}

bool view_has_header(const struct view *v)
{
	return v->table || v->ops->draw_header;
}

void view_draw_header(struct view *v, struct draw *d)
{
	if (v->table)
		table_draw_header(v->table, d);
	else if (v->ops->draw_header)
		v->ops->draw_header(v, d);
}

/*
 * Text renderings (search, :save-view) lay tables out by their contents,
 * whatever the screen, so that a dump does not depend on the terminal and
 * long paths are searchable; the display lays them out again before drawing.
 */
static void text_layout(struct view *v)
{
	if (v->table)
		table_layout_natural(v->table, TABLE_TEXT_MAX);
}

static void line_text(struct view *v, size_t line, struct strbuf *sb, unsigned flags)
{
	struct draw d;

	draw_init_text(&d, sb, DRAW_UNBOUNDED, flags & DRAW_ASCII);
	view_draw_line(v, line, &d);
	strbuf_rtrim(sb);
}

void view_pane_line(struct draw *d, const char *label, int width, enum style st, const char *text)
{
	draw_printf(d, STYLE_DIM, " %-*s", width, label);
	draw_text(d, st, text);
}

int view_pattern_init(struct view_pattern *p, const char *pattern)
{
	int flags = REG_EXTENDED | REG_NOSUB, r;

	memset(p, 0, sizeof(*p));
	p->icase = true;
	for (const char *c = pattern; *c; c++)
		if (isupper((unsigned char)*c))
			p->icase = false;
	if (p->icase)
		flags |= REG_ICASE;
	if ((r = regcomp(&p->re, pattern, flags))) {
		char msg[128];

		regerror(r, &p->re, msg, sizeof(msg));
		return errorf("bad regular expression '%s': %s", pattern, msg);
	}
	if (!pattern[strcspn(pattern, ".[]()*+?{}|^$\\")])
		p->literal = xstrdup(pattern);
	return 0;
}

void view_pattern_release(struct view_pattern *p)
{
	regfree(&p->re);
	free(p->literal);
	p->literal = NULL;
}

bool view_pattern_match(const struct view_pattern *p, const char *text)
{
	if (p->literal)
		return (p->icase ? strcasestr(text, p->literal) : strstr(text, p->literal)) != NULL;
	return !regexec(&p->re, text, 0, NULL, 0);
}

static void texts_free(struct view *v)
{
	free(v->texts);
	free(v->text_at);
	v->texts = NULL;
	v->text_at = NULL;
	v->n_texts = v->texts_len = 0;
}

/*
 * The text of every line, kept (VIEW_CACHE_TEXT views) in one buffer: a
 * million lines are one allocation, and a literal pattern is looked for in
 * all of them at once (memmem), not line by line.  Folded: lower-cased as
 * strcasestr() compares, for case-insensitive patterns.
 */
static void texts_build(struct view *v, bool folded)
{
	struct strbuf all = STRBUF_INIT, sb = STRBUF_INIT;

	texts_free(v);
	text_layout(v);
	v->text_at = xcalloc(v->lines + 1, sizeof(*v->text_at));
	for (size_t i = 0; i < v->lines; i++) {
		strbuf_reset(&sb);
		line_text(v, i, &sb, 0);
		v->text_at[i] = all.len;
		if (folded)
			for (size_t k = 0; k < sb.len; k++)
				sb.buf[k] = (char)tolower((unsigned char)sb.buf[k]);
		strbuf_add(&all, sb.buf, sb.len + 1); /* with its NUL */
	}
	v->text_at[v->lines] = all.len;
	v->n_texts = v->lines;
	v->texts_len = all.len;
	v->texts_folded = folded;
	v->texts = strbuf_detach(&all, NULL);
	strbuf_release(&sb);
}

/* The line holding byte off of the texts. */
static size_t text_line(const struct view *v, size_t off)
{
	size_t lo = 0, hi = v->n_texts; /* the last line starting at or before off */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->text_at[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A literal pattern in the lines [from, to) of the texts: the first match
 * (dir 1) or the last (dir -1), or -1.  A match never spans two lines: the
 * pattern has no NUL.
 */
static long texts_find_in(const struct view *v, const char *needle, size_t from, size_t to, int dir)
{
	size_t nlen = strlen(needle), at = v->text_at[from], end = v->text_at[to];
	long found = -1;
	const char *hit;

	while (at < end && (hit = memmem(v->texts + at, end - at, needle, nlen))) {
		size_t line = text_line(v, (size_t)(hit - v->texts));

		found = (long)line;
		if (dir > 0)
			break;
		at = v->text_at[line + 1]; /* the last match: on to the next line */
	}
	return found;
}

/* Lines searched by one thread at a time: a million lines are split over the engine's threads. */
#define FIND_CHUNK_LINES 65536

struct texts_search {
	const struct view *v;
	const char *needle;
	size_t from, to;
	int dir;
	long *found;                 /* per chunk */
};

static void find_chunk(void *ctx, size_t c)
{
	struct texts_search *ts = ctx;
	size_t lo = ts->from + c * FIND_CHUNK_LINES;
	size_t hi = lo + FIND_CHUNK_LINES < ts->to ? lo + FIND_CHUNK_LINES : ts->to;

	ts->found[c] = texts_find_in(ts->v, ts->needle, lo, hi, ts->dir);
}

/* texts_find_in() over chunks of lines at once (core/workpool.h): the first or last match of all. */
static long texts_find(const struct view *v, const char *needle, size_t from, size_t to, int dir)
{
	struct texts_search ts = { v, needle, from, to, dir, NULL };
	struct workpool_batch b = { .work = find_chunk, .ctx = &ts };
	long found = -1;

	if (to <= from)
		return -1;
	b.n = (to - from + FIND_CHUNK_LINES - 1) / FIND_CHUNK_LINES;
	if (b.n == 1)
		return texts_find_in(v, needle, from, to, dir);
	ts.found = xcalloc(b.n, sizeof(*ts.found));
	workpool_run(&b);
	for (size_t c = 0; c < b.n; c++) {
		size_t k = dir > 0 ? c : b.n - 1 - c;

		if (ts.found[k] >= 0) {
			found = ts.found[k];
			break;
		}
	}
	free(ts.found);
	return found;
}

long view_search(struct view *v, const struct view_pattern *p, int dir, bool *wrapped)
{
	struct strbuf sb = STRBUF_INIT;
	bool cache = v->ops->flags & VIEW_CACHE_TEXT;
	long found = -1;

	*wrapped = false;
	if (!v->lines)
		return -1;
	if (v->table && p->literal && *p->literal && !strpbrk(p->literal, " \t")) {
		/* a word: looked for in the cells, where it was found kept for the next n */
		char *word = xstrdup(p->literal);

		if (p->icase)
			for (char *c = word; *c; c++)
				*c = (char)tolower((unsigned char)*c);
		found = table_find(v->table, word, p->icase, v->pos, dir);
		free(word);
		if (found >= 0)
			*wrapped = dir > 0 ? (size_t)found <= v->pos : (size_t)found >= v->pos;
		return found;
	}
	if (cache && (v->n_texts != v->lines || !v->texts || v->texts_folded != p->icase))
		texts_build(v, p->icase);
	if (!cache)
		text_layout(v);
	if (cache && p->literal && *p->literal) {
		char *needle = xstrdup(p->literal);

		if (p->icase)
			for (char *c = needle; *c; c++)
				*c = (char)tolower((unsigned char)*c);
		/* after the cursor to the end, then from the start up to the cursor */
		if (dir > 0) {
			if ((found = texts_find(v, needle, v->pos + 1, v->lines, 1)) < 0)
				found = texts_find(v, needle, 0, v->pos + 1, 1);
		} else {
			if ((found = texts_find(v, needle, 0, v->pos, -1)) < 0)
				found = texts_find(v, needle, v->pos, v->lines, -1);
		}
		free(needle);
		if (found >= 0)
			*wrapped = dir > 0 ? (size_t)found <= v->pos : (size_t)found >= v->pos;
		return found;
	}
	for (size_t k = 1; k <= v->lines && found < 0; k++) {
		size_t i = (v->pos + v->lines + (size_t)dir * k) % v->lines;
		const char *text;

		if (cache) {
			text = v->texts + v->text_at[i];
		} else {
			strbuf_reset(&sb);
			line_text(v, i, &sb, 0);
			text = sb.buf;
		}
		if (view_pattern_match(p, text)) {
			found = (long)i;
			*wrapped = dir > 0 ? i <= v->pos : i >= v->pos;
		}
	}
	strbuf_release(&sb);
	return found;
}

static void dump_header(struct view *v, FILE *out)
{
	struct strbuf sb = STRBUF_INIT;

	fprintf(out, "view: %s\n", v->ops->name);
	if (v->loc.epoch)
		fprintf(out, "epoch: %" PRIu32 "\n", v->loc.epoch);
	if (v->loc.epoch_b)
		fprintf(out, "epoch-b: %" PRIu32 "\n", v->loc.epoch_b);
	if (v->loc.image)
		fprintf(out, "image: %s\n", v->loc.image);
	if (v->loc.procedure)
		fprintf(out, "procedure: %s\n", v->loc.procedure);
	if (v->ops->title) {
		v->ops->title(v, &sb);
		fprintf(out, "title: %s\n", sb.buf);
	}
	fprintf(out, "lines: %zu\ncursor: %zu\n", v->lines, v->lines ? v->pos + 1 : 0);
	if (v->table) {
		const struct table *t = v->table;

		fprintf(out, "sort: %s%s\n", t->sort >= 0 ? t->cols[t->sort].name : "-",
			t->sort >= 0 ? (t->desc ? " desc" : " asc") : "");
		fprintf(out, "filter: %s\n", t->filter ? t->filter : "-");
	}
	if (v->pending)
		fprintf(out, "waiting-for: %s\n", v->pending);
	strbuf_release(&sb);
}

void view_dump(struct view *v, FILE *out, unsigned flags)
{
	struct strbuf sb = STRBUF_INIT;
	struct draw d;

	dump_header(v, out);
	fputs("--\n", out);
	text_layout(v);
	if (view_has_header(v)) {
		draw_init_text(&d, &sb, DRAW_UNBOUNDED, flags & DRAW_ASCII);
		view_draw_header(v, &d);
		strbuf_rtrim(&sb);
		fprintf(out, "  %s\n", sb.buf);
	}
	for (size_t i = 0; i < v->lines; i++) {
		strbuf_reset(&sb);
		draw_init_text(&d, &sb, DRAW_UNBOUNDED, flags & DRAW_ASCII);
		view_draw_line(v, i, &d);
		strbuf_rtrim(&sb);
		fprintf(out, "%s%s\n", i == v->pos ? "> " : "  ", sb.buf);
	}
	if (!v->lines)
		fprintf(out, "  %s\n", v->empty);
	if (v->pane && v->lines && v->ops->pane_lines) {
		fputs("-- pane\n", out);
		for (size_t i = 0, n = v->ops->pane_lines(v); i < n; i++) {
			strbuf_reset(&sb);
			draw_init_text(&d, &sb, DRAW_UNBOUNDED, flags & DRAW_ASCII);
			v->ops->draw_pane(v, i, &d);
			strbuf_rtrim(&sb);
			fprintf(out, "  %s\n", sb.buf);
		}
	}
	strbuf_release(&sb);
}
