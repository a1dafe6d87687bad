/*
 * dcpilist - one procedure's instructions with their samples per event,
 * source lines interleaved with --source.  The listing comes from
 * analysis/listing.h, which dcpi-tui and dcpicalc share.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "analysis/valprof.h"
#include "core/cli.h"
#include "core/die.h"
#include "disasm/srcfile.h"

static const char usage[] =
	"usage: dcpilist [-d DIR] [-E EPOCH] [-e EVENT[,EVENT...]] [--source] [--blocks] [--values]\n"
	"                [--substitute-path FROM=TO] [--force] [--json] PROCEDURE [IMAGE]\n"
	"\n"
	"The instructions of a procedure with their samples per event.\n"
	"\n"
	"  -d, --db DIR        the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH   number, label, latest (default) or latest~N\n"
	"  -e, --event LIST    the events to show (default: all)\n"
	"  -S, --source        interleave source lines (DWARF)\n"
	"  -b, --blocks        mark basic blocks with their frequency class and edges\n"
	"  -V, --values        each instruction's most common values: the registers it\n"
	"                      writes, the address it loads or stores (dcpirun --values)\n"
	"      --substitute-path FROM=TO\n"
	"                      look for sources under FROM in TO (repeatable)\n"
	"      --force         use a binary that changed since it was profiled\n"
	"      --debug-dir DIR where separate debug files are (default /usr/lib/debug)\n"
	"      --json          the same data as JSON, with blocks and edges\n"
	"  PROCEDURE           NAME, NAME@IMAGE, 0xADDRESS or 0xADDRESS@IMAGE\n"
	"  IMAGE               look only in this image (a path, a file name or a key)\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_SUBST };

struct args {
	const char *db, *epoch, *debug_dir;
	enum dcpi_event events[EVENT__COUNT];
	size_t n_events;
	bool json, force, source, blocks, values;
	struct srcfiles src;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "event", required_argument, NULL, 'e' },
		{ "source", no_argument, NULL, 'S' },
		{ "blocks", no_argument, NULL, 'b' },
		{ "values", no_argument, NULL, 'V' },
		{ "substitute-path", required_argument, NULL, OPT_SUBST },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:E:e:SbV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'e':
			if (epoch_view_parse_events(optarg, a->events, &a->n_events))
				exit(1);
			break;
		case 'S': a->source = true; break;
		case 'b': a->blocks = true; break;
		case 'V': a->values = true; break;
		case OPT_SUBST:
			if (srcfiles_add_subst(&a->src, optarg))
				die("bad substitution '%s' (want FROM=TO)", optarg);
			break;
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_JSON: a->json = true; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		cli_usage(usage, 1);
}

static int list(struct epoch_view *view, struct args *a, const char *spec, const char *image)
{
	struct listing_opts lo = LISTING_OPTS_INIT;
	unsigned flags = (a->source ? LISTING_SOURCE : 0) | (a->blocks ? LISTING_BLOCKS : 0);
	struct proc_ref ref;
	struct listing l;
	struct valprof vp;
	int r;

	if (proc_lookup(view, spec, image, &ref))
		return -1;
	lo.events = a->n_events ? a->events : NULL;
	lo.n_events = a->n_events;
	lo.source = a->source;
	lo.src = &a->src;
	if (listing_build(&l, view, &ref, &lo))
		return -1;
	if (a->values) {
		valprof_build(&vp, &l, epoch_view_values(view, ref.image));
		if (!vp.present)
			warning("the epoch has no value profile of this image (record with --values)");
		l.values = &vp;
	}
	r = a->json ? listing_print_json(&l, stdout, flags) : listing_print_text(&l, stdout, flags);
	if (r)
		errorf("cannot write the listing: write error");
	if (a->values)
		valprof_release(&vp);
	listing_release(&l);
	return r;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct epoch_view_opts vo = { 0 };
	struct epoch_view view;
	struct db *db;
	int r = 1;

	cli_init(argc, argv);
	srcfiles_init(&a.src);
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		r = list(&view, &a, argv[optind], argc - optind > 1 ? argv[optind + 1] : NULL) ? 1 : 0;
		epoch_view_release(&view);
	}
	srcfiles_release(&a.src);
	db_close(db);
	/* damaged files were reported (and skipped): the report is incomplete */
	return r || error_count() ? 1 : 0;
}
