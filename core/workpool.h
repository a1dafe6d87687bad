/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/workpool.h - the one engine of background and parallel work of
 * every dcpi program: a pool of threads (one per CPU, started on first
 * use) that runs
 *
 *   tasks    work done in the background while the caller goes on
 *            (dcpi-tui's jobs: the images of an epoch read, a procedure
 *            analysed, every procedure of a view analysed).  One task runs
 *            at a time (tasks share state that is not thread-safe: an
 *            epoch view), the most urgent first, in the order submitted
 *            among equals.  A task can be cancelled, says how far it got,
 *            and keeps what it reported (core/die.h: a report_log) for
 *            whoever collects it.  A more urgent task submitted while a
 *            less urgent one runs waits for the running one's next yield
 *            point (workpool_yield(), or any item boundary of its batches)
 *            and runs there, on the yielding task's thread, which then goes
 *            on where it stopped: a background task never saves its state.
 *
 *   batches  items 0..n-1 worked on by several threads at once (the
 *            caller's among them), from a task or from any thread (dcpicalc
 *            --image analyses an image's procedures so).  Each item's
 *            messages are kept apart and said in item order on the
 *            caller's thread, each before its done(); so the output of a
 *            batch is the output of the loop
 *
 *              for (i = 0; i < n; i++) { work(ctx, i); done(ctx, i); }
 *
 *            whatever the number of threads, as long as work() touches
 *            nothing but item i's own state (and what it guards itself).
 *            Without done(), items may also be taken out of order: the
 *            ones a view shows first (workpool_prefer()).
 *
 *   struct workpool_batch b = { .n = n, .work = analyse, .done = print, .ctx = &state };
 *   workpool_run(&b);
 *
 *   static void load(struct workpool_task *t)      // on a thread of the pool
 *   {
 *           for (...) { workpool_progress(k, n); workpool_yield(); ... }
 *   }
 *   struct workpool_task t = { .run = load, .ctx = arg, .prio = WORKPOOL_NORMAL };
 *   workpool_submit(&t);
 *   ... workpool_state(&t) == WORKPOOL_DONE ... report_log_replay(&t.log);
 *   workpool_wait(&t);                             // before t goes
 */
#ifndef DCPI_CORE_WORKPOOL_H
#define DCPI_CORE_WORKPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"

/* ---- batches ------------------------------------------------------------------- */

struct workpool_batch_state;

struct workpool_batch {
	size_t n;
	void (*work)(void *ctx, size_t i);  /* any thread of the pool, or the caller's */
	void (*done)(void *ctx, size_t i);  /* NULL, or on the caller's thread, in order */
	void *ctx;
	unsigned threads;       /* at most this many at once, the caller's included (0: one per CPU) */
	size_t window;          /* items worked and not yet done, at most (0: 4 per thread) */
	bool any_order;         /* without done: items taken as workpool_prefer() asks */
	/* private */
	struct workpool_batch_state *st;
};

/*
 * Works on every item, then returns: 0, or -1 if the task it runs in was
 * cancelled (the items not taken yet are left: done() is called for those
 * worked, in order, up to the first left).  In a task, it is a yield
 * point at every item: a more urgent task runs here, once the items in
 * work are finished.
 */
int workpool_run(struct workpool_batch *b);

/*
 * While workpool_run(b) runs, from any thread: item i is taken before the
 * others not yet taken (any_order batches; the last asked goes first;
 * asking again for an item taken already does nothing).
 */
void workpool_prefer(struct workpool_batch *b, size_t i);

/* `want` threads if not 0, else one per online CPU (at most 16). */
unsigned workpool_threads(unsigned want);

/* ---- tasks ----------------------------------------------------------------------- */

enum workpool_prio {
	WORKPOOL_SCREEN,        /* what the screen waits for */
	WORKPOOL_NORMAL,
	WORKPOOL_BACKGROUND,    /* filling in what is shown already: gives way to the others */
	WORKPOOL_PRIO__COUNT
};

enum workpool_state { WORKPOOL_QUEUED, WORKPOOL_RUNNING, WORKPOOL_DONE };

struct workpool_task {
	void (*run)(struct workpool_task *t);  /* on a thread of the pool (not run if cancelled first) */
	void *ctx;
	enum workpool_prio prio;
	/*
	 * Called on the pool's thread once the task is WORKPOOL_DONE (to wake
	 * whoever collects it), with finished_ctx; may be NULL.
	 */
	void (*finished)(void *finished_ctx);
	void *finished_ctx;
	/* the engine's; read them once the task is done (progress at any time) */
	struct report_log log;       /* what run reported */
	int64_t run_ns;              /* how long run took */
	_Atomic uint64_t done, total; /* workpool_progress() */
	atomic_bool cancel;
	/* private */
	_Atomic int state;           /* enum workpool_state */
	bool settled;                /* finished() returned: the task may go */
	struct workpool_task *next;
};

/* Queues t (zeroed but for the caller's fields above); t must stay until workpool_wait(t). */
void workpool_submit(struct workpool_task *t);
/* Runs t here and now, as the engine would (its messages kept in t->log): without threads. */
void workpool_run_here(struct workpool_task *t);
/* Asks t to stop (any thread): it is not run if it has not started. */
void workpool_cancel(struct workpool_task *t);
/* Blocks until t is done and the engine is finished with it. */
void workpool_wait(struct workpool_task *t);

static inline enum workpool_state workpool_state(const struct workpool_task *t)
{
	return (enum workpool_state)atomic_load_explicit(&t->state, memory_order_acquire);
}

/* ---- in a task (or an item of a task's batch) -------------------------------------- */

/* The task this thread works for, or NULL. */
struct workpool_task *workpool_current(void);
/* True if the current task was cancelled (false outside tasks). */
bool workpool_cancelled(void);
/* Says how far the current task got (nothing outside tasks). */
void workpool_progress(uint64_t done, uint64_t total);
/*
 * A yield point of the task running on this thread: the more urgent tasks
 * queued run now, here, and then it returns (nothing elsewhere, or in an
 * item of a batch).
 */
void workpool_yield(void);

#endif
