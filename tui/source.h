/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/source.h - where a view's data comes from.  A data source is one
 * kind of data (the epochs, the images of an epoch, the procedures of an
 * image, a procedure analysed, two epochs compared): how to name a
 * request for it, and how to load it on the worker thread.  The session
 * keeps one struct sources: the job cache (tui/job.h) and what the data
 * depends on (the database, the event, :force...); every view has it as
 * v->src.  A view asks with source_load(); it looks the request up in the
 * cache, starts a job if it is missing and makes the view wait, and the
 * session reloads the view when the job is done.
 *
 * So a new view that shows new data brings its own source, next to the
 * analysis it calls (in the view's file, or in a tui/data-NAME.c and .h
 * that other views share):
 *
 *   struct callers_req { uint32_t seq; const char *image, *spec; };   // what a view asks
 *
 *   static void callers_key(const struct source_env *env, const void *req, struct strbuf *key)
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
 *           source_load(v->src, &callers_source, &(struct callers_req){ ... }, v);
 *   if (!cd) ...             // loading: reload is called again when it is there
 *
 * Nothing of the session changes.  Everything a job needs of it goes
 * through struct source_env into its argument: run functions never see the
 * session (they run on the worker thread).  Results are read-only once
 * loaded and stay cached until the session reloads (R, :force, :event...).
 */
#ifndef DCPI_TUI_SOURCE_H
#define DCPI_TUI_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/job.h"

struct calc_cache;
struct data_ctx;
struct db;
struct strbuf;
struct view;

/* What the data depends on, as the session sets it; sources read it when they make a job. */
struct source_env {
	struct db *db;              /* the database (NULL: none could be opened) */
	int event;                  /* the current event, -1: not chosen yet */
	bool force;                 /* :force: use binaries that changed since profiling */
	bool norm_period;           /* :normalize period (diffs) */
	const char *debug_dir;      /* --debug-dir, or NULL */
	struct data_ctx *analysis;  /* the epochs opened for analysis, shared (tui/data-epoch.h) */
	/* what the analysis of a binary found, shared with dcpicalc (analysis/calc-cache.h) */
	struct calc_cache *calc_cache;
};

struct tui_source {
	const char *name;           /* the first part of its keys ("images") */
	bool background;            /* a background job (tui/job.h), read while it runs */
	/*
	 * Appends, after "NAME/", what tells req apart, and the session's state
	 * the result depends on (env->force, env->event...): the cache key.
	 */
	void (*key)(const struct source_env *env, const void *req, struct strbuf *key);
	/* Appends what the progress line says while it loads ("reading the images of epoch 3"). */
	void (*title)(const struct source_env *env, const void *req, struct strbuf *title);
	/* The job's argument: what run needs of req and env, owned by the job. */
	void *(*arg)(const struct source_env *env, const void *req);
	void (*free_arg)(void *arg);
	void (*run)(struct job *job);         /* the worker thread: sets job->result, ->status */
	void (*free_result)(void *result);
	/* Background sources: the result while the job runs (NULL: job->result). */
	const void *(*partial)(const struct job *job);
};

/* The session's data: its job cache and what the data depends on. */
struct sources {
	struct jobs jobs;
	struct source_env env;
};

/* Starts the cache (sync: jobs run inline, tui/job.h); env zeroed, event -1. */
void sources_init(struct sources *s, bool sync);
/*
 * Cancels and frees every job, then stores and frees the analysis cache
 * (env's other members are the session's).
 */
void sources_release(struct sources *s);
/* The session's database from now on (not owned), with an analysis cache over it. */
void sources_set_db(struct sources *s, struct db *db);

/*
 * The data src loads for req, or NULL: while it loads (waiter, if not
 * NULL, waits for it and is reloaded when it is there) or when the session
 * has no database.
 */
const void *source_load(struct sources *s, const struct tui_source *src, const void *req,
			struct view *waiter);

/*
 * A background source's result as it stands (NULL if there is none yet);
 * *complete says whether its job has finished (waiter is reloaded then).
 */
const void *source_load_partial(struct sources *s, const struct tui_source *src,
				const void *req, struct view *waiter, bool *complete);

/* The result if it is loaded already, else NULL (nothing is started). */
const void *source_peek(struct sources *s, const struct tui_source *src, const void *req);

/* The same as the session's data would be under env (another :normalize, say). */
const void *source_peek_as(struct sources *s, const struct tui_source *src,
			   const struct source_env *env, const void *req);

/*
 * The result loaded for req under env (NULL: the session's), now made into
 * what to names under the session's env: filed under to's key from now on
 * (req's is free).  The caller changed it (main thread; views that show it
 * reload); nothing is done if to has a job already.
 */
void source_refile(struct sources *s, const struct tui_source *src, const struct source_env *env,
		   const void *req, const void *to);

/*
 * Calls fn with every loaded result of src whose key, after "NAME/",
 * starts with prefix (completion over what the session has read).
 */
void source_foreach_loaded(struct sources *s, const struct tui_source *src, const char *prefix,
			   void (*fn)(const void *result, void *data), void *data);

#endif
