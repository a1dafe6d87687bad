/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of tui/: the drawing layer, the request table and key syntax,
 * tables, the generic view code, scripts and background jobs.  (The screens
 * themselves are tested headless by tests/integration/t0600-tui-screens.sh.)
 */
#include "config.h"

#include <locale.h>
#include <stdatomic.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "tui/data-diff.h"
#include "present/draw.h"
#include "tui/job.h"
#include "tui/request.h"
#include "tui/script.h"
#include "tui/table.h"
#include "tui/view.h"

#include <curses.h>

/* ---- the drawing layer ---------------------------------------------------- */

/* Draws with fn into a line of `width` columns and returns the text. */
static char *render(int width, unsigned flags, int skip,
		    void (*fn)(struct draw *d, const void *arg), const void *arg)
{
	struct strbuf sb = STRBUF_INIT;
	struct draw d;

	draw_init_text(&d, &sb, width, flags);
	d.skip = skip;
	fn(&d, arg);
	return strbuf_detach(&sb, NULL);
}

static void put_text(struct draw *d, const void *arg)
{
	draw_text(d, STYLE_NORMAL, arg);
}

static void expect_text(int width, unsigned flags, int skip, const char *in, const char *out)
{
	char *s = render(width, flags, skip, put_text, in);

	assert_string_equal(s, out);
	free(s);
}

static void draw_clips_and_sanitizes(void **state)
{
	expect_text(5, 0, 0, "abcdefgh", "abcde");
	expect_text(80, 0, 0, "a\tb\x1b[31mc\x7f", "a?b?[31mc?");
	expect_text(80, 0, 0, "bad\xff\xc3(utf8", "bad?" "?(utf8");
	expect_text(80, 0, 0, "c1\xc2\x9b", "c1?");
	/* A wide character that does not fit is left out, not cut in half. */
	expect_text(5, 0, 0, "ab\xe3\x83\xa6\xe3\x83\x8b", "ab\xe3\x83\xa6");
	expect_text(80, DRAW_ASCII, 0, "na\xc3\xafve \xe3\x83\xa6", "na?ve ?");
	/* Horizontal scroll: skipped columns; a cut wide character is blanked. */
	expect_text(80, 0, 2, "abcdef", "cdef");
	expect_text(80, 0, 1, "\xe3\x83\xa6x", " x");
	assert_int_equal(text_width("a\xe3\x83\xa6\xcc\x81", 0), 3);
	assert_int_equal(text_width("a\xe3\x83\xa6", DRAW_ASCII), 2);
}

struct field_arg {
	const char *s;
	int width;
	enum draw_align align;
};

static void put_field(struct draw *d, const void *arg)
{
	const struct field_arg *f = arg;

	draw_field(d, STYLE_NORMAL, f->s, f->width, f->align);
	draw_text(d, STYLE_NORMAL, "|");
}

static void expect_field(const char *s, int width, enum draw_align align, unsigned flags,
			 const char *out)
{
	struct field_arg f = { s, width, align };
	char *r = render(DRAW_UNBOUNDED, flags, 0, put_field, &f);

	assert_string_equal(r, out);
	free(r);
}

