/*
 * dcpidiff - two profiles compared, with noise told apart from change.
 * The engine is analysis/diff.h, which dcpi-tui's diff views share.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/utf8.h"
#include "core/xalloc.h"

static const char usage[] =
	"usage: dcpidiff [options] A B [PROCEDURE]\n"
	"       dcpidiff [options] A1 A2 ... -- B1 B2 ...\n"
	"\n"
	"Compares two profiles per procedure (or image, or, with a procedure named, per\n"
	"instruction), each side normalised by its total samples, and says which\n"
	"differences are real and which are within noise.  One set per side: counts are\n"
	"tested as Poisson samples; several sets per side: against the run-to-run variance.\n"
	"\n"
	"A set is an epoch of the -d database (number, label, latest, latest~N), a\n"
	"database directory (all its epochs summed) or DIR:EPOCH.\n"
	"\n"
	"  -d, --db DIR           the database epochs are named in (default: $DCPI_DB,\n"
	"                         else ./dcpi.db)\n"
	"  -e, --event EVENT      the event (default: the first set's first event)\n"
	"  -i, --images           one row per image\n"
	"  -p, --procedure NAME   one row per instruction of NAME (NAME@IMAGE, 0xADDR)\n"
	"  -N, --normalize MODE   total (default: shares of each side's samples) or period\n"
	"                         (samples times sampling period: for runs of the same work)\n"
	"  -a, --all              show every row, also those within noise below 0.1%\n"
	"  -n, --rows N           print the first N rows only\n"
	"      --sort ORDER       verdict (default) or address\n"
	"      --alpha Q          false discovery rate (default 0.05)\n"
	"      --min-ratio R      a change must be at least this factor (default 1.10)\n"
	"      --min-delta P      ... and at least P share points (default 0.10)\n"
	"      --swap             exchange A and B\n"
	"      --force            name procedures of binaries that changed since profiling\n"
	"      --debug-dir DIR    where separate debug files are (default /usr/lib/debug)\n"
	"      --json             the same data as JSON (every row)\n";

enum {
	OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_SORT, OPT_ALPHA, OPT_MIN_RATIO,
	OPT_MIN_DELTA, OPT_SWAP
};

struct args {
	struct pset_ctx ctx;
	struct diff_opts o;
	bool json, all, swap, sort_set;
	enum diff_sort sort;
	uint64_t rows;
	char **pos;             /* positional arguments (allocated) */
	size_t n_pos;
	char **a, **b;          /* set arguments of each side */
	size_t n_a, n_b;
};

static double parse_double(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v)) {
		char *safe = display_safe(s);

		die("bad %s '%s'", what, safe);
	}
	return v;
}

static void parse_option(int c, struct args *a)
{
	int v;

	switch (c) {
	case 'd': a->ctx.db_path = optarg; break;
	case 'e':
		if ((v = event_lookup(optarg)) < 0) {
			char *safe = display_safe(optarg);

			die("unknown event '%s'", safe);
		}
		a->o.event = (enum dcpi_event)v;
		break;
	case 'i': a->o.level = PSET_IMAGES; break;
	case 'p': a->o.procedure = optarg; break;
	case 'N':
		if ((v = pset_norm_lookup(optarg)) < 0 || v == PSET_NORM_NONE) {
			char *safe = display_safe(optarg);

			die("unknown normalisation '%s' (total or period)", safe);
		}
		a->o.norm = (enum pset_norm)v;
		break;
	case 'a': a->all = true; break;
	case 'n':
		if (cli_parse_range(optarg, 1, UINT32_MAX, &a->rows))
			die("bad number of rows '%s'", optarg);
		break;
	case OPT_SORT:
		if (strcmp(optarg, "verdict") && strcmp(optarg, "address"))
			die("unknown order '%s' (verdict or address)", optarg);
		a->sort = strcmp(optarg, "address") ? DIFF_SORT_VERDICT : DIFF_SORT_ADDRESS;
		a->sort_set = true;
		break;
	case OPT_ALPHA: a->o.alpha = parse_double(optarg, "significance level"); break;
	case OPT_MIN_RATIO: a->o.min_ratio = parse_double(optarg, "minimum ratio"); break;
	case OPT_MIN_DELTA: a->o.min_delta = parse_double(optarg, "minimum delta"); break;
	case OPT_SWAP: a->swap = true; break;
	case OPT_FORCE: a->ctx.view_opts.force = true; break;
	case OPT_DEBUG_DIR: a->ctx.view_opts.debug_dir = optarg; break;
	case CLI_OPT_JSON: a->json = true; break;
	case CLI_OPT_HELP: cli_usage(usage, 0);
	case CLI_OPT_VERSION: cli_version();
	default: cli_usage(usage, 1);
	}
}

