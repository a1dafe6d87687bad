/*
 * dcpicalc - per-instruction execution frequency, CPI, stall bubbles and
 * culprits of procedures, estimated from their samples (seed 001, Figures
 * 2 and 4).  The analysis and its output come from analysis/calc.h,
 * which dcpi-tui shares.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calc.h"
#include "analysis/lookup.h"
#include "analysis/procprof.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "disasm/srcfile.h"

static const char usage[] =
	"usage: dcpicalc [-d DIR] [-E EPOCH] [--image PATH] [--summary] [--dot] [--json]\n"
	"                [--schedule loop|cold|pred|auto] [--flow] [--mhz MHZ]\n"
	"                [--period-cycles N] [--skid N] [-S] [--values] [--force] [PROCEDURE...]\n"
	"\n"
	"Estimates how often each instruction of a procedure ran, its cycles per\n"
	"execution and why it stalled, from the samples alone, and prints the\n"
	"instructions with stall bubbles and culprits (or a summary, a graph, JSON).\n"
	"\n"
	"  -d, --db DIR          the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH     number, label, latest (default) or latest~N\n"
	"  -i, --image PATH      look for procedures in this image only; without a\n"
	"                        PROCEDURE: every procedure of it that has samples\n"
	"  -s, --summary         the summary of each procedure (where the cycles went)\n"
	"      --dot             the annotated control-flow graph for Graphviz\n"
	"      --json            everything as JSON\n"
	"      --schedule MODE   what a block's schedule assumes before it: loop (default:\n"
	"                        self-loops steady, the rest cold), cold, pred, auto\n"
	"      --flow            correct the frequencies globally so that they conserve\n"
	"                        flow (min-cost flow; off by default, see dcpicalc(1))\n"
	"      --mhz MHZ         clock rate for clock samples (default: the epoch's)\n"
	"      --period-cycles N cycles per time sample (overrides --mhz)\n"
	"      --skid N          instructions a sample lands after the one it measures\n"
	"                        (default 1: timer and non-precise sampling)\n"
	"  -n, --min-samples N   with --image: procedures with at least N samples (1)\n"
	"  -S, --source          interleave source lines (DWARF)\n"
	"  -V, --values          each instruction's most common values: the registers it\n"
	"                        writes, the address it loads or stores (dcpirun --values)\n"
	"      --force           use a binary that changed since it was profiled\n"
	"      --debug-dir DIR   where separate debug files are (default /usr/lib/debug)\n"
	"  PROCEDURE             NAME, NAME@IMAGE, 0xADDRESS or 0xADDRESS@IMAGE\n";

enum {
	OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_DOT, OPT_SCHED, OPT_FLOW, OPT_MHZ,
	OPT_PERIOD, OPT_SKID
};

enum output { OUT_TEXT, OUT_SUMMARY, OUT_DOT, OUT_JSON };

struct args {
	const char *db, *epoch, *debug_dir, *image;
	enum output out;
	bool force;
	uint64_t min_samples;
	struct calc_opts co;
	struct srcfiles src;
};

static double parse_double(const char *opt, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < min)
		die("bad value '%s' for %s", s, opt);
	return v;
}

static void parse_sched(const char *s, struct calc_opts *co)
{
	static const struct { const char *name; enum calc_sched v; } modes[] = {
		{ "auto", CALC_SCHED_AUTO }, { "cold", CALC_SCHED_COLD },
		{ "pred", CALC_SCHED_PRED }, { "loop", CALC_SCHED_LOOP },
	};

	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
		if (!strcmp(s, modes[k].name)) {
			co->sched = modes[k].v;
			return;
		}
	die("bad schedule '%s' (want auto, cold, pred or loop)", s);
}

static void set_output(struct args *a, enum output o)
{
	if (a->out != OUT_TEXT && a->out != o)
		die("--summary, --dot and --json exclude each other");
	a->out = o;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "image", required_argument, NULL, 'i' },
		{ "summary", no_argument, NULL, 's' },
		{ "dot", no_argument, NULL, OPT_DOT },
		{ "schedule", required_argument, NULL, OPT_SCHED },
		{ "flow", no_argument, NULL, OPT_FLOW },
		{ "mhz", required_argument, NULL, OPT_MHZ },
		{ "period-cycles", required_argument, NULL, OPT_PERIOD },
		{ "skid", required_argument, NULL, OPT_SKID },
		{ "min-samples", required_argument, NULL, 'n' },
		{ "source", no_argument, NULL, 'S' },
		{ "values", no_argument, NULL, 'V' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "d:E:i:sn:SV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'i': a->image = optarg; break;
		case 's': set_output(a, OUT_SUMMARY); break;
		case OPT_DOT: set_output(a, OUT_DOT); break;
		case CLI_OPT_JSON: set_output(a, OUT_JSON); break;
		case OPT_SCHED: parse_sched(optarg, &a->co); break;
		case OPT_FLOW: a->co.flow = true; break;
		case OPT_MHZ: a->co.mhz = parse_double("--mhz", optarg, 1); break;
		case OPT_PERIOD: a->co.period_cycles = parse_double("--period-cycles", optarg, 1); break;
		case OPT_SKID:
			if (cli_parse_range(optarg, 0, 1, &v))
				die("bad skid '%s' (want 0 or 1)", optarg);
			a->co.skid = (int)v;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &a->min_samples))
				die("bad sample count '%s'", optarg);
			break;
		case 'S': a->co.source = true; break;
		case 'V': a->co.values = true; break;
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (argc == optind && !a->image)
		cli_usage(usage, 1);
}

/* ---- output ------------------------------------------------------------------- */

