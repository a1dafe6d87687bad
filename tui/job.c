/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/job.c - the session's jobs: tasks of the engine (core/workpool.h)
 * with their cache keys and results (tui/job.h).
 */
#include "config.h"
#include "tui/job.h"

#include "core/strbuf.h"
#include "core/xalloc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOB_OF(t) ((struct job *)((char *)(t) - offsetof(struct job, task)))

void job_progress(struct job *job, uint64_t done, uint64_t total)
{
	atomic_store(&job->task.total, total);
	atomic_store(&job->task.done, done);
}

bool job_cancelled(struct job *job)
{
	return atomic_load(&job->task.cancel);
}

const char *job_last_message(const struct job *job, const char *dflt)
{
	return report_log_last(&job->task.log, dflt);
}

static bool job_done(const struct job *job)
{
	return workpool_state(&job->task) == WORKPOOL_DONE;
}

static void job_free(struct job *job)
{
	workpool_wait(&job->task);
	if (job->free_arg)
		job->free_arg(job->arg);
	if (job->free_result && job->result)
		job->free_result(job->result);
	report_log_clear(&job->task.log);
	free(job->key);
	free(job->title);
	free(job);
}

static void job_run(struct workpool_task *t)
{
	struct job *job = JOB_OF(t);

	job->run(job);
}

/* On the engine's thread: a job finished, the main loop wakes. */
static void wake(void *ctx)
{
	struct jobs *jobs = ctx;

	if (write(jobs->wake[1], "", 1) < 0) {
		/* Full pipe: the main loop has wake-ups pending anyway. */
	}
}

void jobs_init(struct jobs *jobs, bool sync)
{
	memset(jobs, 0, sizeof(*jobs));
	jobs->sync = sync;
	jobs->wake[0] = jobs->wake[1] = -1;
	if (!sync && pipe2(jobs->wake, O_CLOEXEC | O_NONBLOCK))
		die_errno("cannot create a pipe");
}

int jobs_wake_fd(struct jobs *jobs)
{
	return jobs->wake[0];
}

static void drain_wake(struct jobs *jobs)
{
	char buf[64];

	while (jobs->wake[0] >= 0 && read(jobs->wake[0], buf, sizeof(buf)) > 0)
		;
}

void jobs_release(struct jobs *jobs)
{
	for (size_t i = 0; i < jobs->n_all; i++)
		workpool_cancel(&jobs->all[i]->task);
	for (size_t i = 0; i < jobs->n_all; i++)
		job_free(jobs->all[i]);
	free(jobs->all);
	for (int i = 0; i < 2; i++)
		if (jobs->wake[i] >= 0)
			close(jobs->wake[i]);
	memset(jobs, 0, sizeof(*jobs));
}

struct job *jobs_find(struct jobs *jobs, const char *key)
{
	for (size_t i = 0; i < jobs->n_all; i++)
		if (jobs->all[i]->generation == jobs->generation && !strcmp(jobs->all[i]->key, key))
			return jobs->all[i];
	return NULL;
}

void jobs_rekey(struct jobs *jobs, struct job *job, const char *key)
{
	(void)jobs;
	free(job->key);
	job->key = xstrdup(key);
}

static struct job *submit(struct jobs *jobs, const char *key, const char *title,
			  void (*run)(struct job *), void *arg, void (*free_arg)(void *),
			  void (*free_result)(void *), bool background)
{
	struct job *job = jobs_find(jobs, key);

	if (job) {
		if (free_arg)
			free_arg(arg);
		return job;
	}
	job = XNEW(struct job);
	job->key = xstrdup(key);
	job->title = xstrdup(title);
	job->run = run;
	job->arg = arg;
	job->free_arg = free_arg;
	job->free_result = free_result;
	job->background = background;
	job->generation = jobs->generation;
	job->task.run = job_run;
	job->task.prio = background ? WORKPOOL_BACKGROUND : WORKPOOL_NORMAL;
	ALLOC_GROW(jobs->all, jobs->n_all + 1, jobs->alloc_all);
	jobs->all[jobs->n_all++] = job;
	if (jobs->sync) {
		workpool_run_here(&job->task);
	} else {
		job->task.finished = wake;
		job->task.finished_ctx = jobs;
		workpool_submit(&job->task);
	}
	return job;
}