static void draw_fields(void **state)
{
	expect_field("abc", 5, ALIGN_LEFT, 0, "abc  |");
	expect_field("abc", 5, ALIGN_RIGHT, 0, "  abc|");
	expect_field("abcdefgh", 5, ALIGN_LEFT, 0, "abcd\xe2\x80\xa6|");
	expect_field("abcdefgh", 5, ALIGN_LEFT, DRAW_ASCII, "abcd~|");
	expect_field("/usr/lib/libc.so", 8, ALIGN_LEFT_TAIL, 0, "\xe2\x80\xa6libc.so|");
	expect_field("/usr/lib/libc.so", 8, ALIGN_LEFT_TAIL, DRAW_ASCII, "~libc.so|");
	/* C++ names: the start and the end, the ellipsis in the middle */
	expect_field("std::vector<int>::push_back(int const&)", 20, ALIGN_LEFT_MIDDLE, 0,
		     "std::vect\xe2\x80\xa6nt const&)|");
	expect_field("std::vector<int>::push_back(int const&)", 20, ALIGN_LEFT_MIDDLE, DRAW_ASCII,
		     "std::vect~nt const&)|");
	expect_field("abcdef", 6, ALIGN_LEFT_MIDDLE, 0, "abcdef|");
	expect_field("abcdefg", 6, ALIGN_LEFT_MIDDLE, 0, "ab\xe2\x80\xa6" "efg|");
	expect_field("\xe3\x83\xa6\xe3\x83\x8b\xe3\x82\xb3x", 6, ALIGN_LEFT_MIDDLE, 0,
		     "\xe3\x83\xa6\xe2\x80\xa6\xe3\x82\xb3x|");
	/* Wide characters: the field stays exactly as wide as asked. */
	expect_field("\xe3\x83\xa6\xe3\x83\x8b\xe3\x82\xb3", 4, ALIGN_LEFT, 0,
		     "\xe3\x83\xa6 \xe2\x80\xa6|");
	expect_field("", 0, ALIGN_LEFT, 0, "|");
}

static void put_bar(struct draw *d, const void *arg)
{
	draw_bar(d, STYLE_NORMAL, *(const double *)arg, 4);
	draw_text(d, STYLE_NORMAL, "|");
}

static void draw_bars_and_glyphs(void **state)
{
	double half = 0.5, full = 1.5, eighth = 1.0 / 32;
	char *s;

	s = render(80, DRAW_ASCII, 0, put_bar, &half);
	assert_string_equal(s, "##  |");
	free(s);
	s = render(80, 0, 0, put_bar, &full);
	assert_string_equal(s, "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88|");
	free(s);
	s = render(80, 0, 0, put_bar, &eighth);
	assert_string_equal(s, "\xe2\x96\x8f   |");
	free(s);
	for (int g = 0; g < GLYPH__COUNT; g++) {
		const char *a = glyph_text((enum glyph)g, DRAW_ASCII);

		for (const char *p = a; *p; p++)
			assert_true(*p > 32 && *p < 127);
		assert_int_equal(text_width(glyph_text((enum glyph)g, 0), 0), 1);
	}
	for (int st = 0; st < STYLE__COUNT; st++)
		assert_non_null(style_info((enum style)st)->name);
}

/* ---- requests and keys --------------------------------------------------------- */

static void request_table_is_consistent(void **state)
{
	for (enum request r = REQ_NONE + 1; r < REQ__COUNT; r++) {
		const struct request_info *info = request_info(r);

		assert_int_equal(info->req, r);
		assert_int_equal(request_lookup(info->name), r);
		assert_true(*info->group);
		assert_true(strlen(info->help) <= 36); /* fits the help view at 80 columns */
		for (enum request o = r + 1; o < REQ__COUNT; o++)
			assert_string_not_equal(info->name, request_info(o)->name);
	}
	assert_int_equal(request_lookup("q"), REQ_QUIT);
	assert_int_equal(request_lookup("no-such-request"), REQ_NONE);
}

struct seen_keys {
	int keys[128];
	size_t n;
};

static void collect_keys(const struct request_info *info, void *data)
{
	struct seen_keys *seen = data;
	const char *p = info->keys, *why;

	while (*p) {
		int key;

		if (*p == ' ') {
			p++;
			continue;
		}
		key = key_normalize(key_parse(&p, &why));
		assert_true(key >= 0);
		for (size_t i = 0; i < seen->n; i++)
			assert_int_not_equal(seen->keys[i], key); /* bound once */
		assert_true(seen->n < ARRAY_SIZE(seen->keys));
		seen->keys[seen->n++] = key;
		assert_int_equal(key_request(key), info->req);
	}
}

static void keys_are_bound_once(void **state)
{
	struct seen_keys seen = { .n = 0 };

	request_foreach(collect_keys, &seen);
	assert_true(seen.n > 20);
	assert_int_equal(key_request('j'), REQ_MOVE_DOWN);
	assert_int_equal(key_request(KEY_DOWN), REQ_MOVE_DOWN);
	assert_int_equal(key_request('\n'), REQ_ENTER);
	assert_int_equal(key_request(127), REQ_BACK);
	assert_int_equal(key_request('?'), REQ_VIEW_help);
	assert_int_equal(key_request('x'), REQ_SWAP);
	assert_int_equal(key_request(']'), REQ_NEXT_STALL);
	assert_int_equal(key_request('z'), REQ_NONE);
}

