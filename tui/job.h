/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/job.h - the session's cache of background work: each job is a task
 * of the engine (core/workpool.h) named by a cache key ("images/3"); its
 * result stays in the cache for the rest of the session (or until
 * jobs_invalidate()), so asking again is free.  Views do not call this
 * directly: they ask a data source (tui/source.h: source_load()), which
 * finds the job or submits it; they show the job's progress meanwhile and
 * are told when it is done (tui.c calls the views' reload op).
 *
 * Rules for a run function: it may use libdcpi (db, disasm, analysis) but
 * never curses, the views or the tui state; it reports errors with
 * errorf() as usual (the engine keeps them with the job, and they are
 * said when it is collected); it says how far it got (job_progress()) and
 * may stop early when job_cancelled().  It stores its result in
 * job->result and sets job->status (0 or -1).  Work spread over threads
 * goes through the engine's batches (workpool_run()), nothing else.
 *
 * Background jobs (jobs_submit_background(): analysing every procedure of
 * a view) give way to the others: at their yield points (workpool_yield(),
 * and every item of their batches) the engine runs the jobs queued since
 * on the same thread, then lets them go on.  A background job's result
 * may be read while it runs through the source's partial function (the
 * function that reads it must say how: an atomic flag per row, say).
 *
 * With `sync` set (unit tests, or DCPI_TUI_THREADS=0) jobs run inside
 * jobs_submit().  Everything here is for the main thread, but job_*()
 * calls from the run function.
 */
#ifndef DCPI_TUI_JOB_H
#define DCPI_TUI_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/workpool.h"

struct strbuf;

struct job {
	char *key;                        /* cache key */
	char *title;                      /* for the progress display */
	void (*run)(struct job *job);     /* a thread of the engine */
	void *arg;
	void (*free_arg)(void *arg);
	void *result;                     /* set by run */
	void (*free_result)(void *result);
	int status;                       /* set by run: 0, or -1 on failure */
	unsigned generation;
	bool collected;                   /* main thread has seen it finish */
	bool background;                  /* gives way to foreground jobs */
	struct workpool_task task;        /* progress, cancelling, what it reported */
};

struct jobs {
	bool sync;
	struct job **all;                 /* every job of the session, in order */
	size_t n_all, alloc_all;
	unsigned generation;
	int wake[2];                      /* a byte arrives when a job finishes */
};

void jobs_init(struct jobs *jobs, bool sync);
/* Cancels what is queued or running, waits for it, frees everything. */
void jobs_release(struct jobs *jobs);

/* The job with this key (any state) of the current generation, or NULL. */
struct job *jobs_find(struct jobs *jobs, const char *key);
/*
 * Files a collected job under another key: its result was made into what
 * that key names (the diff of A and B turned into that of B and A).
 */
void jobs_rekey(struct jobs *jobs, struct job *job, const char *key);

/*
 * Queues a job unless one with this key exists (then returns that one and
 * frees arg).  title is shown while it runs.
 */
struct job *jobs_submit(struct jobs *jobs, const char *key, const char *title,
			void (*run)(struct job *), void *arg, void (*free_arg)(void *),
			void (*free_result)(void *));

/* The same for a background job (see above). */
struct job *jobs_submit_background(struct jobs *jobs, const char *key, const char *title,
				   void (*run)(struct job *), void *arg, void (*free_arg)(void *),
				   void (*free_result)(void *));

/*
 * Calls fn for every job of the current generation that the main thread has
 * collected and whose key starts with prefix (results the views may read).
 * fn must not call back into jobs.
 */
void jobs_foreach_collected(struct jobs *jobs, const char *prefix,
			    void (*fn)(struct job *job, void *data), void *data);

/* True if a job of the current generation is queued or running. */
bool jobs_busy(struct jobs *jobs);
/*
 * A file descriptor that becomes readable when a job finishes, for the
 * input loop to poll along with the keyboard; jobs_collect() drains it.
 * -1 with sync jobs.
 */
int jobs_wake_fd(struct jobs *jobs);
/* Blocks until no job is queued or running (scripts: deterministic screens). */
void jobs_wait_idle(struct jobs *jobs);
/* Blocks until no foreground job is queued or running. */
void jobs_wait_foreground(struct jobs *jobs);
/* True if a foreground job of the current generation is queued or running. */
bool jobs_busy_foreground(struct jobs *jobs);

/*
 * For every job finished since the last call, says its messages again (on
 * the main thread, so they reach the status line) and calls fn.  Jobs of
 * an old generation are freed instead.  Returns how many jobs of the
 * current generation finished.
 */
size_t jobs_collect(struct jobs *jobs, void (*fn)(struct job *job, void *data), void *data);

/*
 * Forgets every cached result (reload): jobs_find() no longer sees them,
 * running ones are cancelled, and all are freed by the next jobs_collect()
 * (so views may still read them until they reload).
 */
void jobs_invalidate(struct jobs *jobs);

/* Appends a one-line progress summary ("reading the images of epoch 3: 40%"). */
void jobs_describe(struct jobs *jobs, struct strbuf *sb);

/* In a run function (or its batches' items): says how far it got. */
void job_progress(struct job *job, uint64_t done, uint64_t total);
/* In a run function: true if the job's result is no longer wanted. */
bool job_cancelled(struct job *job);
/* In a run function: the text of the last message it reported, or dflt. */
const char *job_last_message(const struct job *job, const char *dflt);

#endif
