/*
 * dcpiexport - an epoch's stacks for the tools people already use: pprof's
 * gzipped profile.proto (go tool pprof, Pyroscope, Parca) or folded stacks
 * (flamegraph.pl, speedscope).  A thin main over analysis/export.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"

static const char usage[] =
	"usage: dcpiexport [-d DIR] [-E EPOCH] [-e EVENT] -f pprof|folded [-o FILE]\n"
	"                  [--comm NAME] [--tgid N] [--pid N]\n"
	"\n"
	"Writes the stacks of an epoch recorded with dcpirun -g or dcpid -g in another\n"
	"tool's format: pprof (gzipped profile.proto, for go tool pprof, Pyroscope, Parca)\n"
	"or folded stacks (flamegraph.pl, speedscope).\n"
	"\n"
	"  -d, --db DIR        the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH   number, label, latest (default) or latest~N\n"
	"  -e, --event EVENT   the event (default: the epoch's first)\n"
	"  -f, --format FMT    pprof or folded\n"
	"  -o, --output FILE   write there (default: standard output; pprof needs a file\n"
	"                      or a pipe, not a terminal)\n"
	"      --comm NAME     only the samples of processes named NAME\n"
	"      --tgid N        only the samples of process N\n"
	"      --pid N         only the samples of thread N\n"
	"      --force         name procedures of binaries that changed since profiling\n"
	"      --debug-dir DIR where separate debug files are (default /usr/lib/debug)\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_COMM, OPT_TGID, OPT_PID };
enum format { FMT_NONE, FMT_PPROF, FMT_FOLDED };

struct args {
	const char *db, *epoch, *event, *output, *debug_dir, *comm;
	enum format format;
	uint64_t tgid, tid;
	bool force;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "event", required_argument, NULL, 'e' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "tgid", required_argument, NULL, OPT_TGID },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:E:e:f:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'e': a->event = optarg; break;
		case 'f':
			if (!strcmp(optarg, "pprof"))
				a->format = FMT_PPROF;
			else if (!strcmp(optarg, "folded"))
				a->format = FMT_FOLDED;
			else
				die("unknown format '%s' (pprof or folded)", optarg);
			break;
		case 'o': a->output = optarg; break;
		case OPT_COMM: a->comm = optarg; break;
		case OPT_TGID:
		case OPT_PID:
			if (cli_parse_range(optarg, 1, UINT32_MAX, c == OPT_PID ? &a->tid : &a->tgid))
				die("bad %s '%s'", c == OPT_PID ? "--pid" : "--tgid", optarg);
			break;
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (optind < argc)
		cli_usage(usage, 1);
	if (a->format == FMT_NONE)
		die("no format (-f pprof or -f folded)");
	if (a->format == FMT_PPROF && !a->output && isatty(STDOUT_FILENO))
		die("pprof output is binary: give -o FILE or redirect it");
}

static int event_of(struct epoch_view *v, const char *name, enum dcpi_event *ev)
{
	enum dcpi_event evs[EVENT__COUNT];
	size_t n = 0;

	if (!name) {
		*ev = v->n_events ? v->events[0] : EVENT_CYCLES;
		return 0;
	}
	if (epoch_view_parse_events(name, evs, &n))
		return -1;
	if (n != 1)
		return errorf("-e takes one event");
	*ev = evs[0];
	return 0;
}

static int write_out(const struct args *a, const struct stack_view *sv, const struct export_opts *o)
{
	FILE *out = stdout;
	struct strbuf sb = STRBUF_INIT;
	int r;

	if (a->output && !(out = fopen(a->output, "we")))
		return errorf_errno("cannot create '%s'", a->output);
	if (a->format == FMT_FOLDED) {
		r = export_folded(sv, o, out);
	} else {
		r = export_pprof(sv, o, &sb);
		if (!r && fwrite(sb.buf, 1, sb.len, out) != sb.len)
			r = -1;
	}
	if ((out != stdout ? fclose(out) : fflush(out)) || r)
		r = r ? r : -1;
	if (r)
		errorf("cannot write '%s'", a->output ? a->output : "standard output");
	strbuf_release(&sb);
	return r;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct epoch_view_opts vo = { 0 };
	struct export_opts eo = { EVENT_CYCLES, 0, 0, NULL };
	struct epoch_view view;
	struct stack_view sv;
	struct db *db;
	int r = 1, s;

	cli_init(argc, argv);
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	eo.comm = a.comm;
	eo.tgid = (uint32_t)a.tgid;
	eo.tid = (uint32_t)a.tid;
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		if ((s = stack_view_open(&sv, &view)) == 1)
			errorf("epoch %" PRIu32 " has no stacks (record with dcpirun -g or dcpid -g)",
			       view.seq);
		if (!s) {
			if (!event_of(&view, a.event, &eo.event))
				r = write_out(&a, &sv, &eo) ? 1 : 0;
			stack_view_release(&sv);
		}
		epoch_view_release(&view);
	}
	db_close(db);
	return r || error_count() ? 1 : 0;
}
