/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpicg - the call graph of an epoch recorded with stacks (dcpirun -g),
 * in gprof's form (seed 003): the call-graph listing, the flat profile
 * (and, when clock samples were delayed, the prompt and delayed ones), the
 * index.  A thin main over analysis/callgraph.h.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/callgraph.h"
#include "analysis/lookup.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"
#include "tools/tool.h"

static struct tool t;

struct filters {
	int ticks;                      /* enum cg_ticks; the three listings when -1 */
	const char *comm;
	uint64_t tgid, tid;
};

/* The nodes of the procedures named on the command line. */
static int lookup(const struct stack_view *sv, char **specs, size_t n, uint32_t **nodes)
{
	*nodes = xcalloc(n + 1, sizeof(**nodes));
	for (size_t i = 0; i < n; i++) {
		struct proc_ref ref;

		if (proc_lookup(&t.view, specs[i], NULL, &ref))
			return -1;
		(*nodes)[i] = stack_view_find(sv, ref.image, ref.proc);
		if ((*nodes)[i] == UINT32_MAX)
			return errorf("'%s' is on no sampled stack of epoch %" PRIu32, specs[i],
				      t.view.seq);
	}
	return 0;
}

static void set_opts(struct callgraph_opts *o, const struct filters *f, enum dcpi_event ev,
		     int ticks)
{
	o->event = ev;
	o->ticks = (enum cg_ticks)ticks;
	o->comm = f->comm;
	o->tgid = (uint32_t)f->tgid;
	o->tid = (uint32_t)f->tid;
}

static void header(const struct stack_view *sv, const struct callgraph *g, enum dcpi_event ev)
{
	uint64_t user, complete;
	char label[64];

	epoch_view_event_label(sv->view, ev, label, sizeof(label));
	draw_printf(&t.out, STYLE_HEADER, "Epoch %" PRIu32 ", event %s: %" PRIu64 " samples",
		    sv->view->seq, label, g->samples);
	if (g->unit > 0)
		draw_printf(&t.out, STYLE_HEADER, " of %.3f ms (%.3f s)", g->unit * 1e3,
			    g->unit * (double)g->samples);
	if (g->delayed)
		draw_printf(&t.out, STYLE_HEADER, ", %" PRIu64 " delayed ticks (%.1f%%) given to their "
			    "callers", g->delayed, 100.0 * (double)g->delayed / (double)g->samples);
	if ((user = callgraph_user_samples(g, &complete)))
		draw_printf(&t.out, STYLE_HEADER, "; %.1f%% of the %" PRIu64 " user stacks reach "
			    "their thread's entry", 100.0 * (double)complete / (double)user, user);
	draw_eol(&t.out);
	draw_eol(&t.out);
}

static int report_text(const struct stack_view *sv, const struct filters *f, enum dcpi_event ev,
		       const uint32_t *nodes, size_t n)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct callgraph g;

	set_opts(&o, f, ev, f->ticks < 0 ? CG_TICKS_ALL : f->ticks);
	if (callgraph_build(&g, sv, &o))
		return -1;
	header(sv, &g, ev);
	callgraph_draw(&g, &t.out, nodes, n);
	draw_eol(&t.out);
	callgraph_draw_flat(&g, &t.out, nodes, n,
			    o.ticks == CG_TICKS_PROMPT ? "Flat profile, prompt samples:" :
			    o.ticks == CG_TICKS_DELAYED ? "Flat profile, delayed samples:" :
							  "Flat profile, all samples:", NULL);
	/* Seed 003's other two listings, when there are delayed ticks to tell apart. */
	for (int k = CG_TICKS_PROMPT; g.delayed && f->ticks < 0 && k <= CG_TICKS_DELAYED; k++) {
		struct callgraph part;

		set_opts(&o, f, ev, k);
		if (callgraph_build(&part, sv, &o))
			break;
		draw_eol(&t.out);
		callgraph_draw_flat(&part, &t.out, nodes, n,
				    k == CG_TICKS_PROMPT ? "Flat profile, prompt samples only:" :
				    "Flat profile, delayed samples only (charged to the caller):", &g);
		callgraph_release(&part);
	}
	draw_eol(&t.out);
	callgraph_draw_index(&g, &t.out);
	callgraph_release(&g);
	return 0;
}

