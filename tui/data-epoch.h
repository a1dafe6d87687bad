/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-epoch.h - the epochs the analysis sources open, shared: one
 * struct epoch_view (analysis/epochview.h) per (database, epoch, force),
 * opened by the first job that needs it and used by every later one
 * (images, symbols and DWARF are read once), with the source files found
 * for listings.  The procedures, procedure, callers and values sources
 * build on it (tui/data-proc.h, tui/data-callers.h).
 *
 * Threads.  An epoch view changes as it is used (images open lazily), so
 * only the worker thread ever calls into it; results keep what the views
 * read in their own memory, or in memory the epoch view never changes
 * again (procedure names, image records, a listing's CFG), and hold a
 * reference that keeps the epoch view alive.  The main thread only drops
 * references and invalidates (reload); epoch views are closed by the
 * worker (when a job finds them unused and stale) or by data_ctx_free().
 */
#ifndef DCPI_TUI_DATA_EPOCH_H
#define DCPI_TUI_DATA_EPOCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"

struct data_ctx;
struct db;
struct job;
struct srcfiles;

/* One epoch opened for the analysis views, shared (see above). */
struct shared_epoch {
	atomic_int refs;
	struct db *db;
	uint32_t seq;
	bool force;
	bool stale;              /* after data_ctx_invalidate(): not handed out again */
	int status;              /* epoch_view_open(): 0, or -1 (reported) */
	char *error;             /* what it reported, or NULL */
	struct epoch_view view;
};

struct data_ctx_opts {
	const char *debug_dir;            /* NULL: $DCPI_DEBUG_DIR, else /usr/lib/debug */
	const char *const *substitutions; /* "FROM=TO" source path substitutions */
	size_t n_substitutions;
};

/* The analysis context of a session; bad substitutions are reported and skipped. */
struct data_ctx *data_ctx_new(const struct data_ctx_opts *opts);
/* Closes every epoch view; call when no job runs any more (after jobs_release()). */
void data_ctx_free(struct data_ctx *ctx);
/* Main thread (reload): epoch views opened so far are not reused. */
void data_ctx_invalidate(struct data_ctx *ctx);

/* Worker thread: the source files listings read (--substitute-path applied). */
struct srcfiles *data_ctx_srcfiles(struct data_ctx *ctx);

/* Drops a reference (any thread; NULL: nothing). */
void shared_epoch_put(struct shared_epoch *se);
/* Takes another reference (any thread). */
void shared_epoch_get(struct shared_epoch *se);

/*
 * Worker thread: the epoch view of (db, seq, force), shared, with a
 * reference for the caller (status and error say if it could not be opened).
 */
struct shared_epoch *data_epoch_get(struct data_ctx *ctx, struct job *job, struct db *db,
				    uint32_t seq, bool force);

#endif
