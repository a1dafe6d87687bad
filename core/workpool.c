/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/workpool.c - the engine (workpool.h): one pool of threads, tasks
 * queued by urgency and run one at a time, batches whose items any thread
 * takes.
 *
 * One lock guards it all (work is handed out a task or an item at a
 * time: a procedure analysed takes 100 us and more, so the lock is
 * cold).  Tasks being run form a stack: the one a pool thread started,
 * then those run at its yield points, each more urgent than the one below
 * it.  A batch is paused while a more urgent task waits: its caller lets
 * the items in work finish, then runs the urgent tasks itself.
 */
#include "config.h"

#include "core/workpool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/timeutil.h"
#include "core/xalloc.h"

enum item_state { ITEM_FREE, ITEM_TAKEN, ITEM_FINISHED };

/* Items asked for and not taken yet, at most (a screen's rows, many times over). */
#define PREFER_MAX 1024

/* A finished item's messages waiting for the items before it (any-order batches). */
struct pending {
	size_t i;
	struct report_log log;
};

struct workpool_batch_state {
	struct workpool_batch *b;
	struct workpool_task *owner;    /* the task the batch works for, or NULL */
	enum workpool_prio prio;
	unsigned max, busy;             /* threads at most, threads in an item now */
	size_t window;
	size_t next;                    /* the next item in order to take */
	size_t next_done;               /* items [0, next_done) are done */
	bool stopped;                   /* cancelled: nothing more is taken */
	bool paused;                    /* a more urgent task runs on the caller's thread */
	/* in order: per window slot (item % window) */
	bool *finished;
	struct report_log *logs;
	/* any order: per item, and the messages waiting (a heap by item) */
	unsigned char *item;
	struct pending *pend;
	size_t n_pend, alloc_pend;
	size_t *prefer;                 /* asked for, the last asked last */
	size_t n_prefer, alloc_prefer;
	struct workpool_batch_state *next_active;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;         /* a task queued or finished, an item taken or finished */
	pthread_cond_t settled;         /* a task settled (workpool_wait() waits on this alone:
					   a waiter is not woken by every item of a million) */
	bool started;
	unsigned threads;
	struct workpool_task *head[WORKPOOL_PRIO__COUNT], *tail[WORKPOOL_PRIO__COUNT];
	struct workpool_task *stack[WORKPOOL_PRIO__COUNT + 1]; /* tasks running, innermost last */
	size_t depth;
	struct workpool_batch_state *active;
} E = { .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER,
	.settled = PTHREAD_COND_INITIALIZER };

/* The task this thread works for (its run, or an item of its batch). */
static _Thread_local struct workpool_task *current;
/* The innermost task whose run() this thread is in (NULL in an item). */
static _Thread_local struct workpool_task *runs_here;

