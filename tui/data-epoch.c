/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-epoch.c - the epoch views the analysis sources share
 * (tui/data-epoch.h).
 */
#include "config.h"
#include "tui/data-epoch.h"

#include "core/die.h"
#include "core/xalloc.h"
#include "disasm/srcfile.h"
#include "tui/job.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct data_ctx {
	pthread_mutex_t lock;           /* guards epochs, n, alloc and stale flags */
	struct shared_epoch **epochs;
	size_t n, alloc;
	unsigned generation;            /* bumped by data_ctx_invalidate() */
	struct srcfiles src;            /* worker only */
	char *debug_dir;
};

struct data_ctx *data_ctx_new(const struct data_ctx_opts *opts)
{
	struct data_ctx *ctx = XNEW(struct data_ctx);

	pthread_mutex_init(&ctx->lock, NULL);
	srcfiles_init(&ctx->src);
	if (opts && opts->debug_dir)
		ctx->debug_dir = xstrdup(opts->debug_dir);
	for (size_t i = 0; opts && i < opts->n_substitutions; i++)
		if (srcfiles_add_subst(&ctx->src, opts->substitutions[i]))
			errorf("bad substitution '%s' (want FROM=TO)", opts->substitutions[i]);
	return ctx;
}

static void epoch_close(struct shared_epoch *se)
{
	epoch_view_release(&se->view);
	free(se->error);
	free(se);
}

void data_ctx_free(struct data_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->n; i++)
		epoch_close(ctx->epochs[i]);
	free(ctx->epochs);
	srcfiles_release(&ctx->src);
	free(ctx->debug_dir);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

void data_ctx_invalidate(struct data_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->generation++;
	for (size_t i = 0; i < ctx->n; i++) {
		if (!ctx->epochs[i]->stale) {
			ctx->epochs[i]->stale = true;
			atomic_fetch_sub(&ctx->epochs[i]->refs, 1); /* the cache's own */
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

struct srcfiles *data_ctx_srcfiles(struct data_ctx *ctx)
{
	return &ctx->src;
}

void shared_epoch_put(struct shared_epoch *se)
{
	if (se)
		atomic_fetch_sub(&se->refs, 1);
}

void shared_epoch_get(struct shared_epoch *se)
{
	atomic_fetch_add(&se->refs, 1);
}

/* Worker: closes the stale epoch views nothing uses any more.  Lock held. */
static void sweep(struct data_ctx *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < ctx->n; i++) {
		struct shared_epoch *se = ctx->epochs[i];

		if (se->stale && atomic_load(&se->refs) <= 0)
			epoch_close(se);
		else
			ctx->epochs[kept++] = se;
	}
	ctx->n = kept;
}

struct shared_epoch *data_epoch_get(struct data_ctx *ctx, struct job *job, struct db *db,
				    uint32_t seq, bool force)
{
	struct epoch_view_opts o = { .force = force, .debug_dir = ctx->debug_dir };
	struct shared_epoch *se;
	unsigned generation;
	char name[16];

	pthread_mutex_lock(&ctx->lock);
	generation = ctx->generation;
	sweep(ctx);
	for (size_t i = 0; i < ctx->n; i++) {
		se = ctx->epochs[i];
		if (!se->stale && se->db == db && se->seq == seq && se->force == force) {
			atomic_fetch_add(&se->refs, 1);
			pthread_mutex_unlock(&ctx->lock);
			return se;
		}
	}
	pthread_mutex_unlock(&ctx->lock);

	se = XNEW(struct shared_epoch);
	atomic_init(&se->refs, 2); /* the cache's and the caller's */
	se->db = db;
	se->seq = seq;
	se->force = force;
	snprintf(name, sizeof(name), "%" PRIu32, seq);
	if ((se->status = epoch_view_open(&se->view, db, name, &o)))
		se->error = xstrdup(job_last_message(job, "cannot open the epoch"));

	pthread_mutex_lock(&ctx->lock);
	/* invalidated while it opened: what it read may be old, do not share it */
	if (generation != ctx->generation) {
		se->stale = true;
		atomic_fetch_sub(&se->refs, 1);
	}
	ALLOC_GROW(ctx->epochs, ctx->n + 1, ctx->alloc);
	ctx->epochs[ctx->n++] = se;
	pthread_mutex_unlock(&ctx->lock);
	return se;
}