static int report_json(const struct stack_view *sv, const struct filters *f, enum dcpi_event ev,
		       const uint32_t *nodes, size_t n)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct json_writer w;
	int k0 = f->ticks < 0 ? CG_TICKS_ALL : f->ticks, k1 = f->ticks < 0 ? CG_TICKS_DELAYED : f->ticks;
	int r = 0;

	json_init(&w, stdout, true);
	json_object_begin(&w);
	json_key(&w, "epoch");
	json_u64(&w, sv->view->seq);
	json_key(&w, "listings");
	json_array_begin(&w);
	for (int k = k0; k <= k1 && !r; k++) {
		struct callgraph g;

		set_opts(&o, f, ev, k);
		if ((r = callgraph_build(&g, sv, &o)))
			break;
		callgraph_json(&g, &w, nodes, n);
		callgraph_release(&g);
	}
	json_array_end(&w);
	db_damage_json(&sv->view->db, 1, &w);
	json_object_end(&w);
	return json_finish(&w) || r ? -1 : 0;
}

/* True if some sample came with a stack (not --threads alone). */
static bool has_stacks(const struct stack_view *sv)
{
	for (size_t i = 0; i < sv->t.n_stacks; i++)
		if (sv->t.stacks[i].end != STACK_END_NONE)
			return true;
	return false;
}

static int report(char **specs, size_t n, const struct filters *f)
{
	struct stack_view sv;
	enum dcpi_event ev = t.events.n ? t.events.v[0] : t.view.n_events ? t.view.events[0] :
									       EVENT_CYCLES;
	uint32_t *nodes = NULL;
	int r;

	if (stack_view_need(&sv, &t.view))
		return -1;
	if (!has_stacks(&sv) && !(sv.t.n_samples == 0 && epoch_view_partial(&t.view)))
		r = errorf("epoch %" PRIu32 " has the threads of its samples but no stacks (it was "
			   "recorded with --threads, not -g)", t.view.seq);
	else if (!lookup(&sv, specs, n, &nodes))
		r = t.json ? report_json(&sv, f, ev, nodes, n) : report_text(&sv, f, ev, nodes, n);
	else
		r = -1;
	free(nodes);
	stack_view_release(&sv);
	return r;
}

int main(int argc, char **argv)
{
	static const char *const ticks[] = { "all", "prompt", "delayed", NULL };
	struct filters f = { -1, NULL, 0, 0 };
	int first;
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_EVENT(&t.events, "the event (default: the epoch's first)"),
		OPT_CHOICE(0, "ticks", &f.ticks, "WHICH",
			   "all (default), prompt or delayed samples only", ticks, "kind of ticks"),
		OPT_STRING(0, "comm", &f.comm, "NAME", "only the samples of processes named NAME"),
		OPT_U64(0, "tgid", &f.tgid, "N", "only the samples of process N", 1, UINT32_MAX,
			"process id"),
		OPT_U64(0, "pid", &f.tid, "N", "only the samples of thread N", 1, UINT32_MAX,
			"thread id"),
		TOOL_OPTS_OUTPUT(&t),
		OPT_ARGUMENT("PROCEDURE", "only these procedures' entries (NAME, NAME@IMAGE, 0xADDR@IMAGE)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpicg [-d DIR] [-E EPOCH] [-e EVENT] [--ticks all|prompt|delayed]\n"
			 "       [--comm NAME] [--tgid N] [--pid N] [--json] [PROCEDURE...]",
		.about = "The call graph of an epoch recorded with stacks (dcpirun -g, dcpid -g), as gprof\n"
			 "prints it: each procedure with the samples in it (self) and in what it called\n"
			 "(descendants), its parents and children with the share spent on behalf of each,\n"
			 "cycles as units; then the flat profile.  Clock samples delayed by disabled\n"
			 "interrupts are given to the caller and also listed apart (prompt, delayed).",
		.options = options,
		.max_args = -1,
	};

	first = tool_start(&t, argc, argv, &cmd, TOOL_EPOCH);
	return tool_finish(&t, report(argv + first, (size_t)(argc - first), &f));
}