static int parse_one(const char *s, const char **rest)
{
	const char *why = NULL;
	int key = key_parse(&s, &why);

	if (rest)
		*rest = s;
	return key;
}

static void key_syntax(void **state)
{
	const char *rest, *why;
	const char *p = "<Bogus>";
	struct strbuf sb = STRBUF_INIT;
	char bytes[8];

	assert_int_equal(parse_one("j", NULL), 'j');
	assert_int_equal(parse_one("<Enter>", NULL), '\r');
	assert_int_equal(parse_one("<C-l>", NULL), 12);
	assert_int_equal(parse_one("<F12>", NULL), KEY_F(12));
	assert_int_equal(parse_one("<lt>", NULL), '<');
	assert_int_equal(parse_one("<:>x", &rest), ':');
	assert_string_equal(rest, "x");
	assert_int_equal(parse_one("<", &rest), '<');
	assert_int_equal(parse_one("<a b>", &rest), '<');
	assert_string_equal(rest, "a b>");
	assert_int_equal(key_parse(&p, &why), -1);
	assert_non_null(why);
	key_describe(KEY_PPAGE, &sb);
	strbuf_addch(&sb, ' ');
	key_describe(3, &sb);
	strbuf_addch(&sb, ' ');
	key_describe('\n', &sb);
	assert_string_equal(sb.buf, "PgUp C-c Enter");
	strbuf_release(&sb);
	assert_int_equal(key_to_bytes(KEY_UP, bytes), 3);
	assert_memory_equal(bytes, "\033[A", 3);
	assert_int_equal(key_to_bytes(KEY_BACKSPACE, bytes), 1);
	assert_int_equal(bytes[0], 127);
	assert_int_equal(key_to_bytes(KEY_F(5), bytes), 0);
}

/* ---- tables ----------------------------------------------------------------- */

struct row {
	const char *name;
	unsigned n;
};

static int cmp_n(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(((const struct row *)a)->n, ((const struct row *)b)->n);
}

static int cmp_name(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static void cell_n(void *ctx, const struct table_column *col, const void *row, size_t pos,
		   struct draw *d, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", ((const struct row *)row)->n);
	draw_field(d, STYLE_NORMAL, buf, width, ALIGN_RIGHT);
}

static void cell_name(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, ((const struct row *)row)->name, width, ALIGN_LEFT);
}

static struct row rows[] = {
	{ "libc.so", 5 }, { "app", 9 }, { "LibM.so", 5 }, { "kernel", 1 },
};

static void make_table(struct table *t)
{
	const void *p[4] = { &rows[0], &rows[1], &rows[2], &rows[3] };

	table_init(t, NULL);
	table_add_column(t, &(struct table_column){ .name = "n", .width = 3, .align = ALIGN_RIGHT,
						    .numeric = true, .cmp = cmp_n, .cell = cell_n });
	table_add_column(t, &(struct table_column){ .name = "name", .min = 4, .cmp = cmp_name,
						    .cell = cell_name });
	table_set_rows(t, p, 4);
}

static const char *name_at(struct table *t, size_t pos)
{
	return ((const struct row *)table_row(t, pos))->name;
}

