/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpilist - one procedure's instructions with their samples per event,
 * source lines interleaved with --source.  The listing comes from
 * analysis/listing.h, which dcpi-tui and dcpicalc share.
 */
#include "config.h"

#include <stdio.h>

#include "analysis/epochview-open.h"
#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "analysis/valprof.h"
#include "core/die.h"
#include "tools/tool.h"

static struct tool t;

static int list(const char *spec, const char *image, bool source, bool blocks, bool values)
{
	struct listing_opts lo = LISTING_OPTS_INIT;
	unsigned flags = (source ? LISTING_SOURCE : 0) | (blocks ? LISTING_BLOCKS : 0);
	struct proc_ref ref;
	struct listing l;
	struct valprof vp;
	int r = 0;

	/* a name looked for in every image: their symbols read on the engine's threads first */
	if (!image)
		epoch_view_open_images(&t.view, NULL);
	if (proc_lookup(&t.view, spec, image, &ref))
		return -1;
	lo.events = t.events.n ? t.events.v : NULL;
	lo.n_events = t.events.n;
	lo.source = source;
	lo.src = &t.src;
	if (listing_build(&l, &t.view, &ref, &lo))
		return -1;
	if (values) {
		valprof_build(&vp, &l, epoch_view_values(&t.view, ref.image),
			      &epoch_view_paths(&t.view, ref.image)->values);
		if (!vp.present)
			warning("the epoch has no value profile of this image (record with --values)");
		l.values = &vp;
	}
	if (t.json) {
		listing_json(&l, &t.jw, flags);
		r = json_finish(&t.jw);
	} else {
		listing_draw(&l, &t.out, flags);
	}
	if (values)
		valprof_release(&vp);
	listing_release(&l);
	return r;
}

int main(int argc, char **argv)
{
	bool source = false, blocks = false, values = false;
	int first;
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_EVENTS(&t.events, "the events to show (default: all)"),
		OPT_BOOL('S', "source", &source, "interleave source lines (DWARF)"),
		OPT_BOOL('b', "blocks", &blocks, "mark basic blocks with their frequency class and edges"),
		OPT_BOOL('V', "values", &values, "each instruction's most common values: the registers it\n"
			 "writes, the address it loads or stores (dcpirun --values)"),
		TOOL_OPT_SUBST(&t),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("PROCEDURE", "NAME, NAME@IMAGE, 0xADDRESS or 0xADDRESS@IMAGE"),
		OPT_ARGUMENT("IMAGE", "look only in this image (a path, a file name or a key)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpilist [-d DIR] [-E EPOCH] [-e EVENT[,EVENT...]] [--source] [--blocks] [--values]\n"
			 "         [--substitute-path FROM=TO] [--force] [--json] PROCEDURE [IMAGE]",
		.about = "The instructions of a procedure with their samples per event (--json: with\n"
			 "blocks and edges).",
		.options = options,
		.min_args = 1,
		.max_args = 2,
	};

	first = tool_start(&t, argc, argv, &cmd, TOOL_EPOCH);
	return tool_finish(&t, list(argv[first], first + 1 < argc ? argv[first + 1] : NULL, source,
				    blocks, values));
}
