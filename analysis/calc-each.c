/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-each.c - procedures analysed on several threads, taken in
 * order (calc-each.h), on core/workpool.h.
 */
#include "config.h"

#include "analysis/calc-each.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/workpool.h"
#include "core/xalloc.h"

struct each {
	struct epoch_view *v;
	const struct proc_ref *refs;
	const struct calc_opts *o;
	pthread_mutex_t view_lock;      /* calc_prepare() reads the view */
	struct calc *c;                 /* per item */
	int *r;
	void (*each)(void *ctx, size_t i, struct calc *c, int r);
	void *ctx;
};

static void work(void *arg, size_t i)
{
	struct each *e = arg;

	pthread_mutex_lock(&e->view_lock);
	e->r[i] = calc_prepare(&e->c[i], e->v, &e->refs[i], e->o);
	pthread_mutex_unlock(&e->view_lock);
	if (!e->r[i])
		e->r[i] = calc_compute(&e->c[i]);
}

static void done(void *arg, size_t i)
{
	struct each *e = arg;

	e->each(e->ctx, i, &e->c[i], e->r[i]);
	calc_release(&e->c[i]);
}

void calc_each(struct epoch_view *v, const struct proc_ref *refs, size_t n,
	       const struct calc_opts *o, unsigned threads,
	       void (*each)(void *ctx, size_t i, struct calc *c, int r), void *ctx)
{
	struct each e = { .v = v, .refs = refs, .o = o, .each = each, .ctx = ctx };
	struct workpool_job job = { .n = n, .threads = workpool_threads(threads), .work = work,
				    .done = done, .ctx = &e };

	pthread_mutex_init(&e.view_lock, NULL);
	e.c = xcalloc(n + 1, sizeof(*e.c));
	e.r = xcalloc(n + 1, sizeof(*e.r));
	workpool_run(&job);
	free(e.c);
	free(e.r);
	pthread_mutex_destroy(&e.view_lock);
}