unsigned workpool_threads(unsigned want)
{
	long n;

	if (want)
		return want;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

/* ---- tasks --------------------------------------------------------------------- */

/* True if a task more urgent than prio is queued (lock held). */
static bool urgent_queued(enum workpool_prio prio)
{
	for (int p = 0; p < (int)prio; p++)
		if (E.head[p])
			return true;
	return false;
}

/* The most urgent queued task more urgent than below (WORKPOOL_PRIO__COUNT: any), dequeued. */
static struct workpool_task *dequeue(enum workpool_prio below)
{
	for (int p = 0; p < (int)below; p++) {
		struct workpool_task *t = E.head[p];

		if (!t)
			continue;
		E.head[p] = t->next;
		if (!E.head[p])
			E.tail[p] = NULL;
		t->next = NULL;
		return t;
	}
	return NULL;
}

/* Calls t's run on this thread, its messages kept in t->log. */
static void call_run(struct workpool_task *t)
{
	struct workpool_task *prev_current = current, *prev_here = runs_here;
	struct report_log *prev = report_capture(&t->log);
	int64_t start = time_monotonic_ns();

	current = runs_here = t;
	t->run(t);
	current = prev_current;
	runs_here = prev_here;
	report_capture(prev);
	t->run_ns += time_monotonic_ns() - start;
}

/* Marks t done, tells its collector, and lets it go (lock not held). */
static void finish(struct workpool_task *t)
{
	void (*fn)(void *) = t->finished;
	void *fctx = t->finished_ctx;

	pthread_mutex_lock(&E.lock);
	atomic_store_explicit(&t->state, WORKPOOL_DONE, memory_order_release);
	pthread_mutex_unlock(&E.lock);
	if (fn)
		fn(fctx);
	pthread_mutex_lock(&E.lock);
	t->settled = true;
	pthread_cond_broadcast(&E.changed);
	pthread_cond_broadcast(&E.settled);
	pthread_mutex_unlock(&E.lock);
}

/* Runs dequeued task t on this thread, on top of the stack (lock held, and held again after). */
static void exec_task(struct workpool_task *t)
{
	E.stack[E.depth++] = t;
	atomic_store(&t->state, WORKPOOL_RUNNING);
	pthread_mutex_unlock(&E.lock);
	if (!atomic_load(&t->cancel))
		call_run(t);
	pthread_mutex_lock(&E.lock);
	E.depth--;
	pthread_mutex_unlock(&E.lock);
	finish(t);
	pthread_mutex_lock(&E.lock);
}

/* Runs the tasks more urgent than the one running here, here (lock held). */
static void run_urgent(void)
{
	struct workpool_task *t;

	while (runs_here && E.depth && E.stack[E.depth - 1] == runs_here &&
	       (t = dequeue(runs_here->prio)))
		exec_task(t);
}

static void *pool_main(void *arg);

/* Starts the pool's threads the first time (lock held). */
static void start_pool(void)
{
	if (E.started)
		return;
	E.started = true;
	E.threads = workpool_threads(0);
	for (unsigned k = 0; k < E.threads; k++) {
		pthread_attr_t attr;
		pthread_t tid;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&tid, &attr, pool_main, NULL))
			die("cannot start a thread of the pool");
		pthread_attr_destroy(&attr);
	}
}

void workpool_submit(struct workpool_task *t)
{
	enum workpool_prio p = t->prio < WORKPOOL_PRIO__COUNT ? t->prio : WORKPOOL_BACKGROUND;

	t->prio = p;
	atomic_store(&t->state, WORKPOOL_QUEUED);
	t->settled = false;
	t->next = NULL;
	pthread_mutex_lock(&E.lock);
	start_pool();
	if (E.tail[p])
		E.tail[p]->next = t;
	else
		E.head[p] = t;
	E.tail[p] = t;
	pthread_cond_broadcast(&E.changed);
	pthread_mutex_unlock(&E.lock);
}

void workpool_run_here(struct workpool_task *t)
{
	atomic_store(&t->state, WORKPOOL_RUNNING);
	t->settled = false;
	if (!atomic_load(&t->cancel))
		call_run(t);
	finish(t);
}

void workpool_cancel(struct workpool_task *t)
{
	atomic_store(&t->cancel, true);
}

void workpool_wait(struct workpool_task *t)
{
	pthread_mutex_lock(&E.lock);
	while (!t->settled)
		pthread_cond_wait(&E.settled, &E.lock);
	pthread_mutex_unlock(&E.lock);
}

struct workpool_task *workpool_current(void)
{
	return current;
}

bool workpool_cancelled(void)
{
	return current && atomic_load(&current->cancel);
}

void workpool_progress(uint64_t done, uint64_t total)
{
	if (!current)
		return;
	atomic_store(&current->total, total);
	atomic_store(&current->done, done);
}

void workpool_yield(void)
{
	if (!runs_here)
		return;
	pthread_mutex_lock(&E.lock);
	run_urgent();
	pthread_mutex_unlock(&E.lock);
}

/* ---- batches ------------------------------------------------------------------- */

static bool any_order(const struct workpool_batch_state *s)
{
	return !s->b->done && s->b->any_order;
}

/* Takes the next item for this thread if s gives one now (lock held). */
static bool take(struct workpool_batch_state *s, size_t *i)
{
	size_t n = s->b->n;

	if (s->stopped || s->paused || s->busy >= s->max)
		return false;
	if (!any_order(s)) {
		if (s->next >= n || s->next >= s->next_done + s->window)
			return false;
		*i = s->next++;
	} else {
		bool found = false;

		while (s->n_prefer && !found) {
			*i = s->prefer[--s->n_prefer];
			found = *i < n && s->item[*i] == ITEM_FREE;
		}
		while (!found && s->next < n)
			found = s->item[*i = s->next++] == ITEM_FREE;
		if (!found)
			return false;
		s->item[*i] = ITEM_TAKEN;
	}
	s->busy++;
	return true;
}

