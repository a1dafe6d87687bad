/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/workpool.h - work on items 0..n-1 spread over threads, the results
 * used in order: work(ctx, i) runs on any of `threads` threads (the
 * caller's among them), several at once; done(ctx, i) runs on the
 * caller's thread, for 0, 1, 2... in that order, each after its work.  So
 * the output of a pool is the output of the loop
 *
 *   for (i = 0; i < n; i++) { work(ctx, i); done(ctx, i); }
 *
 * whatever the number of threads, as long as work() touches nothing but
 * item i's own state (and what it guards itself).  At most `window`
 * items are worked and not yet done at a time, which bounds what their
 * results hold.
 *
 *   struct workpool_job j = { .n = n, .threads = workpool_threads(0),
 *                             .work = analyse, .done = print, .ctx = &state };
 *   workpool_run(&j);
 */
#ifndef DCPI_CORE_WORKPOOL_H
#define DCPI_CORE_WORKPOOL_H

#include <stddef.h>

struct workpool_job {
	size_t n;
	unsigned threads;       /* 1 (or 0): everything on the caller's thread */
	size_t window;          /* 0: 4 per thread */
	void (*work)(void *ctx, size_t i);
	void (*done)(void *ctx, size_t i);  /* may be NULL */
	void *ctx;
};

/* Runs the job; returns when every item is done. */
void workpool_run(const struct workpool_job *job);

/* `want` threads if not 0, else one per online CPU (at most 16). */
unsigned workpool_threads(unsigned want);

#endif
