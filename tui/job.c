/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/job.h"

#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local struct job *current_job;
/* Messages may come from a job's helper threads at once (job_enter()). */
static pthread_mutex_t messages_lock = PTHREAD_MUTEX_INITIALIZER;

struct job *job_current(void)
{
	return current_job;
}

void job_enter(struct job *job)
{
	current_job = job;
}

const char *job_last_message(const struct job *job, const char *dflt)
{
	return job->n_msgs ? job->msgs[job->n_msgs - 1].text : dflt;
}

void job_add_message(struct job *job, enum report_level level, const char *text)
{
	pthread_mutex_lock(&messages_lock);
	ALLOC_GROW(job->msgs, job->n_msgs + 1, job->alloc_msgs);
	job->msgs[job->n_msgs].level = level;
	job->msgs[job->n_msgs].text = xstrdup(text);
	job->n_msgs++;
	pthread_mutex_unlock(&messages_lock);
}

void job_progress(struct job *job, uint64_t done, uint64_t total)
{
	atomic_store(&job->total, total);
	atomic_store(&job->done, done);
}

bool job_cancelled(struct job *job)
{
	return atomic_load(&job->cancel);
}

bool job_should_yield(struct job *job)
{
	return job->background && job->owner && atomic_load(&job->owner->fg_queued) > 0;
}

void job_yield(struct job *job)
{
	job->yielded = true;
}

static void job_free(struct job *job)
{
	if (job->free_arg)
		job->free_arg(job->arg);
	if (job->free_result && job->result)
		job->free_result(job->result);
	for (size_t i = 0; i < job->n_msgs; i++)
		free(job->msgs[i].text);
	free(job->msgs);
	free(job->key);
	free(job->title);
	free(job);
}

static void job_execute(struct job *job)
{
	int64_t start = time_monotonic_ns();

	current_job = job;
	job->yielded = false;
	job->run(job);
	current_job = NULL;
	job->run_ns += time_monotonic_ns() - start;
}

/* The oldest queued foreground job, else the oldest background one; lock held. */
static struct job *next_queued(struct jobs *jobs)
{
	struct job *bg = NULL;

	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->state != JOB_QUEUED)
			continue;
		if (!job->background)
			return job;
		if (!bg)
			bg = job;
	}
	return bg;
}

static void *worker_main(void *arg)
{
	struct jobs *jobs = arg;

	pthread_mutex_lock(&jobs->lock);
	while (!jobs->stop) {
		struct job *job = next_queued(jobs);

		if (!job) {
			pthread_cond_wait(&jobs->cond, &jobs->lock);
			continue;
		}
		job->state = JOB_RUNNING;
		if (!job->background)
			atomic_fetch_sub(&jobs->fg_queued, 1);
		pthread_mutex_unlock(&jobs->lock);
		job_execute(job);
		pthread_mutex_lock(&jobs->lock);
		if (job->yielded && !atomic_load(&job->cancel)) {
			job->state = JOB_QUEUED; /* behind the foreground jobs */
			continue;
		}
		job->state = JOB_DONE;
		pthread_cond_broadcast(&jobs->cond);
		if (jobs->wake[1] >= 0 && write(jobs->wake[1], "", 1) < 0) {
			/* Full pipe: the main loop has wake-ups pending anyway. */
		}
	}
	pthread_mutex_unlock(&jobs->lock);
	return NULL;
}

void jobs_init(struct jobs *jobs, bool sync)
{
	memset(jobs, 0, sizeof(*jobs));
	pthread_mutex_init(&jobs->lock, NULL);
	pthread_cond_init(&jobs->cond, NULL);
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
	pthread_mutex_lock(&jobs->lock);
	jobs->stop = true;
	for (size_t i = 0; i < jobs->n_all; i++)
		atomic_store(&jobs->all[i]->cancel, true);
	pthread_cond_broadcast(&jobs->cond);
	pthread_mutex_unlock(&jobs->lock);
	if (jobs->started)
		pthread_join(jobs->worker, NULL);
	for (size_t i = 0; i < jobs->n_all; i++)
		job_free(jobs->all[i]);
	free(jobs->all);
	for (int i = 0; i < 2; i++)
		if (jobs->wake[i] >= 0)
			close(jobs->wake[i]);
	pthread_cond_destroy(&jobs->cond);
	pthread_mutex_destroy(&jobs->lock);
	memset(jobs, 0, sizeof(*jobs));
}

struct job *jobs_find(struct jobs *jobs, const char *key)
{
	struct job *found = NULL;

