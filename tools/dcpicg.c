/*
 * dcpicg - the call graph of an epoch recorded with stacks (dcpirun -g),
 * in gprof's form (seed 003): the call-graph listing, the flat profile
 * (and, when clock samples were delayed, the prompt and delayed ones), the
 * index.  A thin main over analysis/callgraph.h.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/callgraph.h"
#include "analysis/lookup.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"

static const char usage[] =
	"usage: dcpicg [-d DIR] [-E EPOCH] [-e EVENT] [--ticks all|prompt|delayed] [--json]\n"
	"              [PROCEDURE...]\n"
	"\n"
	"The call graph of an epoch recorded with stacks (dcpirun -g, dcpid -g), as gprof\n"
	"prints it: each procedure with the samples in it (self) and in what it called\n"
	"(descendants), its parents and children with the share spent on behalf of each,\n"
	"cycles as units; then the flat profile.  Clock samples delayed by disabled\n"
	"interrupts are given to the caller and also listed apart (prompt, delayed).\n"
	"\n"
	"  -d, --db DIR        the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH   number, label, latest (default) or latest~N\n"
	"  -e, --event EVENT   the event (default: the epoch's first)\n"
	"      --ticks WHICH   all (default), prompt or delayed samples only\n"
	"      --comm NAME     only the samples of processes named NAME\n"
	"      --tgid N        only the samples of process N\n"
	"      --pid N         only the samples of thread N\n"
	"      --force         name procedures of binaries that changed since profiling\n"
	"      --debug-dir DIR where separate debug files are (default /usr/lib/debug)\n"
	"      --json          the same data as JSON\n"
	"  PROCEDURE           only these procedures' entries (NAME, NAME@IMAGE, 0xADDR@IMAGE)\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR, OPT_TICKS, OPT_COMM, OPT_TGID, OPT_PID };

struct args {
	const char *db, *epoch, *debug_dir, *event;
	enum cg_ticks ticks;
	bool ticks_given, json, force;
	const char *comm;
	uint64_t tgid, tid;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "event", required_argument, NULL, 'e' },
		{ "ticks", required_argument, NULL, OPT_TICKS },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "tgid", required_argument, NULL, OPT_TGID },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:E:e:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'e': a->event = optarg; break;
		case OPT_TICKS:
			if (!strcmp(optarg, "all"))
				a->ticks = CG_TICKS_ALL;
			else if (!strcmp(optarg, "prompt"))
				a->ticks = CG_TICKS_PROMPT;
			else if (!strcmp(optarg, "delayed"))
				a->ticks = CG_TICKS_DELAYED;
			else
				die("bad --ticks '%s' (all, prompt or delayed)", optarg);
			a->ticks_given = true;
			break;
		case OPT_COMM: a->comm = optarg; break;
		case OPT_TGID:
		case OPT_PID:
			if (cli_parse_range(optarg, 1, UINT32_MAX, c == OPT_PID ? &a->tid : &a->tgid))
				die("bad %s '%s'", c == OPT_PID ? "--pid" : "--tgid", optarg);
			break;
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_JSON: a->json = true; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
}

/* The nodes of the procedures named on the command line. */
static int lookup(struct epoch_view *v, const struct stack_view *sv, char **specs, size_t n,
		  uint32_t **nodes)
{
	*nodes = xcalloc(n + 1, sizeof(**nodes));
	for (size_t i = 0; i < n; i++) {
		struct proc_ref ref;

		if (proc_lookup(v, specs[i], NULL, &ref))
			return -1;
		(*nodes)[i] = stack_view_find(sv, ref.image, ref.proc);
		if ((*nodes)[i] == UINT32_MAX)
			return errorf("'%s' is on no sampled stack of epoch %" PRIu32, specs[i], v->seq);
	}
	return 0;
}

static int event_of(struct epoch_view *v, const char *name, enum dcpi_event *ev)
{
	enum dcpi_event evs[EVENT__COUNT];
	size_t n = 0;

	if (!name) {
		*ev = v->n_events ? v->events[0] : EVENT_CYCLES;
		return 0;
	}
	if (epoch_view_parse_events(name, evs, &n))
		return -1;
	if (n != 1)
		return errorf("-e takes one event");
	*ev = evs[0];
	return 0;
}

static void set_filters(struct callgraph_opts *o, const struct args *a, enum dcpi_event ev)
{
	o->event = ev;
	o->comm = a->comm;
	o->tgid = (uint32_t)a->tgid;
	o->tid = (uint32_t)a->tid;
}

