/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/source.h - where a view's data comes from.  A data source is one
 * kind of data (the epochs, the images of an epoch, the procedures of an
 * image, a procedure analysed, two epochs compared): how to name a
 * request for it, and how to load it on the worker thread.  A view asks
 * with tui_load(); the session looks the request up in its cache (tui/job.h),
 * starts a job if it is missing, and reloads the view when the job is done.
 *
 * So a new view that shows new data brings its own source, in its own
 * tui/data-NAME.c and .h, next to the analysis it calls:
 *
 *   struct callers_req { uint32_t seq; const char *image, *spec; };   // what a view asks
 *
 *   static void callers_key(const struct tui_env *env, const void *req, struct strbuf *key)
 *   {
 *           const struct callers_req *r = req;
 *           strbuf_addf(key, "%" PRIu32 "/%d/%s/%s", r->seq, env->force,
 *                       r->image ? r->image : "*", r->spec);
 *   }
 *   ... callers_title, callers_arg (a copy of req and what it needs of env),
 *   ... callers_run (a job: tui/job.h's rules), callers_free_arg, callers_free
 *
 *   const struct tui_source callers_source = {
 *           .name = "callers", .key = callers_key, .title = callers_title,
 *           .arg = callers_arg, .free_arg = callers_free_arg,
 *           .run = callers_run, .free_result = callers_free,
 *   };
 *
 * and the view, in its reload op:
 *
 *   const struct callers_data *cd =
 *           tui_load(v->tui, &callers_source, &(struct callers_req){ ... }, v);
 *   if (!cd) ...             // loading: reload is called again when it is there
 *
 * tui.c and tui.h do not change.  Everything a job needs of the session
 * goes through struct tui_env into its argument: run functions never see
 * the session (they run on the worker thread).  Results are read-only once
 * loaded and stay cached until the session reloads (R, :force, :event...).
 */
#ifndef DCPI_TUI_SOURCE_H
#define DCPI_TUI_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

struct data_ctx;
struct db;
struct job;
struct strbuf;
struct tui;
struct view;

/* What a source may read of the session when it makes a job (main thread). */
struct tui_env {
	struct db *db;              /* the database (never NULL for a source) */
	int event;                  /* the current event, -1: not chosen yet */
	bool force;                 /* :force: use binaries that changed since profiling */
	bool norm_period;           /* :normalize period (diffs) */
	const char *debug_dir;      /* --debug-dir, or NULL */
	struct data_ctx *analysis;  /* the epochs opened for analysis, shared (tui/data-proc.h) */
};

struct tui_source {
	const char *name;           /* the first part of its keys ("images") */
	bool background;            /* a background job (tui/job.h), read while it runs */
	/*
	 * Appends, after "NAME/", what tells req apart, and the session's state
	 * the result depends on (env->force, env->event...): the cache key.
	 */
	void (*key)(const struct tui_env *env, const void *req, struct strbuf *key);
	/* Appends what the progress line says while it loads ("reading the images of epoch 3"). */
	void (*title)(const struct tui_env *env, const void *req, struct strbuf *title);
	/* The job's argument: what run needs of req and env, owned by the job. */
	void *(*arg)(const struct tui_env *env, const void *req);
	void (*free_arg)(void *arg);
	void (*run)(struct job *job);         /* the worker thread: sets job->result, ->status */
	void (*free_result)(void *result);
	/* Background sources: the result while the job runs (NULL: job->result). */
	const void *(*partial)(const struct job *job);
};

/* The session's state as sources see it. */
void tui_env(struct tui *t, struct tui_env *env);

/*
 * The data src loads for req, or NULL: while it loads (waiter, if not
 * NULL, waits for it and is reloaded when it is there) or when the session
 * has no database.
 */
const void *tui_load(struct tui *t, const struct tui_source *src, const void *req,
		     struct view *waiter);

/*
 * A background source's result as it stands (NULL if there is none yet);
 * *complete says whether its job has finished (waiter is reloaded then).
 */
const void *tui_load_partial(struct tui *t, const struct tui_source *src, const void *req,
			     struct view *waiter, bool *complete);

/* The result if it is loaded already, else NULL (nothing is started). */
const void *tui_peek(struct tui *t, const struct tui_source *src, const void *req);

/*
 * Calls fn with every loaded result of src whose key, after "NAME/",
 * starts with prefix (completion over what the session has read).
 */
void tui_foreach_loaded(struct tui *t, const struct tui_source *src, const char *prefix,
			void (*fn)(const void *result, void *data), void *data);

#endif
