/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpidiff - two profiles compared, with noise told apart from change.
 * The engine is analysis/diff.h, which dcpi-tui's diff views share.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "tools/tool.h"

static struct tool t;

/*
 * The arguments in order (cli.h CLI_IN_ORDER): "A B [PROCEDURE]", or the
 * sets of A, "--", the sets of B.  A "--" before any set only ends the
 * options.
 */
struct args {
	char **pos;
	size_t n_pos;
	size_t sep;             /* where B's sets start after a "--", else SIZE_MAX */
	char **a, **b;          /* the sets of each side */
	size_t n_a, n_b;
};

static void add_arg(void *ctx, const char *arg)
{
	struct args *a = ctx;

	if (strcmp(arg, "--")) {
		a->pos[a->n_pos++] = (char *)arg;
		return;
	}
	if (a->n_pos && a->sep == SIZE_MAX)
		a->sep = a->n_pos;
	else if (a->n_pos)
		die("more than one '--' between sets");
}

static void split_sets(struct args *a, struct diff_opts *o, const struct cli_command *cmd)
{
	if (a->sep != SIZE_MAX) {
		a->a = a->pos;
		a->n_a = a->sep;
		a->b = a->pos + a->sep;
		a->n_b = a->n_pos - a->sep;
	} else {
		if (a->n_pos == 3 && !o->procedure)
			o->procedure = a->pos[--a->n_pos];
		if (a->n_pos != 2)
			cli_usage_error(cmd, "expected A B [PROCEDURE], or A1 A2 ... -- B1 B2 ...");
		a->a = a->pos;
		a->b = a->pos + 1;
		a->n_a = a->n_b = 1;
	}
	if (!a->n_a || !a->n_b)
		cli_usage_error(cmd, "each side needs at least one set: A1 A2 ... -- B1 B2 ...");
}

static int report(struct diff *d, bool swap, int sort, bool all, uint64_t rows)
{
	if (swap)
		diff_swap(d);
	if (sort >= 0)
		diff_sort(d, sort ? DIFF_SORT_ADDRESS : DIFF_SORT_VERDICT);
	if (t.json) {
		diff_json(d, &t.jw, rows);
		return json_finish(&t.jw);
	}
	diff_draw(d, &t.out, all ? DIFF_PRINT_ALL : 0, rows);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const orders[] = { "verdict", "address", NULL };
	struct diff_opts o = DIFF_OPTS_INIT;
	struct args a = { .sep = SIZE_MAX };
	bool all = false, swap = false;
	int level = PSET_PROCEDURES, sort = -1, r;
	uint64_t rows = 0;
	struct pset **sets;
	struct diff d;
	const struct cli_option options[] = {
		TOOL_OPT_DB(&t),
		OPT_EVENT(&t.events, "the event (default: the first set's first event)"),
		OPT_SET_INT('i', "images", &level, PSET_IMAGES, "one row per image"),
		OPT_STRING('p', "procedure", &o.procedure, "NAME",
			   "one row per instruction of NAME (NAME@IMAGE, 0xADDR)"),
		TOOL_OPT_NORM(&o.norm, 0, "total (default: shares of each side's samples) or period\n"
			      "(samples times sampling period: for runs of the same work)"),
		OPT_BOOL('a', "all", &all, "show every row, also those within noise below 0.1%"),
		OPT_U64('n', "rows", &rows, "N", "print the first N rows only", 1, UINT32_MAX,
			"number of rows"),
		OPT_CHOICE(0, "sort", &sort, "ORDER", "verdict (default) or address", orders, "order"),
		OPT_DOUBLE(0, "alpha", &o.alpha, "Q", "false discovery rate (default 0.05)", 0,
			   "significance level"),
		OPT_DOUBLE(0, "min-ratio", &o.min_ratio, "R", "a change must be at least this factor (default 1.10)",
			   0, "minimum ratio"),
		OPT_DOUBLE(0, "min-delta", &o.min_delta, "P", "... and at least P share points (default 0.10)",
			   0, "minimum delta"),
		OPT_BOOL(0, "swap", &swap, "exchange A and B"),
		TOOL_OPTS_BINARIES(&t),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("A, B", "a set: an epoch of the -d database (number, label, latest,\n"
			     "latest~N), a database directory (all its epochs summed)\n"
			     "or DIR:EPOCH"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidiff [options] A B [PROCEDURE]\n"
			 "dcpidiff [options] A1 A2 ... -- B1 B2 ...",
		.about = "Compares two profiles per procedure (or image, or, with a procedure named, per\n"
			 "instruction), each side normalised by its total samples, and says which\n"
			 "differences are real and which are within noise.  One set per side: counts are\n"
			 "tested as Poisson samples; several sets per side: against the run-to-run variance.",
		.options = options,
		.flags = CLI_IN_ORDER,
		.arg = add_arg,
		.ctx = &a,
	};

	a.pos = xcalloc((size_t)argc + 1, sizeof(*a.pos));
	tool_start(&t, argc, argv, &cmd, 0);
	if (t.events.n)
		o.event = t.events.v[0];
	o.level = (enum pset_level)level;
	split_sets(&a, &o, &cmd);
	if ((sets = tool_open_sets(&t, a.pos, a.n_a + a.n_b)) &&
	    !diff_build(&d, sets, a.n_a, sets + a.n_a, a.n_b, &o)) {
		r = report(&d, swap, sort, all, rows);
		diff_release(&d);
	} else {
		r = -1;
	}
	free(a.pos);
	return tool_finish(&t, r);
}