/*
 * Positional arguments come in order (getopt's "-" mode), and a "--" ends
 * a group: "A B [PROCEDURE]", or the sets of A, "--", the sets of B.
 * Options may come anywhere, also after the "--".  A "--" before any set
 * only ends the options.
 */
static void group_args(int argc, char **argv, const struct option *longopts, struct args *a,
		       size_t *sep)
{
	size_t n = 0;
	int c;

	*sep = SIZE_MAX;
	for (;;) {
		while ((c = getopt_long(argc, argv, "-d:e:ip:N:an:", longopts, NULL)) != -1) {
			if (c == 1)
				a->pos[n++] = optarg;
			else
				parse_option(c, a);
		}
		if (optind > argc || strcmp(argv[optind - 1], "--"))
			break;
		if (n && *sep == SIZE_MAX)
			*sep = n;
		else if (n)
			die("more than one '--' between sets");
		if (optind >= argc)
			break;
	}
	for (; optind < argc; optind++)
		a->pos[n++] = argv[optind];
	a->n_pos = n;
}

static void split_sets(struct args *a, size_t sep)
{
	if (sep != SIZE_MAX) {
		a->a = a->pos;
		a->n_a = sep;
		a->b = a->pos + sep;
		a->n_b = a->n_pos - sep;
		return;
	}
	if (a->n_pos == 3 && !a->o.procedure)
		a->o.procedure = a->pos[--a->n_pos];
	if (a->n_pos != 2) {
		errorf("expected A B [PROCEDURE], or A1 A2 ... -- B1 B2 ...");
		cli_usage(usage, 1);
	}
	a->a = a->pos;
	a->b = a->pos + 1;
	a->n_a = a->n_b = 1;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "images", no_argument, NULL, 'i' },
		{ "procedure", required_argument, NULL, 'p' },
		{ "normalize", required_argument, NULL, 'N' },
		{ "all", no_argument, NULL, 'a' },
		{ "rows", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "min-ratio", required_argument, NULL, OPT_MIN_RATIO },
		{ "min-delta", required_argument, NULL, OPT_MIN_DELTA },
		{ "swap", no_argument, NULL, OPT_SWAP },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	size_t sep;

	a->pos = xcalloc((size_t)argc + 1, sizeof(*a->pos));
	group_args(argc, argv, longopts, a, &sep);
	split_sets(a, sep);
	if (!a->n_a || !a->n_b) {
		errorf("each side needs at least one set: A1 A2 ... -- B1 B2 ...");
		cli_usage(usage, 1);
	}
}

static int open_side(struct args *a, char **specs, size_t n, struct pset *sets,
		     struct pset **ptrs, size_t *opened)
{
	for (size_t i = 0; i < n; i++) {
		if (pset_open(&sets[*opened], &a->ctx, specs[i]))
			return -1;
		ptrs[i] = &sets[(*opened)++];
	}
	return 0;
}

static int report(struct args *a, struct diff *d)
{
	int r;

	if (a->swap)
		diff_swap(d);
	if (a->sort_set)
		diff_sort(d, a->sort);
	r = a->json ? diff_print_json(d, stdout, a->rows)
		    : diff_print_text(d, stdout, a->all ? DIFF_PRINT_ALL : 0, a->rows);
	if (r)
		errorf("cannot write the report: write error");
	return r;
}

int main(int argc, char **argv)
{
	struct args a = { .ctx = PSET_CTX_INIT, .o = DIFF_OPTS_INIT };
	struct pset *sets, **pa, **pb;
	size_t opened = 0;
	struct diff d;
	int r = 1;

	cli_init(argc, argv);
	parse_args(argc, argv, &a);
	sets = xcalloc(a.n_a + a.n_b, sizeof(*sets));
	pa = xcalloc(a.n_a, sizeof(*pa));
	pb = xcalloc(a.n_b, sizeof(*pb));
	if (!open_side(&a, a.a, a.n_a, sets, pa, &opened) &&
	    !open_side(&a, a.b, a.n_b, sets, pb, &opened) &&
	    !diff_build(&d, pa, a.n_a, pb, a.n_b, &a.o)) {
		r = report(&a, &d) ? 1 : 0;
		diff_release(&d);
	}
	while (opened-- > 0)
		pset_release(&sets[opened]);
	pset_ctx_release(&a.ctx);
	free(sets);
	free(pa);
	free(pb);
	free(a.pos);
	return r || error_count() ? 1 : 0;
}