static void table_sorts_stably_and_filters(void **state)
{
	struct table t;

	make_table(&t);
	table_sort_by(&t, 0, true);
	table_update(&t);
	assert_int_equal(t.n_shown, 4);
	assert_string_equal(name_at(&t, 0), "app");
	assert_string_equal(name_at(&t, 1), "libc.so"); /* tie: given order */
	assert_string_equal(name_at(&t, 2), "LibM.so");
	table_sort_by(&t, 0, false);
	table_update(&t);
	assert_string_equal(name_at(&t, 0), "kernel");
	assert_string_equal(name_at(&t, 1), "libc.so");
	table_set_filter(&t, "lib");      /* smartcase: case-insensitive */
	table_update(&t);
	assert_int_equal(t.n_shown, 2);
	table_set_filter(&t, "Lib");      /* upper case: exact */
	table_update(&t);
	assert_int_equal(t.n_shown, 1);
	assert_string_equal(name_at(&t, 0), "LibM.so");
	assert_null(table_row(&t, 1));
	table_set_filter(&t, "");
	table_update(&t);
	assert_int_equal(t.n_shown, 4);
	/* The sort survives rebuilding the columns, by name. */
	table_sort_by(&t, 1, false);
	table_clear_columns(&t);
	assert_int_equal(t.sort, -1);
	table_add_column(&t, &(struct table_column){ .name = "name", .cmp = cmp_name,
						     .cell = cell_name });
	assert_int_equal(t.sort, 0);
	table_release(&t);
}

static bool keep_all;

static bool keep_big(void *ctx, const void *row)
{
	return keep_all || ((const struct row *)row)->n >= 5;
}