/* Heap of pending messages, by item. */
static void pend_push(struct workpool_batch_state *s, size_t i, struct report_log log)
{
	size_t k;

	ALLOC_GROW(s->pend, s->n_pend + 1, s->alloc_pend);
	for (k = s->n_pend++; k && s->pend[(k - 1) / 2].i > i; k = (k - 1) / 2)
		s->pend[k] = s->pend[(k - 1) / 2];
	s->pend[k] = (struct pending){ i, log };
}

static struct pending pend_pop(struct workpool_batch_state *s)
{
	struct pending top = s->pend[0], last = s->pend[--s->n_pend];
	size_t k = 0, c;

	while ((c = 2 * k + 1) < s->n_pend) {
		if (c + 1 < s->n_pend && s->pend[c + 1].i < s->pend[c].i)
			c++;
		if (s->pend[c].i >= last.i)
			break;
		s->pend[k] = s->pend[c];
		k = c;
	}
	if (s->n_pend)
		s->pend[k] = last;
	return top;
}

/* Works on item i on this thread, its messages kept apart (lock held, and held after). */
static void work_item(struct workpool_batch_state *s, size_t i)
{
	struct workpool_task *prev_current = current, *prev_here = runs_here;
	struct report_log log = REPORT_LOG_INIT, *prev;

	pthread_mutex_unlock(&E.lock);
	current = s->owner;
	runs_here = NULL;
	prev = report_capture(&log);
	s->b->work(s->b->ctx, i);
	report_capture(prev);
	current = prev_current;
	runs_here = prev_here;
	pthread_mutex_lock(&E.lock);
	s->busy--;
	if (!any_order(s)) {
		s->finished[i % s->window] = true;
		s->logs[i % s->window] = log;
	} else {
		s->item[i] = ITEM_FINISHED;
		if (log.n)
			pend_push(s, i, log);
	}
	pthread_cond_broadcast(&E.changed);
}

/* Says the messages and calls done() of the items finished in order (lock held, and after). */
static void deliver(struct workpool_batch_state *s)
{
	if (!any_order(s)) {
		while (s->next_done < s->next && s->finished[s->next_done % s->window]) {
			size_t i = s->next_done, slot = i % s->window;
			struct report_log log = s->logs[slot];

			s->finished[slot] = false;
			memset(&s->logs[slot], 0, sizeof(s->logs[slot]));
			pthread_mutex_unlock(&E.lock);
			report_log_replay(&log);
			if (s->b->done)
				s->b->done(s->b->ctx, i);
			pthread_mutex_lock(&E.lock);
			s->next_done++;
			pthread_cond_broadcast(&E.changed); /* the window moved */
		}
		return;
	}
	while (s->next_done < s->b->n && s->item[s->next_done] == ITEM_FINISHED)
		s->next_done++;
	/* stopped: whatever finished is said, in order, gaps and all */
	while (s->n_pend && (s->pend[0].i < s->next_done || (s->stopped && !s->busy))) {
		struct pending p = pend_pop(s);

		pthread_mutex_unlock(&E.lock);
		report_log_replay(&p.log);
		pthread_mutex_lock(&E.lock);
	}
}

/* True once every item taken is finished and said, and nothing more will be taken. */
static bool batch_over(const struct workpool_batch_state *s)
{
	if (s->next_done >= s->b->n)
		return true;
	if (!s->stopped || s->busy || s->n_pend)
		return false;
	return any_order(s) || s->next_done == s->next;
}

/* The batch a pool thread should work on now, with its item (lock held). */
static struct workpool_batch_state *pick(size_t *i)
{
	struct workpool_batch_state *best = NULL;

	for (struct workpool_batch_state *s = E.active; s; s = s->next_active)
		if ((!best || s->prio < best->prio) && !s->stopped && !s->paused && s->busy < s->max)
			best = s;
	/* the most urgent batch may have nothing free now: any other then */
	if (best && take(best, i))
		return best;
	for (struct workpool_batch_state *s = E.active; s; s = s->next_active)
		if (s != best && take(s, i))
			return s;
	return NULL;
}

