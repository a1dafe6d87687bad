/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpiprof - samples per procedure (or per image) of an epoch, as in
 * Figure 1 of the DCPI paper (Anderson et al., "Continuous Profiling:
 * Where Have All the Cycles Gone?", SOSP 1997).  The rows come from
 * analysis/procprof.h, which dcpi-tui shares.
 */
#include "config.h"

#include <stdio.h>

#include "analysis/procprof.h"
#include "core/die.h"
#include "tools/tool.h"

static struct tool t;

int main(int argc, char **argv)
{
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct procprof pp;
	uint64_t rows = 0;
	int first, by = PROCPROF_BY_IMAGE, r = 0;
	static const char *const by_choices[] = { "image", "comm", "pid", "tgid", NULL };
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_EVENTS(&t.events, "the events to show, first one sorts (default: all)"),
		OPT_BOOL('i', "images", &po.by_image, "one row per image instead of per procedure"),
		OPT_CHOICE(0, "by", &by, "WHAT",
			   "image (default), or also per process name (comm), thread (pid)\n"
			   "or process (tgid): needs an epoch recorded with -g or --threads",
			   by_choices, "grouping"),
		OPT_U64('n', "rows", &rows, "N", "print the first N rows only", 1, UINT32_MAX,
			"number of rows"),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("IMAGE", "only these images (a path, a file name or an image key)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpiprof [-d DIR] [-E EPOCH] [-e EVENT[,EVENT...]] [-i] [-n ROWS]\n"
			 "         [--by image|comm|pid|tgid] [--json] [IMAGE...]",
		.about = "Samples per procedure of an epoch, sorted by the first event, with a (samples, %)\n"
			 "column pair per event and the cumulative percentage.",
		.options = options,
		.max_args = -1,
	};

	first = tool_start(&t, argc, argv, &cmd, TOOL_EPOCH);
	po.by = (enum procprof_by)by;
	po.events = t.events.n ? t.events.v : NULL;
	po.n_events = t.events.n;
	po.images = (const char *const *)argv + first;
	po.n_images = (size_t)(argc - first);
	if ((r = procprof_build(&pp, &t.view, &po)))
		return tool_finish(&t, r);
	if (t.json) {
		procprof_json(&pp, &t.jw, rows);
		r = json_finish(&t.jw);
	} else {
		procprof_draw(&pp, &t.out, rows);
	}
	procprof_release(&pp);
	return tool_finish(&t, r);
}
