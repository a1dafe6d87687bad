/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/session.h"

#include "core/die.h"
#include "core/event.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "tui/data.h"
#include "tui/data-proc.h"
#include "tui/display.h"
#include "tui/prompt.h"
#include "tui/script.h"
#include "tui/source.h"
#include "tui/views.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages -------------------------------------------------------------- */

/* The session the report routine talks to (it gets no context). */
static struct tui *report_tui;

static void status_set(struct tui *t, enum report_level level, bool info, const char *msg)
{
	const char *nl = strchr(msg, '\n');

	free(t->status);
	/* a message of several lines: its first, the rest in the messages view */
	t->status = nl ? xasprintf("%.*s (M: more)", (int)(nl - msg), msg) : xstrdup(msg);
	t->status_level = level;
	t->status_is_info = info;
	t->status_more = 0;
}

static void status_clear(struct tui *t)
{
	free(t->status);
	t->status = NULL;
	t->status_more = 0;
}

static bool logged(struct tui *t, const char *msg)
{
	for (size_t i = 0; i < t->n_msgs; i++)
		if (!strcmp(t->msgs[i].text, msg))
			return true;
	return false;
}

/*
 * Logs a message: once (the same bad file is reported by several loaders),
 * and at most TUI_MESSAGES_MAX of them (a damaged epoch of 20,000 images
 * has as many bad files); the rest are counted.
 */
static void tui_message(struct tui *t, enum report_level level, const char *msg)
{
	if (logged(t, msg)) {
		if (!t->status)
			status_set(t, level, false, msg);
		return;
	}
	if (t->n_msgs >= TUI_MESSAGES_MAX) {
		t->msgs_dropped++;
		if (!t->status)
			status_set(t, level, false, msg);
		else
			t->status_more++;
		return;
	}
	ALLOC_GROW(t->msgs, t->n_msgs + 1, t->alloc_msgs);
	t->msgs[t->n_msgs].level = level;
	t->msgs[t->n_msgs].text = xstrdup(msg);
	t->n_msgs++;
	for (size_t i = 0; i < t->depth; i++)
		if (t->stack[i]->ops == &messages_view_ops)
			t->stack[i]->ops->reload(t->stack[i]);
	if (!t->status || t->status_is_info)
		status_set(t, level, false, msg);
	else
		t->status_more++;
}

/*
 * Every errorf()/warning() of the session lands here: in a job it is kept
 * with the job (shown when collected), otherwise in the status line and the
 * messages view.  Only a fatal error ends the program, with the terminal
 * restored first.
 */
static void report(enum report_level level, const char *msg)
{
	static const char *const prefix[] = { "warning", "error", "fatal" };
	struct job *job = job_current();

	if (level == REPORT_FATAL || !report_tui) {
		if (level == REPORT_FATAL)
			display_emergency();
		fprintf(stderr, "%s: %s: %s\n", progname(), prefix[level], msg);
		return;
	}
	if (job) {
		job_add_message(job, level, msg);
		return;
	}
	tui_message(report_tui, level, msg);
}

void tui_info(struct tui *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (t->status && !t->status_is_info)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	status_set(t, REPORT_WARNING, true, sb.buf);
	strbuf_release(&sb);
}

unsigned tui_draw_flags(const struct tui *t)
{
	return display_ascii(t) ? DRAW_ASCII : 0;
}

bool tui_has_db(const struct tui *t)
{
	return t->db != NULL;
}

uint32_t tui_epoch(const struct tui *t)
{
	return t->epoch;
}

int tui_event(const struct tui *t)
{
	return t->event;
}

uint32_t tui_mark(const struct tui *t, int k)
{
	return t->marks[k ? 1 : 0];
}

const struct tui_message *tui_messages(const struct tui *t, size_t *n, size_t *dropped)
{
	*n = t->n_msgs;
	*dropped = t->msgs_dropped;
	return t->msgs;
}

/* ---- views ----------------------------------------------------------------- */

static const struct view_ops *const registry[] = {
#define VIEW_REGISTER_(name) &name##_view_ops,
	VIEW_INFO(VIEW_REGISTER_)
#undef VIEW_REGISTER_
};