static int report_text(const struct stack_view *sv, const struct args *a, enum dcpi_event ev,
		       const uint32_t *nodes, size_t n)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct callgraph g;
	uint64_t user, complete;
	char label[64];
	int r;

	set_filters(&o, a, ev);
	o.ticks = a->ticks;
	if (callgraph_build(&g, sv, &o))
		return -1;
	epoch_view_event_label(sv->view, ev, label, sizeof(label));
	printf("Epoch %" PRIu32 ", event %s: %" PRIu64 " samples", sv->view->seq, label, g.samples);
	if (g.unit > 0)
		printf(" of %.3f ms (%.3f s)", g.unit * 1e3, g.unit * (double)g.samples);
	if (g.delayed)
		printf(", %" PRIu64 " delayed ticks (%.1f%%) given to their callers", g.delayed,
		       100.0 * (double)g.delayed / (double)g.samples);
	if ((user = callgraph_user_samples(&g, &complete)))
		printf("; %.1f%% of the %" PRIu64 " user stacks reach their thread's entry",
		       100.0 * (double)complete / (double)user, user);
	printf("\n\n");
	r = callgraph_print_text(&g, stdout, nodes, n);
	printf("\n");
	r |= callgraph_print_flat(&g, stdout, nodes, n,
				  a->ticks == CG_TICKS_PROMPT ? "Flat profile, prompt samples:" :
				  a->ticks == CG_TICKS_DELAYED ? "Flat profile, delayed samples:" :
								 "Flat profile, all samples:", NULL);
	/* Seed 003's other two listings, when there are delayed ticks to tell apart. */
	for (int t = CG_TICKS_PROMPT; !r && g.delayed && !a->ticks_given && t <= CG_TICKS_DELAYED;
	     t++) {
		struct callgraph part;

		o.ticks = (enum cg_ticks)t;
		if (callgraph_build(&part, sv, &o))
			break;
		printf("\n");
		r |= callgraph_print_flat(&part, stdout, nodes, n,
					  t == CG_TICKS_PROMPT ? "Flat profile, prompt samples only:" :
					  "Flat profile, delayed samples only (charged to the caller):",
					  &g);
		callgraph_release(&part);
	}
	printf("\n");
	r |= callgraph_print_index(&g, stdout);
	callgraph_release(&g);
	return r;
}

static int report_json(const struct stack_view *sv, const struct args *a, enum dcpi_event ev,
		       const uint32_t *nodes, size_t n)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct json_writer w;
	int t0 = a->ticks_given ? (int)a->ticks : CG_TICKS_ALL;
	int t1 = a->ticks_given ? (int)a->ticks : CG_TICKS_DELAYED;

	set_filters(&o, a, ev);
	json_init(&w, stdout, true);
	json_object_begin(&w);
	json_key(&w, "epoch");
	json_u64(&w, sv->view->seq);
	json_key(&w, "listings");
	json_array_begin(&w);
	for (int t = t0; t <= t1; t++) {
		struct callgraph g;

		o.ticks = (enum cg_ticks)t;
		if (callgraph_build(&g, sv, &o)) {
			json_array_end(&w);
			json_object_end(&w);
			json_finish(&w);
			return -1;
		}
		callgraph_json(&g, &w, nodes, n);
		callgraph_release(&g);
	}
	json_array_end(&w);
	json_object_end(&w);
	return json_finish(&w);
}

/* True if some sample came with a stack (not --threads alone). */
static bool has_stacks(const struct stack_view *sv)
{
	for (size_t i = 0; i < sv->t.n_stacks; i++)
		if (sv->t.stacks[i].end != STACK_END_NONE)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct epoch_view_opts vo = { 0 };
	struct epoch_view view;
	struct stack_view sv;
	enum dcpi_event ev = EVENT_CYCLES;
	uint32_t *nodes = NULL;
	size_t n;
	struct db *db;
	int r = 1, s;

	cli_init(argc, argv);
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	n = (size_t)(argc - optind);
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		if ((s = stack_view_open(&sv, &view)) == 1)
			errorf("epoch %" PRIu32 " has no stacks (record with dcpirun -g or dcpid -g)",
			       view.seq);
		if (!s && !has_stacks(&sv)) {
			errorf("epoch %" PRIu32 " has the threads of its samples but no stacks (it was "
			       "recorded with --threads, not -g)", view.seq);
			stack_view_release(&sv);
			s = -1;
		}
		if (!s) {
			if (!event_of(&view, a.event, &ev) && !lookup(&view, &sv, argv + optind, n, &nodes))
				r = (a.json ? report_json(&sv, &a, ev, nodes, n)
					    : report_text(&sv, &a, ev, nodes, n)) ? 1 : 0;
			stack_view_release(&sv);
		}
		free(nodes);
		epoch_view_release(&view);
	}
	db_close(db);
	return r || error_count() ? 1 : 0;
}