/* With keep(): the same rows in the same order as filtering by hand, cached or not. */
static void table_keeps_rows(void **state)
{
	struct table t;
	static const char *const want_desc[] = { "app", "libc.so", "LibM.so", "kernel" };

	make_table(&t);
	t.keep = keep_big;
	keep_all = false;
	table_sort_by(&t, 0, true);
	table_update(&t);
	assert_int_equal(t.n_shown, 3);
	keep_all = true;
	table_update(&t);
	assert_int_equal(t.n_shown, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(name_at(&t, i), want_desc[i]);
	keep_all = false;
	table_update(&t);                  /* one pass over the kept order */
	assert_int_equal(t.n_shown, 3);
	assert_string_equal(name_at(&t, 0), "app");
	assert_string_equal(name_at(&t, 1), "libc.so"); /* ties in the given order */
	assert_string_equal(name_at(&t, 2), "LibM.so");
	table_set_filter(&t, "Lib");
	table_update(&t);
	assert_int_equal(t.n_shown, 1);
	table_set_filter(&t, NULL);
	table_sort_by(&t, 0, false);       /* another order: sorted again */
	keep_all = true;
	table_update(&t);
	assert_string_equal(name_at(&t, 0), "kernel");
	assert_string_equal(name_at(&t, 1), "libc.so");
	assert_string_equal(name_at(&t, 2), "LibM.so");
	assert_string_equal(name_at(&t, 3), "app");
	table_release(&t);
}

static uint64_t key_n(const struct table_column *c, const void *row)
{
	return ((const struct row *)row)->n;
}

/* Every row's n at once (the table's rows are the array's elements). */
static void keys_n(const struct table_column *c, const struct table *t, uint64_t *out,
		   uint64_t *scratch)
{
	(void)scratch;
	for (size_t i = 0; i < t->n_rows; i++)
		out[i] = key_n(c, table_row_at(t, i));
}

/* A table of rows v[0..n): n by key, name and m (n again) by comparisons. */
static void keyed_table(struct table *t, const struct row *v, size_t n)
{
	table_init(t, NULL);
	table_add_column(t, &(struct table_column){ .name = "n", .numeric = true, .cmp = cmp_n,
						    .key = key_n, .keys = keys_n, .cell = cell_n });
	table_add_column(t, &(struct table_column){ .name = "name", .cmp = cmp_name,
						    .cell = cell_name });
	table_add_column(t, &(struct table_column){ .name = "m", .numeric = true, .cmp = cmp_n,
						    .cell = cell_n });
	table_set_row_array(t, v, n, sizeof(*v));
}

/* The order of a table of many ties, sorted afresh (a new table) by column col, desc. */
static void fresh_order(const struct row *v, size_t n, int col, bool desc, uint32_t *out)
{
	struct table t;

	keyed_table(&t, v, n);
	table_sort_by(&t, col, desc);
	table_update(&t);
	memcpy(out, t.shown, n * sizeof(*out));
	table_release(&t);
}

/*
 * Orders kept and turned round (S), by keys or by comparisons, are those a
 * fresh sort gives: ties in the given order either way; back to a sort
 * (< after >) the same; a search finds words in cells, wrapping.
 */
static void table_orders_kept(void **state)
{
	enum { N = 300 };
	static const char *const names[] = { "alpha", "beta", "gamma", "delta" };
	struct row v[N];
	uint32_t want[N];
	struct table t;

	for (size_t i = 0; i < N; i++)
		v[i] = (struct row){ names[(i * 7) % 4], (unsigned)((i * 13) % 5) };
	keyed_table(&t, v, N);
	for (int round = 0; round < 2; round++) {
		for (int col = 0; col < 3; col++) {
			for (int desc = 0; desc < 2; desc++) {
				table_sort_by(&t, col, desc);
				table_update(&t);
				fresh_order(v, N, col, desc, want);
				assert_int_equal(t.n_shown, N);
				assert_memory_equal(t.shown, want, sizeof(want));
			}
		}
	}
	/* by keys (sorted as words of key and index) as by comparisons */
	for (int desc = 0; desc < 2; desc++) {
		uint32_t by_cmp[N];

		fresh_order(v, N, 2, desc, by_cmp);
		fresh_order(v, N, 0, desc, want);
		assert_memory_equal(by_cmp, want, sizeof(want));
	}
	/* "gamma" is every fourth row's name from the third; from the last row it wraps */
	table_sort_by(&t, -1, false);
	table_update(&t);
	assert_int_equal(table_find(&t, "gamma", true, N - 1, 1), 2);
	assert_int_equal(table_find(&t, "gamma", true, 2, 1), 6);
	assert_int_equal(table_find(&t, "gamma", true, 2, -1), N - 2);
	assert_int_equal(table_find(&t, "GAMMA", false, 0, 1), -1);
	assert_int_equal(table_find(&t, "4", true, 0, 1), 3);       /* a number's cell */
	assert_int_equal(table_position(&t, 5), 5);
	table_release(&t);
}

static void table_layout_and_draw(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct table t;
	struct draw d;

	make_table(&t);
	table_sort_by(&t, 0, true);
	table_update(&t);
	table_layout(&t, 20);
	assert_int_equal(t.widths[0], 3);
	assert_int_equal(t.widths[1], 20 - 3 - 2);
	draw_init_text(&d, &sb, 20, 0);
	table_draw_header(&t, &d);
	assert_string_equal(sb.buf, "  \xe2\x96\xbcn name           ");
	strbuf_reset(&sb);
	draw_init_text(&d, &sb, 20, 0);
	table_draw_row(&t, 0, &d);
	assert_string_equal(sb.buf, "   9 app            ");
	table_layout_natural(&t, 100);
	assert_int_equal(t.widths[1], 7);
	strbuf_release(&sb);
	table_release(&t);
}

/* ---- the generic view code --------------------------------------------------- */

static const char *const words[] = { "alpha", "beta", "gamma", "delta", "epsilon",
				     "zeta", "eta", "theta", "iota", "kappa" };

static void words_draw(struct view *v, size_t line, struct draw *d)
{
	draw_text(d, STYLE_NORMAL, words[line]);
}

static int words_open(struct view *v)
{
	view_set_lines(v, ARRAY_SIZE(words));
	return 0;
}

static const struct view_ops words_ops = { .name = "words", .open = words_open,
					   .draw = words_draw };

static void view_moves_and_searches(void **state)
{
	struct view_loc loc = { .epoch = 3 };
	struct view *v = view_new(NULL, NULL, &words_ops, &loc);
	struct view_pattern pat;
	bool wrapped;
	FILE *f;
	char buf[512];
	size_t n;

	assert_non_null(v);
	view_resize(v, 4, 40);
	assert_int_equal(view_request(v, REQ_MOVE_DOWN, NULL), VIEW_DONE);
	assert_int_equal(v->pos, 1);
	view_request(v, REQ_MOVE_PAGE_DOWN, NULL);
	assert_int_equal(v->pos, 5);
	assert_int_equal(v->offset, 4);
	view_request(v, REQ_MOVE_LAST, NULL);
	assert_int_equal(v->pos, 9);
	assert_int_equal(v->offset, 6);
	view_request(v, REQ_MOVE_DOWN, NULL);
	assert_int_equal(v->pos, 9);
	view_request(v, REQ_MOVE_HALF_UP, NULL);
	assert_int_equal(v->pos, 7);
	view_request(v, REQ_MOVE_FIRST, NULL);
	assert_int_equal(v->pos, 0);
	view_request(v, REQ_MOVE_UP, NULL);
	assert_int_equal(v->pos, 0);
	assert_int_equal(view_request(v, REQ_QUIT, NULL), VIEW_PASS);
	/* Search goes forward from the cursor and wraps around. */
	assert_int_equal(view_pattern_init(&pat, "eta"), 0);
	assert_non_null(pat.literal);
	assert_int_equal(view_search(v, &pat, 1, &wrapped), 1);
	assert_false(wrapped);
	view_move_to(v, 7);
	assert_int_equal(view_search(v, &pat, 1, &wrapped), 1);
	assert_true(wrapped);
	assert_int_equal(view_search(v, &pat, -1, &wrapped), 6);
	view_pattern_release(&pat);
	/* A regular expression, smartcase. */
	assert_int_equal(view_pattern_init(&pat, "^[tz]"), 0);
	assert_null(pat.literal);
	assert_true(view_pattern_match(&pat, "Theta"));
	view_pattern_release(&pat);
	assert_int_equal(view_pattern_init(&pat, "Eta"), 0);
	assert_false(view_pattern_match(&pat, "beta"));
	assert_true(view_pattern_match(&pat, "bEta"));
	view_pattern_release(&pat);
	/* Shrinking the view keeps the cursor visible. */
	view_move_to(v, 9);
	view_resize(v, 2, 40);
	assert_int_equal(v->offset, 8);
	f = tmpfile();
	view_dump(v, f, 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "view: words\nepoch: 3\nlines: 10\ncursor: 10\n--\n"));
	assert_non_null(strstr(buf, "  iota\n> kappa\n"));
	view_free(v);
}

