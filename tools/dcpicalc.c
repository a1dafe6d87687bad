/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpicalc - per-instruction execution frequency, CPI, stall bubbles and
 * culprits of procedures, estimated from their samples (Figures 2 and 4 of
 * the DCPI paper: Anderson et al., "Continuous Profiling: Where Have All
 * the Cycles Gone?", SOSP 1997).  The analysis and its output come from analysis/calc.h,
 * which dcpi-tui shares.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/calc.h"
#include "analysis/calc-cache.h"
#include "analysis/calc-each.h"
#include "analysis/calc-dot.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-json.h"
#include "analysis/epochview-open.h"
#include "analysis/lookup.h"
#include "analysis/procprof.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"
#include "tools/tool.h"

enum output { OUT_TEXT, OUT_SUMMARY, OUT_DOT, OUT_JSON };

static struct tool t;

struct args {
	const char *image;
	enum output out;
	uint64_t min_samples;
	uint64_t threads;
	bool no_cache;
	struct calc_opts co;
};

/* ---- output ------------------------------------------------------------------- */

struct out {
	struct args *a;
	struct json_writer jw;
	size_t done;
};

/* The header lines of the listing, then the Figure 4 summary. */
static void summary(const struct calc *c)
{
	struct calc_lines l;

	calc_render(c, &l, CALC_RENDER_HEADER_ONLY);
	for (size_t k = 0; k < l.n && l.v[k].kind == CALC_LINE_HEADER; k++) {
		calc_draw_line(c, &l.v[k], &t.out);
		draw_eol(&t.out);
	}
	calc_lines_release(&l);
	calc_draw_summary(c, &t.out);
}

static int emit(struct out *o, const struct calc *c)
{
	int r = 0;

	if (o->done && (o->a->out == OUT_TEXT || o->a->out == OUT_SUMMARY))
		draw_eol(&t.out);
	switch (o->a->out) {
	case OUT_TEXT:
		calc_draw(c, &t.out, o->a->co.values ? CALC_RENDER_VALUES : 0);
		break;
	case OUT_SUMMARY:
		summary(c);
		break;
	case OUT_DOT:
		r = calc_dot(c, stdout);
		break;
	case OUT_JSON:
		calc_json(c, &o->jw);
		break;
	}
	o->done++;
	return r;
}

static int one(struct epoch_view *view, struct out *o, const struct proc_ref *ref)
{
	struct calc c;
	int r;

	if (calc_build(&c, view, ref, &o->a->co)) {
		calc_release(&c);
		return -1;
	}
	r = emit(o, &c);
	calc_release(&c);
	return r;
}

/* The whole image's procedures, analysed on several threads, printed in order. */
struct many {
	struct out *o;
	int r;
};

static void emit_each(void *ctx, size_t i, struct calc *c, int r)
{
	struct many *m = ctx;

	(void)i;
	if (r || emit(m->o, c))
		m->r = -1;
}

static int by_name(struct epoch_view *view, struct out *o, const char *spec)
{
	struct proc_ref ref;

	/* a name looked for in every image: their symbols read on the engine's threads first */
	if (!o->a->image)
		epoch_view_open_images(view, NULL);
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
	struct proc_ref *refs = xcalloc(pp.n_rows + 1, sizeof(*refs));
	struct many m = { o, 0 };

	for (size_t k = 0; k < pp.n_rows; k++) {
		const struct procprof_row *row = &pp.rows[k];
		uint64_t s = 0;

		for (size_t e = 0; e < pp.n_events; e++)
			if (event_is_time(pp.events[e]))
				s += procprof_samples(&pp, k, e);
		if (!row->proc || s < (o->a->min_samples ? o->a->min_samples : 1))
			continue;
		refs[n++] = (struct proc_ref){ row->image, row->proc };
	}
	calc_each(view, refs, n, &o->a->co, (unsigned)o->a->threads, emit_each, &m);
	r = m.r;
	if (!n && !error_count())
		warning("no procedure of '%s' has samples in this epoch", o->a->image);
	free(refs);
	procprof_release(&pp);
	return r;
}

static int run(struct epoch_view *view, struct args *a, int first, int argc, char **argv)
{
	struct out o = { a, { 0 }, 0 };
	int r = 0;

	a->co.src = &t.src;
	if (!a->no_cache)
		a->co.cache = calc_cache_new(view->db);

	if (a->out == OUT_JSON) {
		json_init(&o.jw, stdout, true);
		json_object_begin(&o.jw);
		json_key(&o.jw, "epoch");
		json_u64(&o.jw, view->seq);
		json_key(&o.jw, "procedures");
		json_array_begin(&o.jw);
	}
	if (first == argc)
		r = whole_image(view, &o);
	for (int k = first; k < argc; k++)
		if (by_name(view, &o, argv[k]))
			r = -1;
	if (a->out == OUT_JSON) {
		json_array_end(&o.jw);
		db_damage_json(&view->db, 1, &o.jw);
		json_object_end(&o.jw);
		json_finish(&o.jw);  /* a write error is reported by tool_finish() */
	}
	calc_cache_free(a->co.cache);
	a->co.cache = NULL;
	return r;
}

static void parse_args(struct args *a, int argc, char **argv, int *first)
{
	static const char *const scheds[] = { "loop", "cold", "pred", "auto", NULL };
	bool summary = false, dot = false;
	int sched = CALC_SCHED_LOOP;
	uint64_t skid = UINT64_MAX;  /* unset: the event's default */
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_STRING('i', "image", &a->image, "PATH", "look for procedures in this image only; without a\n"
			   "PROCEDURE: every procedure of it that has samples"),
		OPT_U64('n', "min-samples", &a->min_samples, "N",
			"with --image: procedures with at least N samples (1)", 0, UINT64_MAX,
			"sample count"),
		OPT_BOOL('s', "summary", &summary, "the summary of each procedure (where the cycles went)"),
		OPT_BOOL(0, "dot", &dot, "the annotated control-flow graph for Graphviz"),
		OPT_CHOICE(0, "schedule", &sched, "MODE", "what a block's schedule assumes before it: loop\n"
			   "(default: self-loops steady, the rest cold), cold, pred, auto", scheds,
			   "schedule"),
		OPT_BOOL(0, "flow", &a->co.flow, "correct the frequencies globally so that they conserve\n"
			 "flow (min-cost flow; off by default, see dcpicalc(1))"),
		OPT_DOUBLE(0, "mhz", &a->co.mhz, "MHZ", "clock rate for clock samples (default: the epoch's)",
			   1, NULL),
		OPT_DOUBLE(0, "period-cycles", &a->co.period_cycles, "N",
			   "cycles per time sample (overrides --mhz)", 1, NULL),
		{ .type = CLI_U64, .long_name = "skid", .value = &skid, .argh = "N",
		  .help = "instructions a sample lands after the one it measures\n"
			  "(default 1: timer and non-precise sampling)",
		  .min = 0, .max = 1, .what = "skid", .hint = "want 0 or 1" },
		OPT_BOOL('S', "source", &a->co.source, "interleave source lines (DWARF)"),
		OPT_BOOL('V', "values", &a->co.values, "each instruction's most common values: the registers it\n"
			 "writes, the address it loads or stores (dcpirun --values)"),
		OPT_U64('j', "threads", &a->threads, "N", "with --image: analyse on N threads (default: one\n"
			"per CPU); the output is the same", 1, 256, "number of threads"),
		OPT_BOOL(0, "no-cache", &a->no_cache, "neither read nor store the database's cache of what\n"
			 "depends only on the binary (CFGs, schedules)"),
		TOOL_OPT_SUBST(&t),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("PROCEDURE", "NAME, NAME@IMAGE, 0xADDRESS or 0xADDRESS@IMAGE"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpicalc [-d DIR] [-E EPOCH] [--image PATH] [--summary] [--dot] [--json]\n"
			 "         [--schedule loop|cold|pred|auto] [--flow] [--mhz MHZ]\n"
			 "         [--period-cycles N] [--skid N] [-S] [-V] [--force] [PROCEDURE...]",
		.about = "Estimates how often each instruction of a procedure ran, its cycles per\n"
			 "execution and why it stalled, from the samples alone, and prints the\n"
			 "instructions with stall bubbles and culprits (or a summary, a graph, JSON).",
		.options = options,
		.max_args = -1,
	};

	*first = tool_start(&t, argc, argv, &cmd, 0);
	a->co.sched = (enum calc_sched)sched;
	if (skid != UINT64_MAX)
		a->co.skid = (int)skid;
	if (summary + dot + t.json > 1)
		die("--summary, --dot and --json exclude each other");
	a->out = summary ? OUT_SUMMARY : dot ? OUT_DOT : t.json ? OUT_JSON : OUT_TEXT;
	if (dot)
		t.note_prefix = "// ";  /* what the graph was made without, as DOT comments */
	if (*first == argc && !a->image)
		cli_usage_error(&cmd, NULL);
}

int main(int argc, char **argv)
{
	struct args a = { .co = CALC_OPTS_INIT };
	int first;

	parse_args(&a, argc, argv, &first);
	if (tool_open(&t))
		return tool_finish(&t, -1);
	return tool_finish(&t, run(&t.view, &a, first, argc, argv));
}
