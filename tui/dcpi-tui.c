/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-tui - the interactive workbench: epochs, images, procedures,
 * annotated blocks and diffs of a dcpi database.
 */
#include "config.h"

#include "core/cli.h"
#include "core/die.h"
#include "core/event.h"
#include "tui/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --substitute-path arguments, in order (they live as long as argv). */
static const char *substitutions[64];

static int add_substitution(const struct cli_option *o, const char *spec)
{
	struct tui_options *opt = o->value;

	if (!strchr(spec, '=') || spec[0] == '=')
		return errorf("bad substitution '%s' (want FROM=TO)", spec);
	if (opt->n_substitutions == sizeof(substitutions) / sizeof(*substitutions))
		return errorf("too many --substitute-path options");
	substitutions[opt->n_substitutions++] = spec;
	opt->substitutions = substitutions;
	return 0;
}

static void parse_options(int argc, char **argv, struct tui_options *opt)
{
	struct cli_events event = { .n = 0 };
	const char *env;
	int first;
	const struct cli_option options[] = {
		OPT_DB(&opt->db_path),
		OPT_STRING('E', "epoch", &opt->epoch, "EPOCH",
			   "start in this epoch (number, label, latest~N; default latest)"),
		OPT_EVENT(&event, "show this event first (default cycles, else clock, ...)"),
		OPT_FORCE(&opt->force),
		OPT_DEBUG_DIR(&opt->debug_dir),
		OPT_CALLBACK(0, "substitute-path", opt, "FROM=TO",
			     "look for sources under FROM in TO (repeatable)", add_substitution),
		OPT_BOOL(0, "ascii", &opt->ascii, "draw with ASCII only"),
		OPT_BOOL(0, "no-color", &opt->no_color, "no colours (also when $NO_COLOR is set)"),
		OPT_STRING(0, "script", &opt->script, "FILE",
			   "read keys and commands from FILE and draw to /dev/null\n"
			   "(also $DCPI_TUI_SCRIPT); see dcpi-tui(1)"),
		OPT_ARGUMENT("DIR", "the database, as -d"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpi-tui [-d DIR] [-E EPOCH] [-e EVENT] [--force] [--debug-dir DIR]\n"
			 "         [--substitute-path FROM=TO] [--ascii] [--no-color] [--script FILE]\n"
			 "         [DIR]",
		.about = "The workbench: epochs, images, procedures, annotated blocks and diffs of a\n"
			 "dcpi database.",
		.options = options,
		.footer = "Press ? in dcpi-tui for its keys and commands.",
		.max_args = 1,
	};

	if ((env = getenv("NO_COLOR")) && *env)
		opt->no_color = true;
	if ((env = getenv("DCPI_TUI_SCRIPT")) && *env)
		opt->script = env;
	if ((env = getenv("DCPI_TUI_THREADS")) && !strcmp(env, "0"))
		opt->sync_jobs = true;
	if ((env = getenv("DCPI_TUI_TIMING")) && *env)
		opt->timing = env;
	first = cli_parse(argc, argv, &cmd);
	if (first < argc && opt->db_path)
		cli_usage_error(&cmd, NULL);
	if (first < argc)
		opt->db_path = argv[first];
	opt->event = event.n ? (int)event.v[0] : -1;
}

int main(int argc, char **argv)
{
	struct tui_options opt = { 0 };
	struct tui t;
	int status;

	cli_init(argc, argv);
	/* readline is GPL-3+: dcpi-tui as linked is covered by the GPL version 3 or later */
	cli_license = "GPL-3.0-or-later: GNU GPL version 3 or later (dcpi is GPL-2.0-or-later; readline is GPL-3+)";
	parse_options(argc, argv, &opt);
	if (tui_init(&t, &opt)) {
		tui_release(&t);
		return 1;
	}
	status = tui_run(&t);
	tui_release(&t);
	return status;
}
