/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/session.c - a session from start to end (tui/session.h): set up, the
 * loop that turns keys and script lines into requests, timings, and the
 * report routine that sends every message to the status line.
 */
#include "config.h"
#include "tui/session.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/damage.h"
#include "db/db.h"
#include "tui/command.h"
#include "tui/data-epoch.h"
#include "tui/display.h"
#include "tui/prompt.h"
#include "tui/script.h"
#include "tui/views.h"

#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CPU time of the process so far, every thread. */
static int64_t process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The session the report routine talks to (it gets no context). */
static struct tui *report_tui;

/*
 * Every errorf()/warning() of the session's main thread lands here, and
 * those of its jobs when they are collected (the engine keeps them with the
 * job meanwhile, core/workpool.h): in the status line and the messages
 * view.  Only a fatal error ends the program, with the terminal restored
 * first.
 */
static void report(enum report_level level, const char *msg)
{
	static const char *const prefix[] = { "warning", "error", "fatal" };

	if (level == REPORT_FATAL || !report_tui) {
		if (level == REPORT_FATAL)
			display_emergency();
		fprintf(stderr, "%s: %s: %s\n", progname(), prefix[level], msg);
		return;
	}
	tui_message(report_tui, level, msg);
}


/* ---- the session --------------------------------------------------------- */

static void open_database(struct tui *t)
{
	uint32_t seq;

	sources_set_db(&t->src, db_open(t->db_path, DB_READ));
	if (t->src.env.db && !db_epoch_resolve(t->src.env.db, t->opt.epoch, &seq))
		t->epoch = seq;
}

static void first_views(struct tui *t)
{
	struct view_loc loc = { .epoch = t->epoch };

	tui_push(t, &epochs_view_ops, &loc);
	if (t->epoch)
		tui_push(t, &images_view_ops, &loc);
}

int tui_init(struct tui *t, const struct tui_options *opt)
{
	memset(t, 0, sizeof(*t));
	t->opt = *opt;
	t->timing.start_ns = time_monotonic_ns();
	t->timing.start_cpu_ns = process_cpu_ns();
	sources_init(&t->src, opt->sync_jobs);
	if (opt->event >= 0) {
		t->src.env.event = opt->event;
		t->event_chosen = true;
	}
	t->src.env.force = opt->force;
	t->src.env.debug_dir = opt->debug_dir;
	if (opt->script) {
		t->script = XNEW(struct script);
		if (script_load(t->script, opt->script))
			return -1;
		t->opt.headless = true;
	}
	if (display_open(t))
		return -1;
	report_tui = t;
	set_report_routine(report);
	prompt_init(t, &(struct prompt_hooks){ .command = tui_command, .complete = tui_complete });
	t->src.env.analysis = data_ctx_new(&(struct data_ctx_opts){ .debug_dir = opt->debug_dir,
							.substitutions = opt->substitutions,
							.n_substitutions = opt->n_substitutions });
	t->db_path = xstrdup(db_default_path(opt->db_path));
	open_database(t);
	first_views(t);
	return 0;
}

void tui_release(struct tui *t)
{
	tui_pop_to(t, 0);
	if (t->depth)
		view_free(t->stack[--t->depth]);
	prompt_release(t);
	display_close(t);
	set_report_routine(NULL);
	report_tui = NULL;
	if (t->timing.error)
		errorf("%s", t->timing.error);  /* on stderr, the terminal restored */
	free(t->timing.error);
	sources_release(&t->src);
	data_ctx_free(t->src.env.analysis);
	if (t->src.env.db)
		db_close(t->src.env.db);
	if (t->script) {
		script_release(t->script);
		free(t->script);
	}
	for (size_t i = 0; i < t->n_msgs; i++)
		free(t->msgs[i].text);
	free(t->msgs);
	free(t->status);
	free(t->search);
	if (t->search_ok)
		view_pattern_release(&t->search_pat);
	free(t->db_path);
	free(t->timing.key_ns);
	free(t->timing.settle_ns);
}

/* ---- the loop ------------------------------------------------------------ */

static bool pending_background(struct tui *t, const char *key)
{
	struct job *job = jobs_find(&t->src.jobs, key);

	return job && job->background;
}

static bool all_loaded(struct tui *t)
{
	for (size_t i = 0; i < t->depth; i++)
		if (t->stack[i]->pending && !pending_background(t, t->stack[i]->pending))
			return false;
	return !jobs_busy_foreground(&t->src.jobs);
}

