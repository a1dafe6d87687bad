/*
 * dcpistats - how much procedures vary across sets of samples (several
 * runs, several machines), as seed 001 Figure 3.  Sets and rows come from
 * analysis/pset.h, the statistics from analysis/setstats.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/setstats.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/utf8.h"
#include "core/xalloc.h"

static const char usage[] =
	"usage: dcpistats [-d DIR] [-e EVENT] [-i | -I | -p PROCEDURE] [-N MODE] [-n ROWS]\n"
	"                 [--force] [--json] SET...\n"
	"\n"
	"Statistics of each procedure's samples across sets (runs, machines): range%,\n"
	"sum, sum%, N, mean, std-dev, min and max, sorted by range% (max - min over sum).\n"
	"\n"
	"A SET is an epoch of the -d database (number, label, latest, latest~N), a\n"
	"database directory (all its epochs summed) or DIR:EPOCH.\n"
	"\n"
	"  -d, --db DIR           the database epochs are named in (default: $DCPI_DB,\n"
	"                         else ./dcpi.db)\n"
	"  -e, --event EVENT      the event (default: the first set's first event)\n"
	"  -i, --images           one row per image\n"
	"  -I, --instructions     one row per sampled instruction\n"
	"  -p, --procedure NAME   one row per instruction of this procedure\n"
	"  -N, --normalize MODE   scale each set's counts: total (to the mean total),\n"
	"                         period (to the mean sampling period) or none (default)\n"
	"  -n, --rows N           print the first N rows only\n"
	"      --all              also rows below 0.1% of all samples (left out by\n"
	"                         default: one or two samples make a range% of 100)\n"
	"      --force            name procedures of binaries that changed since profiling\n"
	"      --debug-dir DIR    where separate debug files are (default /usr/lib/debug)\n"
	"      --json             the same data as JSON\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_ALL };

struct args {
	struct pset_ctx ctx;
	struct setstats_opts o;
	bool json;
	uint64_t rows;
};

static void parse_norm(const char *arg, struct setstats_opts *o)
{
	int n = pset_norm_lookup(arg);

	if (n < 0) {
		char *safe = display_safe(arg);

		die("unknown normalisation '%s' (none, total or period)", safe);
	}
	o->norm = (enum pset_norm)n;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "images", no_argument, NULL, 'i' },
		{ "instructions", no_argument, NULL, 'I' },
		{ "procedure", required_argument, NULL, 'p' },
		{ "normalize", required_argument, NULL, 'N' },
		{ "rows", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	int c, ev;

	while ((c = getopt_long(argc, argv, "d:e:iIp:N:n:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->ctx.db_path = optarg; break;
		case 'e':
			if ((ev = event_lookup(optarg)) < 0) {
				char *safe = display_safe(optarg);

				die("unknown event '%s'", safe);
			}
			a->o.event = (enum dcpi_event)ev;
			break;
		case 'i': a->o.level = PSET_IMAGES; break;
		case 'I': a->o.level = PSET_INSTRUCTIONS; break;
		case 'p': a->o.procedure = optarg; break;
		case 'N': parse_norm(optarg, &a->o); break;
		case 'n':
			if (cli_parse_range(optarg, 1, UINT32_MAX, &a->rows))
				die("bad number of rows '%s'", optarg);
			break;
		case OPT_ALL: a->o.min_sum_pct = 0; break;
		case OPT_FORCE: a->ctx.view_opts.force = true; break;
		case OPT_DEBUG_DIR: a->ctx.view_opts.debug_dir = optarg; break;
		case CLI_OPT_JSON: a->json = true; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (optind >= argc) {
		errorf("no set given");
		cli_usage(usage, 1);
	}
}

int main(int argc, char **argv)
{
	struct args a = { PSET_CTX_INIT, SETSTATS_OPTS_INIT, false, 0 };
	struct pset *sets, **ptrs;
	struct setstats st;
	size_t n, opened = 0;
	int r = 1;

	cli_init(argc, argv);
	parse_args(argc, argv, &a);
	n = (size_t)(argc - optind);
	sets = xcalloc(n, sizeof(*sets));
	ptrs = xcalloc(n, sizeof(*ptrs));
	for (; opened < n; opened++) {
		if (pset_open(&sets[opened], &a.ctx, argv[optind + opened]))
			break;
		ptrs[opened] = &sets[opened];
	}
	if (opened == n && !setstats_build(&st, ptrs, n, &a.o)) {
		r = a.json ? setstats_print_json(&st, stdout, a.rows)
			   : setstats_print_text(&st, stdout, a.rows);
		if (r)
			errorf("cannot write the report: write error");
		r = r ? 1 : 0;
		setstats_release(&st);
	}
	while (opened-- > 0)
		pset_release(&sets[opened]);
	pset_ctx_release(&a.ctx);
	free(sets);
	free(ptrs);
	return r || error_count() ? 1 : 0;
}
