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
	"usage: dcpi-tui [-d DIR] [-E EPOCH] [-e EVENT] [--ascii] [--no-color]\n"
	"                [--script FILE] [DIR]\n"
	"\n"
	"  -d, --db DIR       the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH  start in this epoch (number, label, latest~N; default latest)\n"
	"  -e, --event NAME   show this event first (default cycles, else clock, ...)\n"
	"      --ascii        draw with ASCII only\n"
	"      --no-color     no colours (also when $NO_COLOR is set)\n"
	"      --script FILE  read keys and commands from FILE and draw to /dev/null\n"
	"                     (also $DCPI_TUI_SCRIPT); see dcpi-tui(1)\n"
	"      --help, --version\n"
	"\n"
	"Press ? in dcpi-tui for its keys and commands.\n";

enum { OPT_ASCII = CLI_OPT__FIRST_FREE, OPT_NO_COLOR, OPT_SCRIPT };

static const struct option longopts[] = {
	CLI_LONGOPTS_COMMON,
	{ "db", required_argument, NULL, 'd' },
	{ "epoch", required_argument, NULL, 'E' },
	{ "event", required_argument, NULL, 'e' },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "script", required_argument, NULL, OPT_SCRIPT },
	{ NULL, 0, NULL, 0 },
};

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
