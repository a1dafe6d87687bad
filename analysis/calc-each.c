/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-each.c - procedures analysed on several threads, taken in
 * order or as a view asks (calc-each.h), on core/workpool.h.
 */
#include "config.h"

#include "analysis/calc-each.h"

#include <stdlib.h>

#include "core/xalloc.h"

/*
 * The view's lock: held for a few microseconds a procedure, by every
 * thread in turn, so a thread that finds it taken spins a moment before it
 * sleeps (a million procedures slept and woke a million times).
 */
static void view_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(lock, &a);
	pthread_mutexattr_destroy(&a);
}

/* Prepares under the view's lock, computes without it; what calc_build() returns. */
static int analyse(struct calc *c, struct epoch_view *v, pthread_mutex_t *view_lock,
		   const struct proc_ref *ref, const struct calc_opts *o)
{
	int r;

	pthread_mutex_lock(view_lock);
	r = calc_prepare(c, v, ref, o);
	pthread_mutex_unlock(view_lock);
	return r ? r : calc_compute(c);
}

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

	e->r[i] = analyse(&e->c[i], e->v, &e->view_lock, &e->refs[i], e->o);
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
	struct workpool_batch b = { .n = n, .threads = workpool_threads(threads), .work = work,
				    .done = done, .ctx = &e };

	view_lock_init(&e.view_lock);
	e.c = xcalloc(n + 1, sizeof(*e.c));
	e.r = xcalloc(n + 1, sizeof(*e.r));
	workpool_run(&b);
	free(e.c);
	free(e.r);
	pthread_mutex_destroy(&e.view_lock);
}

static void row_work(void *arg, size_t i)
{
	struct calc_rows *cr = arg;
	struct proc_ref ref;
	struct calc c;
	int r;

	if (cr->wanted && !cr->wanted(cr->ctx, i))
		return;
	if (cr->refs)
		ref = cr->refs[i];
	else
		cr->ref(cr->ctx, i, &ref);
	if (!ref.proc)
		return;
	r = analyse(&c, cr->v, &cr->view_lock, &ref, cr->o);
	cr->row(cr->ctx, i, &c, r);
	calc_release(&c);
}

int calc_rows_run(struct calc_rows *cr)
{
	int r;

	view_lock_init(&cr->view_lock);
	/* field by field: workpool_prefer() may read the batch meanwhile */
	cr->batch.n = cr->n;
	cr->batch.threads = cr->threads;
	cr->batch.work = row_work;
	cr->batch.done = NULL;
	cr->batch.ctx = cr;
	cr->batch.any_order = true;
	r = workpool_run(&cr->batch);
	pthread_mutex_destroy(&cr->view_lock);
	return r;
}

void calc_rows_prefer(struct calc_rows *cr, size_t i)
{
	workpool_prefer(&cr->batch, i);
}