static void note_paint(struct tui *t, int64_t key_start)
{
	int64_t now = time_monotonic_ns();

	if (!t->timing.first_paint_ns)
		t->timing.first_paint_ns = now - t->timing.start_ns;
	if (!t->timing.first_screen_ns && all_loaded(t)) {
		t->timing.first_screen_ns = now - t->timing.start_ns;
		t->timing.first_screen_cpu_ns = process_cpu_ns() - t->timing.start_cpu_ns;
	}
	if (key_start) {
		size_t alloc = t->timing.alloc_keys;

		ALLOC_GROW(t->timing.key_ns, t->timing.n_keys + 1, t->timing.alloc_keys);
		ALLOC_GROW(t->timing.settle_ns, t->timing.n_keys + 1, alloc);
		t->timing.settle_ns[t->timing.n_keys] = now - key_start;
		t->timing.key_ns[t->timing.n_keys++] = now - key_start;
	}
}

/* -1 if the file cannot be written: the session fails (a benchmark must not read an old one). */
static int write_timing(struct tui *t)
{
	FILE *f;

	if (!t->opt.timing)
		return 0;
	if (!(f = fopen(t->opt.timing, "w")) || fprintf(f, "first_paint_ns %" PRId64 "\n",
							 t->timing.first_paint_ns) < 0) {
		t->timing.error = xasprintf("cannot write '%s': %s", t->opt.timing, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	fprintf(f, "first_screen_ns %" PRId64 "\nfirst_screen_cpu_ns %" PRId64 "\n",
		t->timing.first_screen_ns, t->timing.first_screen_cpu_ns);
	for (size_t i = 0; i < t->timing.n_keys; i++)
		fprintf(f, "key_ns %" PRId64 "\nsettle_ns %" PRId64 "\n", t->timing.key_ns[i],
			t->timing.settle_ns[i]);
	if (ferror(f) | fclose(f)) {
		t->timing.error = xasprintf("cannot write '%s': %s", t->opt.timing, strerror(errno));
		return -1;
	}
	return 0;
}

/* One step of a script: every job finished first, so screens are deterministic. */
static int64_t script_step(struct tui *t)
{
	const struct script_item *it = script_next(t->script);
	int64_t start = time_monotonic_ns();

	if (!it) {
		t->quit = true;
		return 0;
	}
	if (it->kind == SCRIPT_COMMAND) {
		/* Like typing it, except that dumps keep what the screen shows. */
		if (strncmp(it->command, "save-", 5))
			tui_status_clear(t);
		tui_command(t, it->command);
		return 0;
	}
	tui_key(t, it->key);
	return start;
}

static int next_key(struct tui *t)
{
	int key = display_getkey(t, 0);

	if (key != ERR)
		return key;
	/* Woken by a key, a finished job, a signal (SIGWINCH), or to show progress. */
	display_wait(t, jobs_wake_fd(&t->src.jobs), jobs_busy(&t->src.jobs) ? 100 : -1);
	return display_getkey(t, 0);
}

int tui_run(struct tui *t)
{
	int64_t key_start = 0, settle_start;

	for (;;) {
		/*
		 * A script times a key to the screen with its data, then waits
		 * for the background work too (deterministic screens).
		 */
		if (t->script)
			jobs_wait_foreground(&t->src.jobs);
		tui_collect(t);
		display_redraw(t);
		note_paint(t, key_start);
		settle_start = key_start;
		key_start = 0;
		while (t->script) {
			bool busy = jobs_busy(&t->src.jobs);

			if (busy)
				jobs_wait_idle(&t->src.jobs);
			/* a job may finish after the collect above, and finished jobs start others */
			if (!tui_collect(t) && !busy)
				break;
			display_redraw(t);
			if (settle_start && t->timing.n_keys)
				t->timing.settle_ns[t->timing.n_keys - 1] =
					time_monotonic_ns() - settle_start;
		}
		if (t->quit)
			break;
		if (t->script) {
			key_start = script_step(t);
			continue;
		}
		int key = next_key(t);

		if (key != ERR)
			tui_key(t, key);
	}
	if (write_timing(t))
		return 1;
	/* the database could not be opened (said on the screen): not a success */
	if (!t->src.env.db)
		return 1;
	/* what was shown was made from partial data (docs/dcpi.7, EXIT STATUS) */
	return db_damage_partial(t->src.env.db, 0) ? 2 : 0;
}
