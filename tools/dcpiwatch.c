/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpiwatch - exact call counts, and the time and events between two points
 * of the code, per thread (docs/dcpiwatch.1, docs/watch.md).
 *
 * A thin main: watch/plan.h finds where the probes go, watch/calib.h
 * measures what they cost, watch/session.h opens them, watch/agg.h pairs
 * entries with returns, watch/report.h prints, db/watch.h stores.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/incomplete.h"
#include "analysis/watchreport.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/spawn.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/meta.h"
#include "db/watch.h"
#include "present/draw.h"
#include "tools/tool.h"
#include "watch/agg.h"
#include "watch/calib.h"
#include "watch/plan.h"
#include "watch/session.h"

struct watch {
	const char *dir, *label, *trace_path, *epoch;
	const char **funcs;
	size_t nfuncs;
	const char **between;   /* pairs */
	size_t nbetween;
	struct watch_evspec ev[WATCH_MAX_EVENTS];
	unsigned nev;
	int ret;                /* enum watch_ret_mode */
	bool json, all, raw, threads, processes, no_hist, verbose, report;
	enum cli_color color;
	uint64_t pid;           /* -p */
	uint64_t duration;      /* seconds */
	char **argv;            /* the command, or NULL */
	struct spawn child;     /* the command, held before exec */
	int sigfd;
	int status;
	bool child_done;
};

static struct watch w;

static int events_option(const struct cli_option *opt, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL;
	int r = 0;

	(void)opt;
	for (char *tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		struct watch_evspec ev;
		bool dup = false;

		if (watch_evspec_lookup(tok, &ev)) {
			r = -1;
			break;
		}
		/* task-clock is read always: it is the on-CPU time. */
		if (!strcmp(ev.name, "task-clock"))
			continue;
		for (unsigned k = 0; k < w.nev; k++)
			dup |= !strcmp(w.ev[k].name, ev.name);
		if (dup)
			continue;
		if (w.nev == WATCH_MAX_EVENTS - 1)
			r = errorf("at most %d events", WATCH_MAX_EVENTS - 1);
		else
			w.ev[w.nev++] = ev;
	}
	free(copy);
	return r;
}

static int function_option(const struct cli_option *opt, const char *arg)
{
	(void)opt;
	w.funcs = xreallocarray(w.funcs, w.nfuncs + 1, sizeof(*w.funcs));
	w.funcs[w.nfuncs++] = arg;
	return 0;
}

/* --between A B: main() has joined the two into "A\nB". */
static int between_option(const struct cli_option *opt, const char *arg)
{
	const char *nl = strchr(arg, '\n');

	(void)opt;
	if (!nl)
		return errorf("--between needs two points: --between A B");
	w.between = xreallocarray(w.between, 2 * (w.nbetween + 1), sizeof(char *));
	w.between[2 * w.nbetween] = xstrndup(arg, (size_t)(nl - arg));
	w.between[2 * w.nbetween + 1] = nl + 1;
	w.nbetween++;
	return 0;
}

/* The option table takes one argument an option: "--between A B" becomes "--between A\nB". */
static char **join_between(int *argc, char **argv)
{
	char **v = xcalloc((size_t)*argc + 1, sizeof(*v));
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--"))
			while (i < *argc)
				v[n++] = argv[i++];
		else if (!strcmp(argv[i], "--between") && i + 2 < *argc) {
			v[n++] = argv[i];
			v[n++] = xasprintf("%s\n%s", argv[i + 1], argv[i + 2]);
			i += 2;
		} else
			v[n++] = argv[i];
	}
	*argc = n;
	return v;
}

static const char *const ret_modes[] = { "auto", "uretprobe", "exits", NULL };

