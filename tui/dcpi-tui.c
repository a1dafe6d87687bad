/*
 * dcpi-tui - the interactive workbench: epochs, images and (as the analysis
 * lands) procedures, annotated blocks and diffs of a dcpi database.
 */
#include "config.h"

#include "core/cli.h"
#include "core/die.h"
#include "core/event.h"
#include "tui/tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: dcpi-tui [-d DIR] [-E EPOCH] [-e EVENT] [--force] [--debug-dir DIR]\n"
	"                [--substitute-path FROM=TO] [--ascii] [--no-color] [--script FILE]\n"
	"                [DIR]\n"
	"\n"
	"  -d, --db DIR       the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH  start in this epoch (number, label, latest~N; default latest)\n"
	"  -e, --event NAME   show this event first (default cycles, else clock, ...)\n"
	"      --force        use binaries that changed since they were profiled (:force)\n"
	"      --debug-dir DIR\n"
	"                     where separate debug files are (default /usr/lib/debug)\n"
	"      --substitute-path FROM=TO\n"
	"                     look for sources under FROM in TO (repeatable)\n"
	"      --ascii        draw with ASCII only\n"
	"      --no-color     no colours (also when $NO_COLOR is set)\n"
	"      --script FILE  read keys and commands from FILE and draw to /dev/null\n"
	"                     (also $DCPI_TUI_SCRIPT); see dcpi-tui(1)\n"
	"      --help, --version\n"
	"\n"
	"Press ? in dcpi-tui for its keys and commands.\n";

enum {
	OPT_ASCII = CLI_OPT__FIRST_FREE, OPT_NO_COLOR, OPT_SCRIPT, OPT_FORCE, OPT_DEBUG_DIR,
	OPT_SUBST,
};

static const struct option longopts[] = {
	CLI_LONGOPTS_COMMON,
	{ "db", required_argument, NULL, 'd' },
	{ "epoch", required_argument, NULL, 'E' },
	{ "event", required_argument, NULL, 'e' },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "script", required_argument, NULL, OPT_SCRIPT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "substitute-path", required_argument, NULL, OPT_SUBST },
	{ NULL, 0, NULL, 0 },
};

/* --substitute-path arguments, in order (they live as long as argv). */
static const char *substitutions[64];

static void add_substitution(struct tui_options *opt, const char *spec)
{
	if (!strchr(spec, '=') || spec[0] == '=')
		die("bad substitution '%s' (want FROM=TO)", spec);
	if (opt->n_substitutions == sizeof(substitutions) / sizeof(*substitutions))
		die("too many --substitute-path options");
	substitutions[opt->n_substitutions++] = spec;
	opt->substitutions = substitutions;
}

static void parse_options(int argc, char **argv, struct tui_options *opt)
{
	const char *env;
	int c;

	if ((env = getenv("NO_COLOR")) && *env)
		opt->no_color = true;
	if ((env = getenv("DCPI_TUI_SCRIPT")) && *env)
		opt->script = env;
	if ((env = getenv("DCPI_TUI_THREADS")) && !strcmp(env, "0"))
		opt->sync_jobs = true;
	if ((env = getenv("DCPI_TUI_TIMING")) && *env)
		opt->timing = env;
	while ((c = getopt_long(argc, argv, "d:E:e:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': opt->db_path = optarg; break;
		case 'E': opt->epoch = optarg; break;
		case 'e': opt->event = optarg; break;
		case OPT_ASCII: opt->ascii = true; break;
		case OPT_NO_COLOR: opt->no_color = true; break;
		case OPT_SCRIPT: opt->script = optarg; break;
		case OPT_FORCE: opt->force = true; break;
		case OPT_DEBUG_DIR: opt->debug_dir = optarg; break;
		case OPT_SUBST: add_substitution(opt, optarg); break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (optind < argc && !opt->db_path)
		opt->db_path = argv[optind++];
	if (optind < argc)
		cli_usage(usage, 1);
	if (opt->event && event_lookup(opt->event) < 0)
		die("unknown event '%s'", opt->event);
}

int main(int argc, char **argv)
{
	struct tui_options opt = { 0 };
	struct tui t;
	int status;

	cli_init(argc, argv);
	parse_options(argc, argv, &opt);
	if (tui_init(&t, &opt)) {
		tui_release(&t);
		return 1;
	}
	status = tui_run(&t);
	tui_release(&t);
	return status;
}