const struct view_ops *tui_view_ops(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

struct view *tui_view(struct tui *t)
{
	return t->depth ? t->stack[t->depth - 1] : NULL;
}

int tui_push(struct tui *t, const struct view_ops *ops, const struct view_loc *loc)
{
	struct view *v;

	if (t->depth == TUI_STACK_MAX)
		return errorf("too many views open (%d): go back first", TUI_STACK_MAX);
	if (!(v = view_new(t, ops, loc)))
		return -1;
	t->stack[t->depth++] = v;
	t->dirty_views = true;
	return 0;
}

int tui_open_view(struct tui *t, const char *name, const struct view_loc *loc)
{
	const struct view_ops *ops = tui_view_ops(name);

	if (!ops) {
		warning("the %s view is not available", name);
		return -1;
	}
	return tui_push(t, ops, loc);
}

void tui_pop_to(struct tui *t, size_t depth)
{
	while (t->depth > depth && t->depth > 1)
		view_free(t->stack[--t->depth]);
	t->dirty_views = true;
}

/* ---- data (tui/source.h) ---------------------------------------------------- */

void tui_env(struct tui *t, struct tui_env *env)
{
	env->db = t->db;
	env->event = t->event;
	env->force = t->force;
	env->norm_period = t->norm_period;
	env->debug_dir = t->opt.debug_dir;
	env->analysis = t->data;
}

/* The job of src for req (its cache key in key), submitted if submit and missing. */
static struct job *source_job(struct tui *t, const struct tui_source *src, const void *req,
			      bool submit, struct strbuf *key)
{
	struct strbuf title = STRBUF_INIT;
	struct tui_env env;
	struct job *job;
	void *arg;

	tui_env(t, &env);
	strbuf_addf(key, "%s/", src->name);
	src->key(&env, req, key);
	if ((job = jobs_find(&t->jobs, key->buf)) || !submit)
		return job;
	src->title(&env, req, &title);
	arg = src->arg ? src->arg(&env, req) : NULL;
	job = (src->background ? jobs_submit_background : jobs_submit)(
		&t->jobs, key->buf, title.buf, src->run, arg, src->free_arg, src->free_result);
	strbuf_release(&title);
	return job;
}

const void *tui_load(struct tui *t, const struct tui_source *src, const void *req,
		     struct view *waiter)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job;
	const void *r = NULL;

	if (!t->db)
		return NULL;
	job = source_job(t, src, req, true, &key);
	if (job->collected)
		r = job->result;
	else if (waiter)
		view_wait(waiter, key.buf);
	strbuf_release(&key);
	return r;
}

const void *tui_load_partial(struct tui *t, const struct tui_source *src, const void *req,
			     struct view *waiter, bool *complete)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job;
	const void *r;

	*complete = false;
	if (!t->db)
		return NULL;
	job = source_job(t, src, req, true, &key);
	*complete = job->collected;
	if (!job->collected && waiter)
		view_wait(waiter, key.buf);
	r = src->partial ? src->partial(job) : job->result;
	strbuf_release(&key);
	return r;
}

const void *tui_peek(struct tui *t, const struct tui_source *src, const void *req)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job = t->db ? source_job(t, src, req, false, &key) : NULL;

	strbuf_release(&key);
	return job && job->collected ? job->result : NULL;
}

struct foreach_ctx {
	void (*fn)(const void *result, void *data);
	void *data;
};

static void foreach_one(struct job *job, void *data)
{
	struct foreach_ctx *c = data;

	if (job->result)
		c->fn(job->result, c->data);
}

void tui_foreach_loaded(struct tui *t, const struct tui_source *src, const char *prefix,
			void (*fn)(const void *result, void *data), void *data)
{
	struct strbuf key = STRBUF_INIT;
	struct foreach_ctx c = { fn, data };

	strbuf_addf(&key, "%s/%s", src->name, prefix);
	jobs_foreach_collected(&t->jobs, key.buf, foreach_one, &c);
	strbuf_release(&key);
}

int tui_open_procedure(struct tui *t, uint32_t seq, const char *image, const char *spec)
{
	struct view_loc loc = { .epoch = seq, .image = (char *)image, .procedure = (char *)spec };

	if (!seq)
		return errorf("no epoch to look for procedures in");
	return tui_open_view(t, "procedure", &loc);
}

static void job_finished(struct job *job, void *data)
{
	struct tui *t = data;

	for (size_t i = 0; i < t->depth; i++) {
		struct view *v = t->stack[i];

		if (v->pending && !strcmp(v->pending, job->key)) {
			view_wait(v, NULL);
			if (v->ops->reload)
				v->ops->reload(v);
		}
	}
	t->dirty_views = true;
}

size_t tui_collect(struct tui *t)
{
	return jobs_collect(&t->jobs, job_finished, t);
}