static struct strbuf reported = STRBUF_INIT;

/* Like the session's routine (a job's messages reach it when it is collected). */
static void test_report(enum report_level level, const char *msg)
{
	strbuf_addf(&reported, "[%s]", msg);
}

/* ---- scripts ----------------------------------------------------------------- */

static void scripts_parse(void **state)
{
	static const char text[] = "# comment\n\n:save-display a.screen  \njj<Enter>\n<:>sort<Esc>\n";
	struct script s;
	const struct script_item *it;

	assert_int_equal(script_parse(&s, "t", text, strlen(text)), 0);
	it = script_next(&s);
	assert_int_equal(it->kind, SCRIPT_COMMAND);
	assert_string_equal(it->command, "save-display a.screen");
	assert_int_equal(it->lineno, 3);
	it = script_next(&s);
	assert_int_equal(it->key, 'j');
	assert_false(it->line_end);
	script_next(&s);
	it = script_next(&s);
	assert_int_equal(it->key, '\r');
	assert_true(it->line_end);
	assert_int_equal(script_next(&s)->key, ':');
	for (int i = 0; i < 4; i++)
		script_next(&s);
	it = script_next(&s);
	assert_int_equal(it->key, 27);
	assert_true(it->line_end);
	assert_null(script_next(&s));
	script_release(&s);
	set_report_routine(test_report);
	assert_int_equal(script_parse(&s, "t", "<Nope>\n", 7), -1);
	script_release(&s);
	assert_int_equal(script_parse(&s, "t", "a\0b\n", 4), -1);
	script_release(&s);
	set_report_routine(NULL);
}

/* ---- jobs ---------------------------------------------------------------------- */

