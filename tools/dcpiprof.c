/*
 * dcpiprof - samples per procedure (or per image) of an epoch, as seed 001
 * Figure 1.  The rows come from analysis/procprof.h, which dcpi-tui
 * shares.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/procprof.h"
#include "core/cli.h"
#include "core/die.h"

static const char usage[] =
	"usage: dcpiprof [-d DIR] [-E EPOCH] [-e EVENT[,EVENT...]] [-i] [-n ROWS]\n"
	"                [--by image|comm|pid|tgid] [--force] [--json] [IMAGE...]\n"
	"\n"
	"Samples per procedure of an epoch, sorted by the first event, with a (samples, %)\n"
	"column pair per event and the cumulative percentage.\n"
	"\n"
	"  -d, --db DIR        the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH   number, label, latest (default) or latest~N\n"
	"  -e, --event LIST    the events to show, first one sorts (default: all)\n"
	"  -i, --images        one row per image instead of per procedure\n"
	"      --by WHAT       image (default), or also per process name (comm), thread (pid)\n"
	"                      or process (tgid): needs an epoch recorded with -g or --threads\n"
	"  -n, --rows N        print the first N rows only\n"
	"      --force         name procedures of binaries that changed since profiling\n"
	"      --debug-dir DIR where separate debug files are (default /usr/lib/debug)\n"
	"      --json          the same data as JSON\n"
	"  IMAGE               only these images (a path, a file name or an image key)\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_BY };

struct args {
	const char *db, *epoch, *debug_dir;
	enum dcpi_event events[EVENT__COUNT];
	size_t n_events;
	bool by_image, json, force;
	enum procprof_by by;
	uint64_t rows;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "event", required_argument, NULL, 'e' },
		{ "images", no_argument, NULL, 'i' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "rows", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:E:e:in:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'e':
			if (epoch_view_parse_events(optarg, a->events, &a->n_events))
				exit(1);
			break;
		case 'i': a->by_image = true; break;
		case 'n':
			if (cli_parse_range(optarg, 1, UINT32_MAX, &a->rows))
				die("bad number of rows '%s'", optarg);
			break;
		case OPT_BY: {
			int by = procprof_by_lookup(optarg);

			if (by < 0)
				die("bad --by '%s' (image, comm, pid or tgid)", optarg);
			a->by = (enum procprof_by)by;
			break;
		}
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_JSON: a->json = true; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct epoch_view_opts vo = { 0 };
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct epoch_view view;
	struct procprof pp;
	struct db *db;
	int r = 1;

	cli_init(argc, argv);
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	po.by_image = a.by_image;
	po.by = a.by;
	po.events = a.n_events ? a.events : NULL;
	po.n_events = a.n_events;
	po.images = (const char *const *)argv + optind;
	po.n_images = (size_t)(argc - optind);
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		if (!procprof_build(&pp, &view, &po)) {
			r = a.json ? procprof_print_json(&pp, stdout, a.rows)
				   : procprof_print_text(&pp, stdout, a.rows);
			if (r)
				errorf("cannot write the report: write error");
			r = r ? 1 : 0;
			procprof_release(&pp);
		}
		epoch_view_release(&view);
	}
	db_close(db);
	/* damaged files were reported (and skipped): the report is incomplete */
	return r || error_count() ? 1 : 0;
}