static void parse_args(int argc, char **argv)
{
	int first;
	const struct cli_option options[] = {
		OPT_CALLBACK('f', "function", NULL, "FUNC[@IMAGE]",
			     "a function: a symbol, NAME+0xOFF, 0xADDR, or IMAGE+0xADDR\n"
			     "in a stripped binary; IMAGE: a path, a library (libc)\n"
			     "or 'kernel' (default: the command's program)", function_option),
		OPT_CALLBACK(0, "between", NULL, "A B",
			     "time from point A to the next point B on the same thread", between_option),
		OPT_CALLBACK('e', "event", NULL, "EVENT",
			     "also count EVENT per call: page-faults context-switches\n"
			     "cpu-migrations, cycles instructions ... (repeatable, or a list)",
			     events_option),
		OPT_U64('p', "pid", &w.pid, "PID", "watch a running process (every thread) until it exits",
			1, INT_MAX, "pid"),
		OPT_BOOL('a', "all", &w.all, "every process that runs the code (needs privileges)"),
		OPT_U64(0, "duration", &w.duration, "SECS", "stop after SECS seconds", 1, 365 * 86400,
			"duration"),
		OPT_STRING(0, "trace", &w.trace_path, "FILE", "write every call in time order to FILE"),
		OPT_CHOICE(0, "return", &w.ret, "MODE",
			   "how returns are seen: auto (default), uretprobe, exits", ret_modes, "return mode"),
		OPT_BOOL(0, "raw", &w.raw, "do not subtract the probes' own cost from the times"),
		OPT_STRING('d', "db", &w.dir, "DIR",
			   "store the results in DIR's latest epoch (default: $DCPI_DB;\n"
			   "neither: not stored); --report reads DIR (default: ./dcpi.db)"),
		OPT_STRING(0, "label", &w.label, "L", "store the results in a new epoch labelled L"),
		OPT_BOOL(0, "report", &w.report, "show the results stored in an epoch (-E)"),
		OPT_EPOCH(&w.epoch),
		OPT_BOOL('T', "threads", &w.threads, "a row per thread under each function"),
		OPT_BOOL('P', "processes", &w.processes, "a row per process under each function"),
		OPT_BOOL(0, "no-histogram", &w.no_hist, "no histograms in the text report"),
		OPT_JSON(&w.json),
		OPT_COLOR(&w.color),
		OPT_BOOL('v', "verbose", &w.verbose, "say where the probes go and what they cost"),
		OPT_ARGUMENT("CMD [ARGS...]", "the command to run and watch"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpiwatch [-d DIR] [--json] [-e EVENT]... -f FUNC[@IMAGE] [-f ...]\n"
			 "       [--between A B] [--trace FILE] (-p PID | -a | -- CMD [ARGS...])\n"
			 "dcpiwatch [-d DIR] [-E EPOCH] [--json] --report",
		.about = "Counts every call of the functions named and times each one (wall and\n"
			 "on-CPU time, and the change of each event), per thread, with uprobes:\n"
			 "the exact number of calls, min, max, mean, standard deviation and a log2\n"
			 "histogram.  Results are stored in the database with -d (or $DCPI_DB).",
		.options = options,
		/* stop at the command, so its options stay its own */
		.flags = CLI_STOP_AT_ARG,
		.max_args = -1,
	};

	first = cli_parse(argc, argv, &cmd);
	if (first < argc)
		w.argv = argv + first;
	if (w.label && !epoch_label_valid(w.label))
		die("invalid epoch label '%s'", w.label);
	if (w.report) {
		if (w.nfuncs || w.nbetween || w.argv || w.pid || w.all)
			die("--report shows stored results: no functions, no command");
		return;
	}
	if (w.epoch)
		die("-E names the epoch --report shows");
	if (!w.nfuncs && !w.nbetween)
		die("nothing to watch: name a function with -f FUNC[@IMAGE] or --between A B");
	if ((w.pid > 0) + w.all + !!w.argv == 0)
		die("whom to watch? -p PID, -a, or -- CMD [ARGS...]");
	if (w.all && w.nev)
		die("-e counts events per thread of a process tree (-p, or a command): not with -a");
	if (w.pid > 0 && (w.all || w.argv))
		die("-p watches a running process: no -a, no command");
}

/* ---- the command ---------------------------------------------------------------- */

/* Returns true when watching should stop. */
static bool handle_signals(struct watch *w)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(w->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		/* With a command, it decides: pass the signal on; else stop watching. */
		if (w->child.pid > 0)
			kill(w->child.pid, (int)si.ssi_signo);
		else
			stop = true;
	}
	if (w->child.pid > 0 && !w->child_done &&
	    waitpid(w->child.pid, &w->status, WNOHANG) == w->child.pid)
		w->child_done = stop = true;
	if (w->pid > 0 && kill((pid_t)w->pid, 0) && errno == ESRCH)
		stop = true;
	return stop;
}

