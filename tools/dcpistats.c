/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpistats - how much procedures vary across sets of samples (several
 * runs, several machines), as in Figure 3 of the DCPI paper (Anderson et
 * al., "Continuous Profiling: Where Have All the Cycles Gone?", SOSP
 * 1997).  Sets and rows come from analysis/pset.h, the statistics from
 * analysis/setstats.h.
 */
#include "config.h"

#include <stdio.h>

#include "analysis/setstats.h"
#include "core/die.h"
#include "tools/tool.h"

static struct tool t;

int main(int argc, char **argv)
{
	struct setstats_opts so = SETSTATS_OPTS_INIT;
	struct setstats st;
	struct pset **sets;
	int level = PSET_PROCEDURES;
	bool all = false;
	uint64_t rows = 0;
	int first, r = 0;
	const struct cli_option options[] = {
		TOOL_OPT_DB(&t),
		OPT_EVENT(&t.events, "the event (default: the first set's first event)"),
		OPT_SET_INT('i', "images", &level, PSET_IMAGES, "one row per image"),
		OPT_SET_INT('I', "instructions", &level, PSET_INSTRUCTIONS, "one row per sampled instruction"),
		OPT_STRING('p', "procedure", &so.procedure, "NAME", "one row per instruction of this procedure"),
		TOOL_OPT_NORM(&so.norm, 1, "scale each set's counts: total (to the mean total),\n"
			      "period (to the mean sampling period) or none (default)"),
		OPT_U64('n', "rows", &rows, "N", "print the first N rows only", 1, UINT32_MAX,
			"number of rows"),
		OPT_BOOL(0, "all", &all, "also rows below 0.1% of all samples (left out by\n"
			 "default: one or two samples make a range% of 100)"),
		TOOL_OPTS_BINARIES(&t),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("SET", "an epoch of the -d database (number, label, latest,\n"
			     "latest~N), a database directory (all its epochs summed)\n"
			     "or DIR:EPOCH"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpistats [-d DIR] [-e EVENT] [-i | -I | -p PROCEDURE] [-N MODE] [-n ROWS]\n"
			 "          [--force] [--json] SET...",
		.about = "Statistics of each procedure's samples across sets (runs, machines): range%,\n"
			 "sum, sum%, N, mean, std-dev, min and max, sorted by range% (max - min over sum).",
		.options = options,
		.max_args = -1,
	};

	first = tool_start(&t, argc, argv, &cmd, 0);
	if (first >= argc)
		cli_usage_error(&cmd, "no set given");
	if (t.events.n)
		so.event = t.events.v[0];
	so.level = (enum pset_level)level;
	if (all)
		so.min_sum_pct = 0;
	if (!(sets = tool_open_sets(&t, argv + first, (size_t)(argc - first))) ||
	    setstats_build(&st, sets, t.n_sets, &so))
		return tool_finish(&t, -1);
	if (t.json) {
		setstats_json(&st, &t.jw, rows);
		r = json_finish(&t.jw);
	} else {
		setstats_draw(&st, &t.out, rows);
	}
	setstats_release(&st);
	return tool_finish(&t, r);
}