static void reload_views(struct tui *t, bool following_only)
{
	for (size_t i = 0; i < t->depth; i++) {
		struct view *v = t->stack[i];

		if (following_only && !(v->ops->flags & VIEW_FOLLOWS_EPOCH))
			continue;
		if (v->ops->flags & VIEW_FOLLOWS_EPOCH)
			v->loc.epoch = t->epoch;
		view_wait(v, NULL);
		if (v->ops->reload)
			v->ops->reload(v);
	}
	t->dirty_views = true;
}

void tui_set_epoch(struct tui *t, uint32_t seq)
{
	t->epoch = seq;
	reload_views(t, true);
}

void tui_set_force(struct tui *t, bool force)
{
	t->force = force;
	reload_views(t, false);
}

void tui_set_norm_period(struct tui *t, bool period)
{
	t->norm_period = period;
	reload_views(t, false);
}

void tui_set_event(struct tui *t, int ev)
{
	t->event = ev;
	t->event_chosen = true;
	reload_views(t, false);
}

void tui_default_event(struct tui *t, const bool events[])
{
	int ev;

	if (t->event >= 0 && events[t->event])
		return;
	if ((ev = data_default_event(events)) < 0)
		return;
	if (t->event_chosen && t->event >= 0)
		tui_info(t, "no %s samples here: showing %s", event_name((enum dcpi_event)t->event),
			 event_name((enum dcpi_event)ev));
	t->event = ev;
	t->event_chosen = false;
}

void tui_epoch_name(struct tui *t, uint32_t seq, struct strbuf *sb)
{
	const struct db_epoch *e = epochs_data_find(tui_peek(t, &epochs_source, NULL), seq);

	strbuf_addf(sb, "%" PRIu32, seq);
	if (e && e->meta_ok && e->meta.label) {
		char *label = display_safe(e->meta.label);

		strbuf_addf(sb, " (%s)", label);
		free(label);
	}
}

void tui_toggle_mark(struct tui *t, uint32_t seq)
{
	if (t->marks[0] == seq) {
		t->marks[0] = t->marks[1];
		t->marks[1] = 0;
	} else if (t->marks[1] == seq) {
		t->marks[1] = 0;
	} else if (!t->marks[0]) {
		t->marks[0] = seq;
	} else if (!t->marks[1]) {
		t->marks[1] = seq;
	} else {
		t->marks[0] = t->marks[1];
		t->marks[1] = seq;
	}
}

char tui_mark_of(const struct tui *t, uint32_t seq)
{
	if (seq && t->marks[0] == seq)
		return 'A';
	if (seq && t->marks[1] == seq)
		return 'B';
	return 0;
}

/* ---- the session --------------------------------------------------------- */