static void watch_loop(struct watch *w, struct watch_session *s)
{
	struct pollfd fds[1025];
	int64_t end = w->duration ? time_monotonic_ns() + (int64_t)w->duration * 1000000000 : 0;

	for (;;) {
		size_t n = watch_session_pollfds(s, fds, 1024);
		int timeout = 100;

		fds[n].fd = w->sigfd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		if (poll(fds, n + 1, timeout) < 0 && errno != EINTR)
			die_errno("poll");
		watch_session_read(s, false);
		if (handle_signals(w) || (end && time_monotonic_ns() >= end))
			return;
	}
}

/* ---- results ---------------------------------------------------------------------- */

/* Calls the kernel counted but no sample showed (lost samples): calls without a time. */
static void add_unsampled(struct watch *w, struct watch_plan *plan, struct watch_session *s,
			  struct watch_set *set)
{
	uint64_t *hits = xcalloc(plan->np + 1, sizeof(*hits));

	if (watch_session_hits(s, hits))
		goto out;
	for (size_t i = 0; i < plan->np; i++) {
		const struct watch_point *p = &plan->p[i];
		uint64_t seen = 0;
		struct watch_rec r;

		if (p->role != WP_ENTRY && p->role != WP_FROM)
			continue;
		for (size_t k = 0; k < set->n; k++)
			if (set->v[k].offset == plan->t[p->target].offset &&
			    !strcmp(set->v[k].name, plan->t[p->target].name))
				seen += set->v[k].calls;
		if (hits[i] <= seen)
			continue;
		warning("%s: %" PRIu64 " of %" PRIu64 " calls were counted but not seen (samples "
			"lost): they have no times", plan->t[p->target].name, hits[i] - seen, hits[i]);
		memset(&r, 0, sizeof(r));
		r.kind = plan->t[p->target].kind;
		memcpy(r.key, plan->t[p->target].key, sizeof(r.key));
		r.offset = plan->t[p->target].offset;
		memcpy(r.key_b, plan->t[p->target].key_b, sizeof(r.key_b));
		r.offset_b = plan->t[p->target].offset_b;
		r.name = plan->t[p->target].name;
		r.path = plan->t[p->target].path;
		r.calls = hits[i] - seen;
		watch_set_add(set, &r);
	}
	(void)w;
out:
	free(hits);
}

/* The report; db: the database it was read from (what it was made without), or NULL. */
static void print(struct watch *w, const struct watch_set *set, struct db *db, int *failed)
{
	struct watch_report_opts ro = { w->threads, w->processes, !w->no_hist };
	struct draw d;

	if (w->json) {
		struct json_writer jw;

		json_init(&jw, stdout, true);
		watch_report_json(set, db, &jw);
		if (json_finish(&jw))
			*failed = 1;
		return;
	}
	draw_init_file(&d, stdout, DRAW_UTF8 | (cli_use_color(w->color, stdout) ? DRAW_COLOR : 0));
	watch_report_draw(set, &d, &ro);
	if (db)
		incomplete_draw(&db, 1, &d, NULL);
	if (draw_file_finish(&d))
		*failed = errorf_errno("cannot write the report") ? 1 : 1;
}

/* --report: the results stored in an epoch. */
static int report(struct watch *w)
{
	struct watch_set set = WATCH_SET_INIT;
	const char *dir = db_default_path(w->dir);
	struct db *db;
	uint32_t seq;
	int failed = 0, r;

	if (!(db = db_open(dir, DB_READ)))
		return 1;
	if (db_epoch_resolve(db, w->epoch ? w->epoch : "latest", &seq)) {
		db_close(db);
		return 1;
	}
	r = db_watch_load(db, seq, &set);
	if (r == 1)
		failed = errorf("epoch %" PRIu32 " of '%s' has no stopwatch results", seq, dir) ? 1 : 1;
	else if (r < 0 && !db_damage_partial(db, seq))
		failed = 1;
	else  /* damaged results (recorded): an empty report that says why */
		print(w, &set, db, &failed);
	watch_set_release(&set);
	r = tool_exit_status(failed, db_damage_partial(db, 0));
	db_close(db);
	return r;
}

