/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpirun - profile one command and everything it starts.
 *
 *   dcpirun [-d DIR] [-e EVENTS] [-F HZ|-c PERIOD] [--label L] [--append] -- CMD ARGS...
 *
 * The command is started stopped (waiting on a pipe), the events are
 * opened on it per CPU with inherit and enable_on_exec, then it is released
 * to exec.  dcpirun forwards the signals sent to it, and exits with the
 * command's status once the command has exited and its samples are stored.
 */
#include "config.h"
#include "collect/collector.h"
#include "collect/snapshot.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/spawn.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Signals dcpirun passes on to the command. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				 SIGWINCH };

struct run {
	const char *dir;
	const char *label;
	bool append, snapshot, quiet;
	char **argv;
	struct collect_options opt;
	struct spawn child;         /* the command, held before exec */
	int sigfd;
	int status;                 /* the child's wait status */
};

static void parse_args(struct run *r, int argc, char **argv)
{
	int first;
	const struct cli_option options[] = {
		OPT_DB(&r->dir),
		COLLECT_OPTIONS(&r->opt),
		OPT_STRING(0, "label", &r->label, "L", "label of the new epoch"),
		OPT_BOOL(0, "append", &r->append, "add to the latest epoch instead of starting one"),
		OPT_SET_BOOL(0, "no-snapshot", &r->snapshot, false,
			     "do not copy the profiled binaries into the database"),
		OPT_BOOL('q', "quiet", &r->quiet, "no summary line"),
		OPT_ARGUMENT("CMD [ARGS...]", "the command to profile"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpirun [-d DIR] [-e EVENTS] [-F HZ|-c PERIOD] [--label L] [--append] -- CMD [ARGS...]",
		.about = "Profiles CMD and every process it starts, into a new epoch of the profile\n"
			 "database, and exits with CMD's exit status.",
		.options = options,
		/* stop at the command, so its options stay its own */
		.flags = CLI_STOP_AT_ARG,
		.max_args = -1,
	};

	first = cli_parse(argc, argv, &cmd);
	if (first >= argc)
		die("no command to run (usage: dcpirun [OPTIONS] -- CMD [ARGS...])");
	if (r->label && collect_check_label(r->label))
		exit(1);
	if (r->label && r->append)
		die("--label names a new epoch; it cannot be used with --append");
	r->argv = argv + first;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* Handles pending signals; returns true once the child has exited. */
static bool handle_signals(struct run *r, struct collector *c)
{
	struct signalfd_siginfo si;
	bool done = false;

	while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		/*
		 * Signals from the terminal reach the command's process group
		 * directly; pass on only those sent to dcpirun itself.
		 */
		if (si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE)
			kill(r->child.pid, (int)si.ssi_signo);
	}
	/* Never waiting: a burst's tracer may have reaped it, or hold it seized. */
	if (collector_wait_child(c, r->child.pid, &r->status))
		done = true;
	return done;
}

static void run_loop(struct run *r, struct collector *c)
{
	struct pollfd fds[1025];

	for (;;) {
		int64_t now = time_monotonic_ns(), next = collector_tick(c, now);
		size_t n = collector_pollfds(c, fds, 1024);
		int timeout = next > now ? (int)((next - now) / 1000000) + 1 : 0;

		fds[n].fd = r->sigfd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		if (poll(fds, n + 1, timeout) < 0 && errno != EINTR)
			die_errno("poll");
		collector_polled(c, fds, n);
		collector_read(c, false);
		if (handle_signals(r, c))
			return;
	}
}

static void begin_epoch(struct run *r, struct collector *c, struct db *db)
{
	struct store_epoch_opts eo = { 0, r->label, r->argv };

	if (r->append) {
		uint32_t *seqs;
		size_t n;

		if (db_epoch_seqs(db, &seqs, &n))
			exit(1);
		/* An empty database: appending starts the first epoch. */
		if (n)
			eo.continue_seq = seqs[n - 1];
		free(seqs);
	}
	if (collector_begin(c, &eo))
		die("cannot start an epoch in '%s'", r->dir);
}

/*
 * Emulated bursts: how many, how far, which ended early (before the limit
 * or a system call) and at which instructions, the windows matched.
 */
static void burst_summary(const struct collect_summary *s)
{
	const struct emburst_report *r = &s->emulated;
	uint64_t early = 0;

	for (int i = 0; i < PATHS_END__COUNT; i++)
		if (i != PATHS_END_LIMIT && i != PATHS_END_SYSCALL)
			early += r->ends[i];
	fprintf(stderr, ", %" PRIu64 " bursts of %" PRIu64 " instructions (%.1f%% of the CPU "
		"sampled; %.1f%% ended early", r->bursts, r->insns, 100 * r->share,
		r->bursts ? 100.0 * (double)early / (double)r->bursts : 0.0);
	if (*r->end_names)
		fprintf(stderr, ", at %s", r->end_names);
	if (r->unverified)
		fprintf(stderr, "; %" PRIu64 " unverified", r->unverified);
	/* Never just "lost": why, by cause. */
	if (*s->burst_off)
		fprintf(stderr, "; bursts off: %s", s->burst_off);
	if (r->lost)
		fprintf(stderr, "; %" PRIu64 " lost (%s)", r->lost, *s->burst_lost ? s->burst_lost : "?");
	if (*s->burst_not_tried)
		fprintf(stderr, "; not tried: %s", s->burst_not_tried);
	fprintf(stderr, "; %" PRIu64 " stops, p99 %.0f us, longest %.0f us", r->stops,
		(double)r->stop_p99_ns / 1e3, (double)r->stop_max_ns / 1e3);
	fprintf(stderr, "; %" PRIu64 " windows from %" PRIu64 " trails, from the %u%s sample "
		"after a stop)", r->windows, r->trails, r->skip + 1,
		r->skip == 0 ? "st" : r->skip == 1 ? "nd" : r->skip == 2 ? "rd" : "th");
}

static void summary(struct run *r, struct collector *c, unsigned snapshots)
{
	struct collect_summary s;

	collector_summary(c, &s);
	if (r->quiet)
		return;
	fprintf(stderr, "%s: %" PRIu64 " samples (%s), %" PRIu64 " lost, %" PRIu64 " throttled, %"
		PRIu64 " unknown (%.2f%%)", progname(), s.samples, s.events, s.lost, s.throttled,
		s.unknown, s.samples ? 100.0 * (double)s.unknown / (double)s.samples : 0.0);
	if (s.user_only)
		fprintf(stderr, ", user space only");
	if (s.dropped)
		fprintf(stderr, ", %" PRIu64 " DROPPED", s.dropped);
	if (s.stacks) {
		fprintf(stderr, ", %.1f%% of %" PRIu64 " user stacks complete (%" PRIu64
			" unwind tables, ",
			s.user_stacks ? 100.0 * (double)s.complete_stacks / (double)s.user_stacks : 0.0,
			s.user_stacks, s.tables);
		if (s.tables_cached)
			fprintf(stderr, "%" PRIu64 " of them from the database, ", s.tables_cached);
		fprintf(stderr, "%" PRIu64 " binaries without)", s.table_failures);
	}
	if (r->opt.values)
		fprintf(stderr, ", %" PRIu64 " value samples (%" PRIu64 " paired%s)", s.value_samples,
			s.value_pairs, s.value_dropped ? ", some DROPPED at the memory cap" : "");
	if (r->opt.burst_budget > 0 && !s.burst_emulated)
		fprintf(stderr, ", %" PRIu64 " bursts of %" PRIu64 " steps (%.1f%% of the time)",
			s.bursts, s.burst_steps, 100 * s.burst_share);
	if (s.burst_emulated)
		burst_summary(&s);
	if (s.calib_cycles > 0)
		fprintf(stderr, ", 1 sample = %.0f cycles (calibrated in %.0f ms%s%s)", s.calib_cycles,
			(double)s.calib_ns / 1e6, s.calib_problem[0] ? "; " : "", s.calib_problem);
	fprintf(stderr, "; epoch %" PRIu32 " of %s", s.epoch, r->dir);
	if (snapshots)
		fprintf(stderr, ", %u new binary snapshot%s", snapshots, snapshots == 1 ? "" : "s");
	fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
	struct run r;
	struct collector *c;
	struct db *db;
	sigset_t mask, old;
	unsigned snapshots = 0;
	int err, code, failed = 0;

	cli_init(argc, argv);
	memset(&r, 0, sizeof(r));
	r.snapshot = true;
	collect_options_init(&r.opt);
	parse_args(&r, argc, argv);
	r.dir = db_default_path(r.dir);
	if (!(db = db_open(r.dir, DB_CREATE)))
		return 1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	if ((r.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		die_errno("signalfd");

	spawn_start(&r.child, r.argv, &old);
	r.opt.pid = r.child.pid;
	if (!(c = collector_new(&r.opt, db))) {
		spawn_abort(&r.child);
		return 1;
	}
	/* Before the command runs, so that it does not compete for a CPU. */
	collector_calibrate(c);
	if ((err = spawn_release(&r.child, r.argv[0]))) {
		/* It could not exec: it has exited already, or is about to. */
		waitpid(r.child.pid, &r.status, __WALL);
		errno = err;
		errorf_errno("cannot run '%s'", r.argv[0]);
		collector_free(c);
		db_close(db);
		return err == ENOENT ? 127 : 126;
	}
	begin_epoch(&r, c, db);
	run_loop(&r, c);
	if (collector_finish(c))
		failed = 1;
	if (r.snapshot && collector_snapshot(c, SNAPSHOT_MAX_BYTES, &snapshots))
		failed = 1;
	summary(&r, c, snapshots);
	collector_free(c);
	db_close(db);
	code = exit_code(r.status);
	/* Exit with the command's status, but never report success for lost profiles. */
	return failed && !code ? 1 : code;
}
