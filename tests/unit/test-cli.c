/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of what every tool shares below tools/: the option table of
 * core/cli.h (parsing, --help from the same entries) and the text
 * backends of present/draw.h (plain and coloured reports, several lines).
 * Bad values and bad usage exit, so tests/integration checks those.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/cli.h"
#include "core/strbuf.h"
#include "present/draw.h"

/* ---- the option table ---------------------------------------------------------- */

struct opts {
	const char *db, *label;
	bool json, snapshot;
	uint64_t rows;
	double alpha;
	int sort, level;
	struct cli_events events;
	enum cli_color color;
	char seen[256];
};

static const char *const orders[] = { "verdict", "address", NULL };

static int note(const struct cli_option *o, const char *arg)
{
	struct opts *x = o->value;

	strcat(x->seen, arg);
	return 0;
}

#define OPTIONS(x)                                                                         \
	{                                                                                  \
		OPT_DB(&(x)->db), OPT_JSON(&(x)->json),                                    \
		OPT_SET_BOOL(0, "no-snapshot", &(x)->snapshot, false, "keep no copy"),      \
		OPT_U64('n', "rows", &(x)->rows, "N", "rows", 1, 100, "number of rows"),    \
		OPT_DOUBLE(0, "alpha", &(x)->alpha, "Q", "level", 0, NULL),                 \
		OPT_CHOICE(0, "sort", &(x)->sort, "ORDER", "order", orders, "order"),       \
		OPT_SET_INT('i', "images", &(x)->level, 7, "images"),                       \
		OPT_EVENTS(&(x)->events, "events"),                                         \
		OPT_COLOR(&(x)->color),                                                     \
		OPT_CALLBACK('x', "extra", (x), "S", "a callback", note),                   \
		OPT_GROUP("More:"),                                                         \
		OPT_STRING(0, "a-very-long-option-name", &(x)->label, "LABEL",              \
			   "help on its own line\nand a second one"),                       \
		OPT_ARGUMENT("SET", "a set"),                                               \
		OPT_END()                                                                   \
	}

static void options_parse_every_type(void **state)
{
	struct opts x = { .snapshot = true, .sort = -1 };
	const struct cli_option options[] = OPTIONS(&x);
	const struct cli_command cmd = { .usage = "t [options] SET...", .options = options,
					 .max_args = -1 };
	char *argv[] = { "t", "-d", "db", "one", "--json", "--no-snapshot", "-n", "0x10",
			 "--alpha=0.5", "--sort", "address", "-i", "-e", "clock,cycles,clock",
			 "--color", "-xa", "two", "--extra", "b", NULL };
	int argc = 19, first;

	first = cli_parse(argc, argv, &cmd);
	assert_int_equal(argc - first, 2);
	assert_string_equal(argv[first], "one");
	assert_string_equal(argv[first + 1], "two");
	assert_string_equal(x.db, "db");
	assert_true(x.json);
	assert_false(x.snapshot);
	assert_int_equal(x.rows, 16);
	assert_true(x.alpha == 0.5);
	assert_int_equal(x.sort, 1);
	assert_int_equal(x.level, 7);
	assert_int_equal(x.events.n, 2);
	assert_int_equal(x.events.v[0], EVENT_CLOCK);
	assert_int_equal(x.events.v[1], EVENT_CYCLES);
	assert_int_equal(x.color, CLI_COLOR_ALWAYS);
	assert_string_equal(x.seen, "ab");
}

struct in_order {
	struct strbuf sb;
};

static void collect(void *ctx, const char *arg)
{
	struct in_order *o = ctx;

	strbuf_addf(&o->sb, "[%s]", arg);
}

static void options_in_order_and_stop(void **state)
{
	struct opts x = { .sort = -1 };
	const struct cli_option options[] = OPTIONS(&x);
	struct in_order o = { STRBUF_INIT };
	const struct cli_command in_order = { .usage = "t", .options = options,
					      .flags = CLI_IN_ORDER, .arg = collect, .ctx = &o };
	const struct cli_command stop = { .usage = "t", .options = options,
					  .flags = CLI_STOP_AT_ARG, .max_args = -1 };
	char *argv1[] = { "t", "a1", "--json", "a2", "--", "-n", "3", "b1", NULL };
	char *argv2[] = { "t", "--json", "cmd", "-n", "3", NULL };
	int first;

	cli_parse(8, argv1, &in_order);
	assert_string_equal(o.sb.buf, "[a1][a2][--][b1]");
	assert_int_equal(x.rows, 3);
	x.rows = 0;
	first = cli_parse(5, argv2, &stop);
	assert_int_equal(first, 2);
	assert_int_equal(x.rows, 0);
	strbuf_release(&o.sb);
}

static void options_write_help(void **state)
{
	struct opts x = { .sort = -1 };
	const struct cli_option options[] = OPTIONS(&x);
	const struct cli_command cmd = { .usage = "t [options] SET...\nt --other", .about = "About.",
					 .options = options, .footer = "Footer." };
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	cli_help(&cmd, f);
	fclose(f);
	assert_non_null(strstr(buf, "usage: t [options] SET...\n       t --other\n\nAbout.\n\n"));
	assert_non_null(strstr(buf, "\n  -d, --db DIR            the database (default"));
	assert_non_null(strstr(buf, "\n      --no-snapshot       keep no copy\n"));
	assert_non_null(strstr(buf, "\n      --color[=WHEN]      colours"));
	assert_non_null(strstr(buf, "\n\nMore:\n      --a-very-long-option-name LABEL\n"
				    "                          help on its own line\n"
				    "                          and a second one\n"));
	assert_non_null(strstr(buf, "\n  SET                     a set\n"));
	assert_non_null(strstr(buf, "--help, --version"));
	assert_non_null(strstr(buf, "\nFooter.\n"));
	free(buf);
}

/* ---- text backends ---------------------------------------------------------------- */

static void report(struct draw *d)
{
	draw_text(d, STYLE_HEADER, "Addr");
	draw_printf(d, STYLE_NORMAL, " %5s", "n");
	draw_eol(d);
	draw_text(d, STYLE_ADDRESS, "401000");
	draw_text(d, STYLE_NORMAL, " ");
	draw_text(d, STYLE_HOT, "na\xc3\xafve");
	draw_eol(d);
}

static char *file_report(unsigned flags)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct draw d;

	draw_init_file(&d, f, flags);
	report(&d);
	assert_int_equal(draw_file_finish(&d), 0);
	fclose(f);
	return buf;
}

static void draw_reports_as_text(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct draw d;
	char *plain = file_report(0), *color = file_report(DRAW_COLOR);

	draw_init_text(&d, &sb, DRAW_UNBOUNDED, DRAW_UTF8);
	report(&d);
	assert_string_equal(sb.buf, "Addr     n\n401000 na\xc3\xafve\n");
	assert_string_equal(plain, sb.buf);
	/* the same text, each style's run in its escape sequence, reset at line ends */
	assert_string_equal(color, "\033[1;33mAddr\033[m     n\n"
				   "\033[34m401000\033[m \033[1;31mna\xc3\xafve\033[m\n");
	free(plain);
	free(color);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_parse_every_type),
		cmocka_unit_test(options_in_order_and_stop),
		cmocka_unit_test(options_write_help),
		cmocka_unit_test(draw_reports_as_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