static int store_results(struct watch *w, const struct watch_set *set)
{
	const char *dir = w->dir ? w->dir : getenv("DCPI_DB");
	struct db *db;
	uint32_t *seqs = NULL, seq = 0;
	size_t n = 0;
	int r = -1;

	if (!dir || !*dir)
		return 0;
	if (!(db = db_open(dir, DB_CREATE)))
		return -1;
	if (db_epoch_seqs(db, &seqs, &n))
		goto out;
	if (n && !w->label) {
		seq = seqs[n - 1];
	} else {
		struct epoch_meta meta;

		epoch_meta_init(&meta);
		epoch_meta_fill_host(&meta);
		if (w->label)
			epoch_meta_set_label(&meta, w->label);
		if (w->argv) {
			size_t argc = 0;

			while (w->argv[argc])
				argc++;
			meta.command = xcalloc(argc + 1, sizeof(char *));
			for (size_t i = 0; i < argc; i++)
				meta.command[i] = xstrdup(w->argv[i]);
		}
		if (db_epoch_create(db, &meta) || db_epoch_close(db, meta.seq, 0)) {
			epoch_meta_release(&meta);
			goto out;
		}
		seq = meta.seq;
		epoch_meta_release(&meta);
	}
	r = db_watch_merge(db, seq, set);
	if (!r && w->verbose)
		fprintf(stderr, "%s: results stored in epoch %" PRIu32 " of %s\n", progname(), seq, dir);
out:
	free(seqs);
	db_close(db);
	return r;
}

static void say_plan(const struct watch_plan *plan, const struct watch_bias *b)
{
	for (size_t i = 0; i < plan->nt; i++) {
		const struct watch_target *t = &plan->t[i];

		fprintf(stderr, "%s: %s at %#" PRIx64 " of %s (offset %#" PRIx64 "), entry %s", progname(),
			t->name, t->vaddr, t->path, t->offset, t->entry_stepped ? "stepped" : "emulated");
		if (t->kind == WATCH_FUNC)
			fprintf(stderr, ", returns by %s (%s)",
				t->ret == WATCH_RET_EXITS ? "exit probes" : "uretprobe", t->ret_why);
		fputc('\n', stderr);
	}
	fprintf(stderr, "%s: probes' own cost per call (ns, wall/cpu): emulated entry %" PRIu64 "/%"
		PRIu64 " + uretprobe, %" PRIu64 "/%" PRIu64 " + exit probe; stepped entry %" PRIu64
		"/%" PRIu64 " + uretprobe, %" PRIu64 "/%" PRIu64 " + exit probe\n", progname(),
		b->wall[0][0], b->cpu[0][0], b->wall[0][1], b->cpu[0][1], b->wall[1][0], b->cpu[1][0],
		b->wall[1][1], b->cpu[1][1]);
}

