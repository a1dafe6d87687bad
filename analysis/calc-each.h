/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-each.h - many procedures of one epoch analysed on several
 * threads, on the engine of core/workpool.h: dcpicalc --image, which
 * prints them in order (the same output as a loop of calc_build(),
 * sooner), and dcpi-tui's procedures view, which fills a column per
 * procedure, those on screen first.
 *
 *   calc_each(&view, refs, n, &opts, 0, print_one, &state);
 *
 * calc_prepare() runs under a lock of the view (the view and its images
 * are read one thread at a time), calc_compute() on any thread; each(ctx,
 * i, c, r) runs on the caller's thread for i = 0, 1, ... in order, r being
 * what calc_build() would have returned for refs[i] (c is released after
 * it).  What the analysis of refs[i] reported is said just before.  With
 * opts.cache (calc-cache.h), the threads share the cache.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_EACH_H
#define DCPI_CORE_ANALYSIS_CALC_EACH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis/calc.h"
#include "core/workpool.h"

/*
 * Analyses refs[0..n) of v on `threads` threads (0: one per CPU,
 * workpool_threads()), calling each() in order.
 */
void calc_each(struct epoch_view *v, const struct proc_ref *refs, size_t n,
	       const struct calc_opts *o, unsigned threads,
	       void (*each)(void *ctx, size_t i, struct calc *c, int r), void *ctx);

/*
 * The same in any order, for a view: refs[i] with proc NULL are skipped
 * (and those wanted() refuses, when it is given: figures found elsewhere);
 * row(ctx, i, c, r) runs on the thread that analysed refs[i], with what
 * the analysis reported in its capture log (core/die.h: kept, and said in
 * the order of refs, unless row clears it).  In a task, it gives way to
 * more urgent ones between procedures (workpool.h).
 *
 *   struct calc_rows cr = { .v = v, .refs = refs, .n = n, .o = &o, .row = fill, .ctx = res };
 *   calc_rows_run(&cr);              // calc_rows_prefer(&cr, i) meanwhile, from any thread
 *
 * (cr zeroed before calc_rows_prefer() may be called: the batch is empty then).
 */
struct calc_rows {
	struct epoch_view *v;
	const struct proc_ref *refs;
	/* without refs: item i's procedure, from where the caller keeps it (proc NULL: skipped) */
	void (*ref)(void *ctx, size_t i, struct proc_ref *out);
	size_t n;
	const struct calc_opts *o;
	unsigned threads;               /* 0: one per CPU */
	void (*row)(void *ctx, size_t i, struct calc *c, int r);
	void *ctx;
	bool (*wanted)(void *ctx, size_t i);   /* NULL, or false: refs[i] is skipped too */
	/* private */
	pthread_mutex_t view_lock;
	struct workpool_batch batch;
};

/* Analyses every ref; 0, or -1 if the task it runs in was cancelled first. */
int calc_rows_run(struct calc_rows *cr);
/* While calc_rows_run(cr) runs, from any thread: refs[i] goes next. */
void calc_rows_prefer(struct calc_rows *cr, size_t i);

#endif