struct out {
	struct args *a;
	struct json_writer jw;
	size_t done;
};

static int emit(struct out *o, const struct calc *c)
{
	struct strbuf sb = STRBUF_INIT;
	int r = 0;

	switch (o->a->out) {
	case OUT_TEXT:
		if (o->done)
			putchar('\n');
		r = calc_print_text(c, stdout);
		break;
	case OUT_SUMMARY: {
		struct calc_lines l;

		if (o->done)
			putchar('\n');
		calc_render(c, &l, 0);
		for (size_t k = 0; k < l.n && l.v[k].kind == CALC_LINE_HEADER; k++)
			puts(l.v[k].text);
		calc_lines_release(&l);
		calc_summary_text(c, &sb);
		fputs(sb.buf, stdout);
		break;
	}
	case OUT_DOT:
		r = calc_print_dot(c, stdout);
		break;
	case OUT_JSON:
		calc_json(c, &o->jw);
		break;
	}
	strbuf_release(&sb);
	o->done++;
	return r;
}

static int one(struct epoch_view *view, struct out *o, const struct proc_ref *ref)
{
	struct calc c;
	int r;

	o->a->co.src = &o->a->src;
	if (calc_build(&c, view, ref, &o->a->co))
		return -1;
	r = emit(o, &c);
	calc_release(&c);
	return r;
}

static int by_name(struct epoch_view *view, struct out *o, const char *spec)
{
	struct proc_ref ref;

	if (proc_lookup(view, spec, o->a->image, &ref))
		return -1;
	return one(view, o, &ref);
}

/* Every procedure of the --image with samples, hottest first. */
static int whole_image(struct epoch_view *view, struct out *o)
{
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct procprof pp;
	const char *images[1] = { o->a->image };
	int r = 0;
	size_t n = 0;

	po.images = images;
	po.n_images = 1;
	if (procprof_build(&pp, view, &po))
		return -1;
	for (size_t k = 0; k < pp.n_rows; k++) {
		const struct procprof_row *row = &pp.rows[k];
		struct proc_ref ref = { row->image, row->proc };
		uint64_t s = 0;

		for (size_t e = 0; e < pp.n_events; e++)
			if (event_is_time(pp.events[e]))
				s += row->samples[pp.events[e]];
		if (!row->proc || s < (o->a->min_samples ? o->a->min_samples : 1))
			continue;
		n++;
		if (one(view, o, &ref))
			r = -1;
	}
	if (!n && !error_count())
		warning("no procedure of '%s' has samples in this epoch", o->a->image);
	procprof_release(&pp);
	return r;
}

static int run(struct epoch_view *view, struct args *a, int argc, char **argv)
{
	struct out o = { a, { 0 }, 0 };
	int r = 0;

	if (a->out == OUT_JSON) {
		json_init(&o.jw, stdout, true);
		json_object_begin(&o.jw);
		json_key(&o.jw, "epoch");
		json_u64(&o.jw, view->seq);
		json_key(&o.jw, "procedures");
		json_array_begin(&o.jw);
	}
	if (optind == argc)
		r = whole_image(view, &o);
	for (int k = optind; k < argc; k++)
		if (by_name(view, &o, argv[k]))
			r = -1;
	if (a->out == OUT_JSON) {
		json_array_end(&o.jw);
		json_object_end(&o.jw);
		if (json_finish(&o.jw))
			r = errorf("cannot write the report: write error");
	}
	if (fflush(stdout) || ferror(stdout))
		r = errorf("cannot write the report: write error");
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
	a.co = (struct calc_opts)CALC_OPTS_INIT;
	srcfiles_init(&a.src);
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		r = run(&view, &a, argc, argv) ? 1 : 0;
		epoch_view_release(&view);
	}
	srcfiles_release(&a.src);
	db_close(db);
	return r || error_count() ? 1 : 0;
}
