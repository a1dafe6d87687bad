/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/job.h - background work and the session cache.
 *
 * Anything that may take long (loading an epoch's images, analysing a
 * procedure or every procedure of an image, comparing epochs) is a job: a
 * function run on a worker thread while the main thread keeps reading keys
 * and redrawing.  A job is named by a cache key ("images/3"); its result
 * stays in the cache for the rest of the session (or until
 * jobs_invalidate()), so asking again is free.  Views do not call this
 * directly: they ask a data source (tui/source.h: source_load()), which finds
 * the job or submits it; they show the job's progress meanwhile and are
 * told when it is done (tui.c calls the views' reload op).
 *
 * Rules for a run function: it may use libdcpi (db, disasm, analysis) but
 * never curses, the views or the tui state; it reports errors
 * with errorf() as usual (they are captured in the job and shown when it is
 * collected); it calls job_progress() now and then and may stop early when
 * job_cancelled().  It stores its result in job->result and sets
 * job->status (0 or -1).
 *
 * Background jobs (jobs_submit_background(): analysing every procedure of
 * a view) yield to the others: the worker runs every queued foreground job
 * first, and a background run function that sees job_should_yield() saves
 * where it is (in its arg), calls job_yield() and returns; it is queued
 * again behind the foreground jobs and its run function called once more.
 * Its result may be read while it runs through job_arg (the function that
 * reads it must say how: an atomic count of what is complete, say).
 *
 * With `sync` set (unit tests, or DCPI_TUI_THREADS=0) jobs run inside
 * jobs_submit().
 */
#ifndef DCPI_TUI_JOB_H
#define DCPI_TUI_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"

struct strbuf;

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job_message {
	enum report_level level;
	char *text;
};

struct job {
	char *key;                        /* cache key */
	char *title;                      /* for the progress display */
	void (*run)(struct job *job);     /* worker thread */
	void *arg;
	void (*free_arg)(void *arg);
	void *result;                     /* set by run */
	void (*free_result)(void *result);
	int status;                       /* set by run: 0, or -1 on failure */
	_Atomic uint64_t done, total;     /* progress */
	atomic_bool cancel;
	enum job_state state;             /* guarded by jobs.lock */
	unsigned generation;
	bool collected;                   /* main thread has seen it finish */
	struct job_message *msgs;         /* errors reported while running */
	size_t n_msgs, alloc_msgs;
	int64_t run_ns;                   /* how long run took (all its runs) */
	bool background;                  /* yields to foreground jobs */
	bool yielded;                     /* set by job_yield(): run again later */
	struct jobs *owner;
};

struct jobs {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t worker;
	bool started, stop, sync;
	struct job **all;                 /* every job of the session, in order */
	size_t n_all, alloc_all;
	unsigned generation;
	int wake[2];                      /* a byte arrives when a job finishes */
	atomic_int fg_queued;             /* foreground jobs queued (not yet running) */
};

void jobs_init(struct jobs *jobs, bool sync);
/* Cancels what is queued or running, waits for the worker, frees everything. */
void jobs_release(struct jobs *jobs);

/* The job with this key (any state) of the current generation, or NULL. */
struct job *jobs_find(struct jobs *jobs, const char *key);

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
 * Main thread: for every job finished since the last call, re-reports its
 * messages (now on the main thread, so they reach the status line) and calls
 * fn.  Jobs of an old generation are freed instead.  Returns how many jobs
 * of the current generation finished.
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

/* In a run function: reports progress. */
void job_progress(struct job *job, uint64_t done, uint64_t total);
/* In a run function: true if the job's result is no longer wanted. */
bool job_cancelled(struct job *job);
/* In a background run function: true if foreground jobs wait for the worker. */
bool job_should_yield(struct job *job);
/* In a background run function: run me again after them (then return). */
void job_yield(struct job *job);

/* The text of the last message job reported (while it ran), or dflt. */
const char *job_last_message(const struct job *job, const char *dflt);

/*
 * In a thread a run function started to share its work (and joins before
 * it returns): what the thread reports goes to job, as the run function's
 * own messages do.  NULL: leaves it.
 */
void job_enter(struct job *job);

/* The job running on this thread, or NULL (report routines use it). */
struct job *job_current(void);
/* Records a message in job (called by the report routine). */
void job_add_message(struct job *job, enum report_level level, const char *text);

#endif