struct job *jobs_submit(struct jobs *jobs, const char *key, const char *title,
			void (*run)(struct job *), void *arg, void (*free_arg)(void *),
			void (*free_result)(void *))
{
	return submit(jobs, key, title, run, arg, free_arg, free_result, false);
}

struct job *jobs_submit_background(struct jobs *jobs, const char *key, const char *title,
				   void (*run)(struct job *), void *arg, void (*free_arg)(void *),
				   void (*free_result)(void *))
{
	return submit(jobs, key, title, run, arg, free_arg, free_result, true);
}

static bool busy(struct jobs *jobs, bool any_generation, bool foreground)
{
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (!job_done(job) && (!foreground || !job->background) &&
		    (any_generation || job->generation == jobs->generation))
			return true;
	}
	return false;
}

void jobs_foreach_collected(struct jobs *jobs, const char *prefix,
			    void (*fn)(struct job *job, void *data), void *data)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->collected && job->generation == jobs->generation &&
		    !strncmp(job->key, prefix, n))
			fn(job, data);
	}
}

bool jobs_busy(struct jobs *jobs)
{
	return busy(jobs, false, false);
}

bool jobs_busy_foreground(struct jobs *jobs)
{
	return busy(jobs, false, true);
}

/* Waits for the jobs (foreground ones only, if foreground) of every generation. */
static void wait_jobs(struct jobs *jobs, bool foreground)
{
	for (size_t i = 0; i < jobs->n_all; i++)
		if (!foreground || !jobs->all[i]->background)
			workpool_wait(&jobs->all[i]->task);
}

void jobs_wait_idle(struct jobs *jobs)
{
	wait_jobs(jobs, false);
}

void jobs_wait_foreground(struct jobs *jobs)
{
	wait_jobs(jobs, true);
}

size_t jobs_collect(struct jobs *jobs, void (*fn)(struct job *job, void *data), void *data)
{
	struct job **done = NULL;
	size_t n = 0, alloc = 0, kept = 0;

	drain_wake(jobs);
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job_done(job) && job->generation != jobs->generation) {
			job_free(job);
			continue;
		}
		jobs->all[kept++] = job;
		if (job_done(job) && !job->collected) {
			job->collected = true;
			ALLOC_GROW(done, n + 1, alloc);
			done[n++] = job;
		}
	}
	jobs->n_all = kept;
	for (size_t i = 0; i < n; i++) {
		report_log_replay(&done[i]->task.log);
		if (fn)
			fn(done[i], data);
	}
	free(done);
	return n;
}

void jobs_invalidate(struct jobs *jobs)
{
	for (size_t i = 0; i < jobs->n_all; i++)
		if (!job_done(jobs->all[i]))
			workpool_cancel(&jobs->all[i]->task);
	jobs->generation++;
	/*
	 * Old jobs are freed by the next jobs_collect(), not here: views still
	 * point into their results until they have reloaded.  Their messages
	 * are dropped (they were shown, or no longer matter).
	 */
	for (size_t i = 0; i < jobs->n_all; i++)
		jobs->all[i]->collected = true;
}

void jobs_describe(struct jobs *jobs, struct strbuf *sb)
{
	struct job *first = NULL;
	size_t more = 0;

	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];
		enum workpool_state st = workpool_state(&job->task);

		if (job->generation != jobs->generation || st == WORKPOOL_DONE)
			continue;
		if (!first || (st == WORKPOOL_RUNNING &&
			       workpool_state(&first->task) != WORKPOOL_RUNNING)) {
			if (first)
				more++;
			first = job;
		} else {
			more++;
		}
	}
	if (first) {
		uint64_t done = atomic_load(&first->task.done), total = atomic_load(&first->task.total);

		strbuf_addstr(sb, first->title);
		if (workpool_state(&first->task) == WORKPOOL_RUNNING && total)
			strbuf_addf(sb, ": %d%%", (int)(done * 100 / total));
		if (more)
			strbuf_addf(sb, " (%zu more queued)", more);
	}
}