	pthread_mutex_lock(&jobs->lock);
	for (size_t i = 0; i < jobs->n_all && !found; i++)
		if (jobs->all[i]->generation == jobs->generation && !strcmp(jobs->all[i]->key, key))
			found = jobs->all[i];
	pthread_mutex_unlock(&jobs->lock);
	return found;
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
	job->owner = jobs;
	if (jobs->sync) {
		do
			job_execute(job);
		while (job->yielded && !job_cancelled(job));
		job->state = JOB_DONE;
	}
	pthread_mutex_lock(&jobs->lock);
	if (!jobs->sync && !background)
		atomic_fetch_add(&jobs->fg_queued, 1);
	job->generation = jobs->generation;
	ALLOC_GROW(jobs->all, jobs->n_all + 1, jobs->alloc_all);
	jobs->all[jobs->n_all++] = job;
	if (!jobs->sync && !jobs->started) {
		if (pthread_create(&jobs->worker, NULL, worker_main, jobs))
			die("cannot start the worker thread");
		jobs->started = true;
	}
	pthread_cond_broadcast(&jobs->cond);
	pthread_mutex_unlock(&jobs->lock);
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

/* Called with the lock held. */
static bool busy_locked(struct jobs *jobs, bool any_generation, bool foreground)
{
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->state != JOB_DONE && (!foreground || !job->background) &&
		    (any_generation || job->generation == jobs->generation))
			return true;
	}
	return false;
}

void jobs_foreach_collected(struct jobs *jobs, const char *prefix,
			    void (*fn)(struct job *job, void *data), void *data)
{
	size_t n = strlen(prefix);

	pthread_mutex_lock(&jobs->lock);
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->collected && job->generation == jobs->generation &&
		    !strncmp(job->key, prefix, n))
			fn(job, data);
	}
	pthread_mutex_unlock(&jobs->lock);
}

bool jobs_busy(struct jobs *jobs)
{
	bool busy;

	pthread_mutex_lock(&jobs->lock);
	busy = busy_locked(jobs, false, false);
	pthread_mutex_unlock(&jobs->lock);
	return busy;
}

bool jobs_busy_foreground(struct jobs *jobs)
{
	bool busy;

	pthread_mutex_lock(&jobs->lock);
	busy = busy_locked(jobs, false, true);
	pthread_mutex_unlock(&jobs->lock);
	return busy;
}

void jobs_wait_idle(struct jobs *jobs)
{
	pthread_mutex_lock(&jobs->lock);
	while (busy_locked(jobs, true, false))
		pthread_cond_wait(&jobs->cond, &jobs->lock);
	pthread_mutex_unlock(&jobs->lock);
}

void jobs_wait_foreground(struct jobs *jobs)
{
	pthread_mutex_lock(&jobs->lock);
	while (busy_locked(jobs, true, true))
		pthread_cond_wait(&jobs->cond, &jobs->lock);
	pthread_mutex_unlock(&jobs->lock);
}

/* Takes the finished, uncollected jobs out under the lock. */
static size_t take_finished(struct jobs *jobs, struct job ***out, struct job ***stale, size_t *n_stale)
{
	size_t n = 0, kept = 0, alloc = 0, alloc_stale = 0;

	*out = NULL;
	*stale = NULL;
	*n_stale = 0;
	pthread_mutex_lock(&jobs->lock);
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->state == JOB_DONE && job->generation != jobs->generation) {
			ALLOC_GROW(*stale, *n_stale + 1, alloc_stale);
			(*stale)[(*n_stale)++] = job;
			continue;
		}
		jobs->all[kept++] = job;
		if (job->state == JOB_DONE && !job->collected) {
			job->collected = true;
			ALLOC_GROW(*out, n + 1, alloc);
			(*out)[n++] = job;
		}
	}
	jobs->n_all = kept;
	pthread_mutex_unlock(&jobs->lock);
	return n;
}

size_t jobs_collect(struct jobs *jobs, void (*fn)(struct job *job, void *data), void *data)
{
	struct job **done, **stale;
	size_t n_stale, n;

	drain_wake(jobs);
	n = take_finished(jobs, &done, &stale, &n_stale);

	for (size_t i = 0; i < n_stale; i++)
		job_free(stale[i]);
	for (size_t i = 0; i < n; i++) {
		struct job *job = done[i];

		for (size_t m = 0; m < job->n_msgs; m++) {
			if (job->msgs[m].level == REPORT_WARNING)
				warning("%s", job->msgs[m].text);
			else
				errorf("%s", job->msgs[m].text);
		}
		if (fn)
			fn(job, data);
	}
	free(done);
	free(stale);
	return n;
}

void jobs_invalidate(struct jobs *jobs)
{
	pthread_mutex_lock(&jobs->lock);
	for (size_t i = 0; i < jobs->n_all; i++)
		if (jobs->all[i]->state != JOB_DONE)
			atomic_store(&jobs->all[i]->cancel, true);
	jobs->generation++;
	pthread_mutex_unlock(&jobs->lock);
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

	pthread_mutex_lock(&jobs->lock);
	for (size_t i = 0; i < jobs->n_all; i++) {
		struct job *job = jobs->all[i];

		if (job->generation != jobs->generation || job->state == JOB_DONE)
			continue;
		if (!first || (job->state == JOB_RUNNING && first->state != JOB_RUNNING)) {
			if (first)
				more++;
			first = job;
		} else {
			more++;
		}
	}
	if (first) {
		uint64_t done = atomic_load(&first->done), total = atomic_load(&first->total);

		strbuf_addstr(sb, first->title);
		if (first->state == JOB_RUNNING && total)
			strbuf_addf(sb, ": %d%%", (int)(done * 100 / total));
		if (more)
			strbuf_addf(sb, " (%zu more queued)", more);
	}
	pthread_mutex_unlock(&jobs->lock);
}
