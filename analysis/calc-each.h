/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-each.h - many procedures of one epoch analysed on several
 * threads (dcpicalc --image), their results taken in order: the same
 * output as a loop of calc_build(), sooner.
 *
 *   calc_each(&view, refs, n, &opts, 0, print_one, &state);
 *
 * calc_prepare() runs under a lock of the view (the view and its images
 * are read one thread at a time), calc_compute() on any thread; each(ctx,
 * i, c, r) runs on the caller's thread for i = 0, 1, ... in order, r being
 * what calc_build() would have returned for refs[i] (c is released after
 * it).  With opts.cache (calc-cache.h), the threads share the cache.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_EACH_H
#define DCPI_CORE_ANALYSIS_CALC_EACH_H

#include <stddef.h>

#include "analysis/calc.h"

/*
 * Analyses refs[0..n) of v on `threads` threads (0: one per CPU,
 * workpool_threads()), calling each() in order.
 */
void calc_each(struct epoch_view *v, const struct proc_ref *refs, size_t n,
	       const struct calc_opts *o, unsigned threads,
	       void (*each)(void *ctx, size_t i, struct calc *c, int r), void *ctx);

#endif