static void *pool_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&E.lock);
	for (;;) {
		struct workpool_batch_state *s;
		struct workpool_task *t;
		size_t i;

		if ((s = pick(&i)))
			work_item(s, i);
		else if (!E.depth && (t = dequeue(WORKPOOL_PRIO__COUNT)))
			exec_task(t);
		else
			pthread_cond_wait(&E.changed, &E.lock);
	}
	return NULL;
}

/* The loop of workpool_run() on one thread, without the pool. */
static int run_inline(struct workpool_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (workpool_cancelled())
			return -1;
		b->work(b->ctx, i);
		if (b->done)
			b->done(b->ctx, i);
		workpool_yield();
	}
	return 0;
}

static void state_init(struct workpool_batch_state *s, struct workpool_batch *b, unsigned threads)
{
	memset(s, 0, sizeof(*s));
	s->b = b;
	s->owner = current;
	s->prio = current ? current->prio : WORKPOOL_NORMAL;
	s->max = threads;
	s->window = b->window ? b->window : 4 * (size_t)threads;
	if (b->done || !b->any_order) {
		s->finished = xcalloc(s->window, sizeof(*s->finished));
		s->logs = xcalloc(s->window, sizeof(*s->logs));
	} else {
		s->item = xcalloc(b->n, sizeof(*s->item));
	}
}

static void state_release(struct workpool_batch_state *s)
{
	for (size_t k = 0; s->logs && k < s->window; k++)
		report_log_clear(&s->logs[k]);
	free(s->logs);
	free(s->finished);
	free(s->item);
	for (size_t k = 0; k < s->n_pend; k++)
		report_log_clear(&s->pend[k].log);
	free(s->pend);
	free(s->prefer);
}

/* The caller's loop: deliver, give way to urgent tasks, work, wait (lock held). */
static void caller_loop(struct workpool_batch_state *s)
{
	size_t i;

	for (;;) {
		deliver(s);
		if (!s->stopped && s->owner && atomic_load(&s->owner->cancel))
			s->stopped = true;
		if (batch_over(s))
			break;
		if (runs_here && runs_here == s->owner && urgent_queued(s->owner->prio)) {
			s->paused = true;
			if (!s->busy) {
				run_urgent();
				s->paused = false;
				pthread_cond_broadcast(&E.changed);
			} else {
				pthread_cond_wait(&E.changed, &E.lock);
			}
			continue;
		}
		if (take(s, &i))
			work_item(s, i);
		else
			pthread_cond_wait(&E.changed, &E.lock);
	}
}

int workpool_run(struct workpool_batch *b)
{
	unsigned threads = workpool_threads(b->threads);
	struct workpool_batch_state s, **pp;
	int r;

	if (threads <= 1 || b->n <= 1)
		return run_inline(b);
	state_init(&s, b, threads);
	pthread_mutex_lock(&E.lock);
	start_pool();
	b->st = &s;
	s.next_active = E.active;
	E.active = &s;
	pthread_cond_broadcast(&E.changed);
	caller_loop(&s);
	for (pp = &E.active; *pp != &s; pp = &(*pp)->next_active)
		;
	*pp = s.next_active;
	b->st = NULL;
	r = s.next_done < b->n ? -1 : 0;
	pthread_mutex_unlock(&E.lock);
	state_release(&s);
	return r;
}

void workpool_prefer(struct workpool_batch *b, size_t i)
{
	struct workpool_batch_state *s;

	pthread_mutex_lock(&E.lock);
	if ((s = b->st) && s->item && i < b->n && s->item[i] == ITEM_FREE) {
		if (s->n_prefer == PREFER_MAX) { /* the oldest asks go */
			memmove(s->prefer, s->prefer + PREFER_MAX / 2,
				(PREFER_MAX - PREFER_MAX / 2) * sizeof(*s->prefer));
			s->n_prefer -= PREFER_MAX / 2;
		}
		ALLOC_GROW(s->prefer, s->n_prefer + 1, s->alloc_prefer);
		s->prefer[s->n_prefer++] = i;
		pthread_cond_broadcast(&E.changed);
	}
	pthread_mutex_unlock(&E.lock);
}