static void open_database(struct tui *t)
{
	uint32_t seq;

	t->db = db_open(t->db_path, DB_READ);
	if (t->db && !db_epoch_resolve(t->db, t->opt.epoch, &seq))
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
	t->event = -1;
	t->timing.start_ns = time_monotonic_ns();
	if (opt->event >= 0) {
		t->event = opt->event;
		t->event_chosen = true;
	}
	jobs_init(&t->jobs, opt->sync_jobs);
	t->force = opt->force;
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
	prompt_init(t);
	t->data = data_ctx_new(&(struct data_ctx_opts){ .debug_dir = opt->debug_dir,
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
	jobs_release(&t->jobs);
	data_ctx_free(t->data);
	if (t->db)
		db_close(t->db);
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

/* ---- input ------------------------------------------------------------------ */

void tui_key(struct tui *t, int key)
{
	enum request req;

	key = key_normalize(key);
	if (key == KEY_RESIZE) {
		display_layout(t);
		return;
	}
	status_clear(t);
	req = key_request(key);
	if (req == REQ_NONE) {
		struct strbuf sb = STRBUF_INIT;

		key_describe(key, &sb);
		errorf("no request is bound to '%s' (? shows the keys)", sb.buf);
		strbuf_release(&sb);
		return;
	}
	tui_request(t, req, NULL, true);
}

void tui_command(struct tui *t, const char *line)
{
	struct strbuf name = STRBUF_INIT, arg = STRBUF_INIT;
	size_t n;
	enum request req;

	line += strspn(line, " \t");
	if (!*line)
		return;
	n = strcspn(line, " \t");
	strbuf_add(&name, line, n);
	line += n;
	line += strspn(line, " \t");
	strbuf_addstr(&arg, line);
	strbuf_rtrim(&arg);
	req = request_lookup(name.buf);
	if (req == REQ_NONE)
		errorf("unknown command ':%s' (? shows the commands)", name.buf);
	else
		tui_request(t, req, arg.len ? arg.buf : NULL, false);
	strbuf_release(&name);
	strbuf_release(&arg);
}

/* Arguments a key cannot supply: the prompt asks for them. */
static bool key_needs_prompt(enum arg_kind kind)
{
	return kind != ARG_NONE && kind != ARG_EPOCH_PAIR && kind != ARG_NORM;
}

static bool arg_required(enum arg_kind kind)
{
	return kind != ARG_NONE && kind != ARG_EPOCH_PAIR && kind != ARG_OPT_TEXT &&
	       kind != ARG_NORM;
}

static void prompt_for(struct tui *t, const struct request_info *info)
{
	struct strbuf sb = STRBUF_INIT;

	if (info->req == REQ_SEARCH) {
		tui_session_request(t, REQ_PROMPT, "/");
		return;
	}
	strbuf_addf(&sb, "%s ", info->name);
	tui_session_request(t, REQ_PROMPT, sb.buf);
	strbuf_release(&sb);
}

void tui_request(struct tui *t, enum request req, const char *arg, bool from_key)
{
	const struct request_info *info = request_info(req);
	struct view *v = tui_view(t);

	if (!arg || !*arg) {
		arg = NULL;
		if (from_key && key_needs_prompt(info->arg)) {
			prompt_for(t, info);
			return;
		}
		if (arg_required(info->arg)) {
			errorf("':%s' needs an argument", info->name);
			return;
		}
	}
	if (v && v->ops->request && v->ops->request(v, req, arg) == VIEW_DONE)
		return;
	if (v && view_request(v, req, arg) == VIEW_DONE)
		return;
	tui_session_request(t, req, arg);
}

/* ---- the loop ------------------------------------------------------------ */

static bool pending_background(struct tui *t, const char *key)
{
	struct job *job = jobs_find(&t->jobs, key);

	return job && job->background;
}

static bool all_loaded(struct tui *t)
{
	for (size_t i = 0; i < t->depth; i++)
		if (t->stack[i]->pending && !pending_background(t, t->stack[i]->pending))
			return false;
	return !jobs_busy_foreground(&t->jobs);
}

static void note_paint(struct tui *t, int64_t key_start)
{
	int64_t now = time_monotonic_ns();

	if (!t->timing.first_paint_ns)
		t->timing.first_paint_ns = now - t->timing.start_ns;
	if (!t->timing.first_screen_ns && all_loaded(t))
		t->timing.first_screen_ns = now - t->timing.start_ns;
	if (key_start) {
		size_t alloc = t->timing.alloc_keys;

		ALLOC_GROW(t->timing.key_ns, t->timing.n_keys + 1, t->timing.alloc_keys);
		ALLOC_GROW(t->timing.settle_ns, t->timing.n_keys + 1, alloc);
		t->timing.settle_ns[t->timing.n_keys] = now - key_start;
		t->timing.key_ns[t->timing.n_keys++] = now - key_start;
	}
}

static void write_timing(struct tui *t)
{
	FILE *f;

	if (!t->opt.timing)
		return;
	if (!(f = fopen(t->opt.timing, "w"))) {
		errorf_errno("cannot write '%s'", t->opt.timing);
		return;
	}
	fprintf(f, "first_paint_ns %" PRId64 "\nfirst_screen_ns %" PRId64 "\n",
		t->timing.first_paint_ns, t->timing.first_screen_ns);
	for (size_t i = 0; i < t->timing.n_keys; i++)
		fprintf(f, "key_ns %" PRId64 "\nsettle_ns %" PRId64 "\n", t->timing.key_ns[i],
			t->timing.settle_ns[i]);
	fclose(f);
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
			status_clear(t);
		tui_command(t, it->command);
		return 0;
	}
	tui_key(t, it->key);
	return start;
}

int tui_next_key(struct tui *t)
{
	int key = display_getkey(t, 0);

	if (key != ERR)
		return key;
	/* Woken by a key, a finished job, a signal (SIGWINCH), or to show progress. */
	display_wait(t, jobs_wake_fd(&t->jobs), jobs_busy(&t->jobs) ? 100 : -1);
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
			jobs_wait_foreground(&t->jobs);
		tui_collect(t);
		display_redraw(t);
		note_paint(t, key_start);
		settle_start = key_start;
		key_start = 0;
		while (t->script) {
			bool busy = jobs_busy(&t->jobs);

			if (busy)
				jobs_wait_idle(&t->jobs);
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
		int key = tui_next_key(t);

		if (key != ERR)
			tui_key(t, key);
	}
	write_timing(t);
	/* the database could not be opened (said on the screen): not a success */
	return t->db ? 0 : 1;
}
