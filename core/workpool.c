/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/workpool.c - items worked on by threads, done in order (workpool.h).
 *
 * The caller's thread delivers: it does the next item in order as soon
 * as its work is finished, and works on items itself while it waits.
 * Workers take the next item not yet taken, within the window.
 */
#include "config.h"

#include "core/workpool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/die.h"
#include "core/xalloc.h"

struct pool {
	const struct workpool_job *job;
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* an item finished, or the window moved */
	size_t window;
	size_t next_work;           /* the next item to take */
	size_t next_done;           /* the next item to deliver */
	bool *finished;             /* per slot of the window (item % window) */
};

/* Takes the next item if the window allows (lock held); false if none. */
static bool take(struct pool *p, size_t *i)
{
	if (p->next_work >= p->job->n || p->next_work >= p->next_done + p->window)
		return false;
	*i = p->next_work++;
	return true;
}

static void work_one(struct pool *p, size_t i)
{
	pthread_mutex_unlock(&p->lock);
	p->job->work(p->job->ctx, i);
	pthread_mutex_lock(&p->lock);
	p->finished[i % p->window] = true;
	pthread_cond_broadcast(&p->changed);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	size_t i;

	pthread_mutex_lock(&p->lock);
	while (p->next_work < p->job->n) {
		if (take(p, &i))
			work_one(p, i);
		else
			pthread_cond_wait(&p->changed, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void workpool_run(const struct workpool_job *job)
{
	unsigned threads = job->threads ? job->threads : 1;
	struct pool p = { .job = job };
	pthread_t *tid;
	unsigned started = 0;
	size_t i;

	if (threads == 1 || job->n <= 1) {
		for (i = 0; i < job->n; i++) {
			job->work(job->ctx, i);
			if (job->done)
				job->done(job->ctx, i);
		}
		return;
	}
	p.window = job->window ? job->window : 4 * (size_t)threads;
	p.finished = xcalloc(p.window, sizeof(*p.finished));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	tid = xcalloc(threads, sizeof(*tid));
	for (unsigned t = 1; t < threads; t++)
		if (!pthread_create(&tid[started], NULL, worker, &p))
			started++;
	pthread_mutex_lock(&p.lock);
	while (p.next_done < job->n) {
		if (p.finished[p.next_done % p.window]) {
			p.finished[p.next_done % p.window] = false;
			pthread_mutex_unlock(&p.lock);
			if (job->done)
				job->done(job->ctx, p.next_done);
			pthread_mutex_lock(&p.lock);
			p.next_done++;
			pthread_cond_broadcast(&p.changed);
		} else if (take(&p, &i)) {
			work_one(&p, i);
		} else {
			pthread_cond_wait(&p.changed, &p.lock);
		}
	}
	pthread_mutex_unlock(&p.lock);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
	free(tid);
	free(p.finished);
}

unsigned workpool_threads(unsigned want)
{
	long n;

	if (want)
		return want;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}