/* Waits until cond holds; fails the test after 30 s (a worker that hangs). */
#define WAIT_UNTIL(cond)                                                              \
	do {                                                                          \
		int64_t until_ = time_monotonic_ns() + 30 * (int64_t)1000000000;     \
		while (!(cond)) {                                                     \
			if (time_monotonic_ns() > until_)                             \
				fail_msg("timed out after 30 s waiting for %s", #cond); \
			usleep(1000);                                                 \
		}                                                                     \
	} while (0)

static atomic_int gate;

static void slow_job(struct job *job)
{
	int *n = XNEW(int);

	*n = 42;
	job_progress(job, 1, 4);
	while (!gate && !job_cancelled(job))
		usleep(1000);
	errorf("reported from %s", job->key);
	job->result = n;
}

static void count_done(struct job *job, void *data)
{
	(*(int *)data)++;
}

static void jobs_run_in_background(void **state)
{
	struct jobs jobs;
	struct job *a, *b;
	struct strbuf sb = STRBUF_INIT;
	int done = 0;

	set_report_routine(test_report);
	strbuf_reset(&reported);
	gate = 0;
	jobs_init(&jobs, false);
	a = jobs_submit(&jobs, "a", "job a", slow_job, NULL, NULL, free);
	b = jobs_submit(&jobs, "a", "again", slow_job, xstrdup("x"), free, free);
	assert_ptr_equal(a, b); /* cached by key */
	assert_true(jobs_busy(&jobs));
	WAIT_UNTIL(atomic_load(&a->task.total) != 0);
	jobs_describe(&jobs, &sb);
	assert_string_equal(sb.buf, "job a: 25%");
	assert_int_equal(jobs_collect(&jobs, count_done, &done), 0);
	gate = 1;
	jobs_wait_idle(&jobs);
	assert_false(jobs_busy(&jobs));
	assert_int_equal(reported.len, 0); /* not until collected */
	assert_int_equal(jobs_collect(&jobs, count_done, &done), 1);
	assert_int_equal(done, 1);
	assert_string_equal(reported.buf, "[reported from a]");
	assert_int_equal(*(int *)jobs_find(&jobs, "a")->result, 42);
	assert_int_equal(jobs_collect(&jobs, count_done, &done), 0);
	/* Invalidated results are forgotten, and freed at the next collect. */
	jobs_invalidate(&jobs);
	assert_null(jobs_find(&jobs, "a"));
	jobs_collect(&jobs, NULL, NULL);
	assert_int_equal(jobs.n_all, 0);
	/* A job still running at release is cancelled. */
	gate = 0;
	jobs_submit(&jobs, "b", "job b", slow_job, NULL, NULL, free);
	jobs_release(&jobs);
	strbuf_release(&sb);
	set_report_routine(NULL);
}

static void jobs_run_inline(void **state)
{
	struct jobs jobs;
	int done = 0;

	set_report_routine(test_report);
	strbuf_reset(&reported);
	gate = 1;
	jobs_init(&jobs, true);
	jobs_submit(&jobs, "s", "sync", slow_job, NULL, NULL, free);
	assert_false(jobs_busy(&jobs));
	assert_int_equal(jobs_collect(&jobs, count_done, &done), 1);
	assert_string_equal(reported.buf, "[reported from s]");
	jobs_release(&jobs);
	set_report_routine(NULL);
}

/*
 * A background job of `n` steps with a yield point between steps.  With
 * hold, it stays at its yield point after its first step until a
 * foreground job has run there, and once resumed until the test releases
 * it (30 s at most each: then timed_out), so that what the test checks
 * happens however slowly its thread runs.
 */
struct bg_work {
	int next, n;
	int steps_run;
	bool hold, resumed, timed_out;
	atomic_bool release;
};

static _Atomic int fg_ran;

/* Waits at yield points until cond (30 s at most). */
static void bg_hold(struct bg_work *w, bool (*cond)(struct bg_work *))
{
	int64_t until = time_monotonic_ns() + 30 * (int64_t)1000000000;

	while (!cond(w)) {
		if (time_monotonic_ns() > until) {
			w->timed_out = true;
			break;
		}
		workpool_yield();
		usleep(1000);
	}
}

static bool fg_has_run(struct bg_work *w)
{
	return atomic_load(&fg_ran);
}

static bool released(struct bg_work *w)
{
	return atomic_load(&w->release);
}

static void bg_job(struct job *job)
{
	struct bg_work *w = job->arg;

	for (; w->next < w->n; w->next++) {
		if (job_cancelled(job))
			return;
		if (w->hold && !w->resumed && w->next == 1) {
			bg_hold(w, fg_has_run);
			w->resumed = true;
			bg_hold(w, released);
		}
		workpool_yield();
		usleep(500);
		w->steps_run++;
		job_progress(job, (uint64_t)w->next + 1, (uint64_t)w->n);
	}
	job->result = w;
}

static void fg_job(struct job *job)
{
	atomic_store(&fg_ran, 1);
	job->result = xstrdup("fg");
}

static void jobs_background_yields(void **state)
{
	struct jobs jobs;
	struct bg_work *w = XNEW(struct bg_work);
	struct job *bg;

	w->n = 400;
	w->hold = true;
	atomic_store(&fg_ran, 0);
	jobs_init(&jobs, false);
	bg = jobs_submit_background(&jobs, "bg", "background", bg_job, w, free, NULL);
	WAIT_UNTIL(atomic_load(&bg->task.done) != 0);
	jobs_submit(&jobs, "fg", "foreground", fg_job, NULL, NULL, free);
	jobs_wait_foreground(&jobs);
	/* the foreground job ran at the background one's yield point after
	 * step 1 (it now waits to be released) */
	assert_int_equal(atomic_load(&fg_ran), 1);
	assert_false(jobs_busy_foreground(&jobs));
	assert_true(jobs_busy(&jobs));
	atomic_store(&w->release, true);
	jobs_wait_idle(&jobs);
	assert_false(w->timed_out);
	assert_int_equal(w->steps_run, w->n); /* every step once: it went on where it stopped */
	assert_ptr_equal(bg->result, w);
	jobs_collect(&jobs, NULL, NULL);
	jobs_release(&jobs);

	/* inline (no engine threads): nothing waits, it runs to the end at once */
	w = XNEW(struct bg_work);
	w->n = 3;
	jobs_init(&jobs, true);
	bg = jobs_submit_background(&jobs, "bg", "background", bg_job, w, free, NULL);
	assert_int_equal(w->steps_run, 3);
	jobs_release(&jobs);
}

/* The diff views write ratios as dcpidiff does. */
static void diff_ratios(void **state)
{
	char buf[16];

	diff_format_ratio(1.784, buf, sizeof(buf));
	assert_string_equal(buf, "1.78x");
	diff_format_ratio(INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "new");
	diff_format_ratio(0, buf, sizeof(buf));
	assert_string_equal(buf, "gone");
	diff_format_ratio(NAN, buf, sizeof(buf));
	assert_string_equal(buf, "-");
	diff_format_ratio(1234.4, buf, sizeof(buf));
	assert_string_equal(buf, "1234x");
}

/* ---- completion candidates ------------------------------------------------- */

static void candidates_dedup(void **state)
{
	struct candidates c = { .prefix = "ma" };
	char name[32];

	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "main%d", i % 5000);
		candidates_add(&c, name);
	}
	candidates_add(&c, "other");
	assert_int_equal(c.n, 5000);
	assert_string_equal(c.v[0], "main0");
	assert_string_equal(c.v[4999], "main4999");
	candidates_release(&c);
	assert_int_equal(c.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(draw_clips_and_sanitizes),
		cmocka_unit_test(draw_fields),
		cmocka_unit_test(draw_bars_and_glyphs),
		cmocka_unit_test(request_table_is_consistent),
		cmocka_unit_test(keys_are_bound_once),
		cmocka_unit_test(key_syntax),
		cmocka_unit_test(table_sorts_stably_and_filters),
		cmocka_unit_test(table_keeps_rows),
		cmocka_unit_test(table_orders_kept),
		cmocka_unit_test(table_layout_and_draw),
		cmocka_unit_test(view_moves_and_searches),
		cmocka_unit_test(scripts_parse),
		cmocka_unit_test(jobs_run_in_background),
		cmocka_unit_test(jobs_run_inline),
		cmocka_unit_test(jobs_background_yields),
		cmocka_unit_test(diff_ratios),
		cmocka_unit_test(candidates_dedup),
	};

	setlocale(LC_CTYPE, "C.UTF-8");
	return cmocka_run_group_tests_name("tui", tests, NULL, NULL);
}