static int build_plan(struct watch *w, struct watch_plan *plan)
{
	char buf[PATH_MAX];
	int r = 0;

	watch_plan_init(plan);
	plan->ret = (enum watch_ret_mode)w->ret;
	plan->verbose = w->verbose;
	if (w->pid > 0) {
		char exe[64];
		ssize_t n;

		plan->pid = (pid_t)w->pid;
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)w->pid);
		if ((n = readlink(exe, buf, sizeof(buf) - 1)) < 0)
			return errorf_errno("cannot read '%s'", exe);
		buf[n] = 0;
		plan->default_image = xstrdup(buf);
	} else if (w->argv) {
		if (!(plan->default_image = watch_which(w->argv[0])))
			return errorf("cannot find '%s' to run", w->argv[0]);
	}
	for (size_t i = 0; i < w->nfuncs; i++)
		r |= watch_plan_add_function(plan, w->funcs[i]);
	for (size_t i = 0; i < w->nbetween; i++)
		r |= watch_plan_add_between(plan, w->between[2 * i], w->between[2 * i + 1]);
	return r ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct watch_plan plan;
	struct watch_bias bias;
	struct watch_agg *agg;
	struct watch_session *s;
	struct watch_set set = WATCH_SET_INIT;
	struct watch_session_counts cnt;
	const char *names[WATCH_MAX_EVENTS];
	sigset_t mask, old;
	FILE *trace = NULL;
	int failed = 0, err;

	cli_init(argc, argv);
	argv = join_between(&argc, argv);
	parse_args(argc, argv);
	if (w.report)
		return report(&w);
	if (build_plan(&w, &plan))
		return 1;
	memset(&bias, 0, sizeof(bias));
	if (!w.raw)
		watch_calibrate(&plan, w.ev, w.nev, &bias);
	if (w.verbose)
		say_plan(&plan, &bias);
	if (w.trace_path && !(trace = fopen(w.trace_path, "we")))
		die_errno("cannot write '%s'", w.trace_path);
	if (trace)
		fprintf(trace, "# dcpiwatch trace: time_ns pid tid cpu what function [wall_ns cpu_ns%s%s]\n",
			w.nev ? " " : "", w.nev ? "events..." : "");
	for (unsigned k = 0; k < w.nev; k++)
		names[k] = w.ev[k].name;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	if ((w.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		die_errno("signalfd");
	if (w.argv) {
		/*
		 * The child maps the probed images before the probes are made: the
		 * kernel reads each probed instruction from its file when it first
		 * places the probe, and at the exec it would do so under the exec's
		 * locks and ignore a failure (the command then runs unprobed: a
		 * function that ran counted 0 times).  Placed in the child's
		 * mappings when the probes are opened, a failure is an error here.
		 */
		const char **maps = xcalloc(2 * plan.nt + 1, sizeof(*maps));
		size_t nmaps = 0;

		for (size_t i = 0; i < plan.nt; i++)
			if (!plan.t[i].kernel) {
				maps[nmaps++] = plan.t[i].path;
				if (plan.t[i].path_b)
					maps[nmaps++] = plan.t[i].path_b;
			}
		spawn_start_mapped(&w.child, w.argv, &old, maps, nmaps);
		free(maps);
	}

	struct watch_agg_opts ao = { &plan, w.nev + 1, names, w.all, w.raw ? NULL : &bias, trace };
	struct watch_session_opts so = { &plan, w.all ? -1 : w.pid > 0 ? (pid_t)w.pid : w.child.pid,
					 w.pid > 0, w.nev, w.ev, 512 };

	agg = watch_agg_new(&ao);
	if (!(s = watch_session_open(&so, agg))) {
		if (w.argv)
			spawn_abort(&w.child);
		return 1;
	}
	if (w.argv && (err = spawn_release(&w.child, w.argv[0]))) {
		errno = err;
		errorf_errno("cannot run '%s'", w.argv[0]);
		waitpid(w.child.pid, &w.status, 0);
		return err == ENOENT ? 127 : 126;
	}
	watch_loop(&w, s);
	watch_session_read(s, true);
	watch_agg_finish(agg, (uint64_t)time_monotonic_ns(), &set);
	add_unsampled(&w, &plan, s, &set);
	watch_session_counts(s, &cnt);
	if (cnt.garbled)
		warning("%" PRIu64 " bytes of the ring buffers did not parse", cnt.garbled);
	watch_session_free(s);
	if (trace && fclose(trace))
		failed = errorf_errno("cannot write '%s'", w.trace_path) ? 1 : 1;
	watch_set_sort(&set);
	print(&w, &set, NULL, &failed);
	if (store_results(&w, &set))
		failed = 1;
	watch_set_release(&set);
	watch_agg_free(agg);
	watch_plan_release(&plan);
	if (w.argv) {
		if (!w.child_done)
			waitpid(w.child.pid, &w.status, 0);
		if (WIFEXITED(w.status) && !failed)
			return WEXITSTATUS(w.status);
		if (WIFSIGNALED(w.status) && !failed)
			return 128 + WTERMSIG(w.status);
	}
	return failed;
}
