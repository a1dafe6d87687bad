/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpivals - the semi-invariant instructions of an epoch: those whose
 * written register or accessed address holds one value most of the time
 * (seed 004: "find semi-invariant values for prefetching, specialization,
 * speculation"), hottest first.  Needs value profiles (dcpirun --values,
 * dcpid --values); the report is analysis/invariants.h's, with the values
 * dcpicalc --values and dcpilist --values show.
 */
#include "config.h"

#include <stdio.h>

#include "analysis/invariants.h"
#include "core/json.h"
#include "tools/tool.h"

static struct tool t;

int main(int argc, char **argv)
{
	struct invariants_opts o = INVARIANTS_OPTS_INIT;
	struct invariants inv;
	uint64_t pct = (uint64_t)(100 * VALPROF_INVARIANT + 0.5);
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_STRING('i', "image", &o.image, "IMAGE", "this image only (a path, a file name or a key)"),
		OPT_U64('m', "min-share", &pct, "PCT",
			"the most common value's share, at least (default 90)", 1, 100, "share"),
		OPT_U64('n', "min-samples", &o.min_samples, "N",
			"value samples at the instruction, at least (default 8)", 1, UINT32_MAX,
			"sample count"),
		OPT_U64('l', "limit", &o.limit, "N", "at most N instructions (default: all)", 1,
			UINT32_MAX, "limit"),
		TOOL_OPTS_OUTPUT(&t),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpivals [-d DIR] [-E EPOCH] [-i IMAGE] [--min-share PCT] [-n N] [--limit N]\n"
			 "         [--force] [--json]",
		.about = "The semi-invariant instructions of an epoch, hottest first: those whose\n"
			 "written register or accessed address holds one value at least PCT% of\n"
			 "the time they were sampled (value profiles: dcpirun --values).",
		.options = options,
	};

	tool_start(&t, argc, argv, &cmd, TOOL_EPOCH);
	o.min_share = (double)pct / 100;
	invariants_build(&inv, &t.view, &o);
	if (t.json) {
		invariants_json(&inv, &t.jw, &t.view);
		json_finish(&t.jw);  /* a write error is reported by tool_finish() */
	} else {
		invariants_draw(&inv, &t.out, &t.view);
	}
	invariants_release(&inv);
	return tool_finish(&t, 0);
}
