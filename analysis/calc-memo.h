/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-memo.h - what a view shows of every procedure of an
 * epoch (calc_procrow(): CPI, best-case CPI, the dominant culprit, the
 * share of confident estimates), kept in the database's cache of
 * analyses (calc/DIGEST.MODEL, beside calc-cache.h's files), so that
 * dcpi-tui's procedures view of a million rows fills its columns in a new
 * session from one file instead of analysing every procedure again.
 *
 * DIGEST (64 hex digits) names what the figures were made from: the
 * epoch (its metadata, every image's key and samples), the options of the
 * analysis, the model, the build of the analysis (a digest of its sources)
 * and capstone; a memo is used only for exactly that, and per procedure
 * only for the same range.  It is a cache: what calc-cache.h says of
 * storing holds (any process that can write the directory; not fsynced;
 * a damaged one is made again with a warning).  A memo stored replaces
 * the others of its epoch and model (made of what the epoch held before,
 * or with other options); `dcpidb gc` removes those of epochs gone.
 *
 *   struct calc_memo *m = calc_memo_open(db, &view, &opts);
 *   calc_memo_find(m, n, item, found, ctx);      // found() for the items it has
 *   ... analyse the others
 *   calc_memo_close(m, n, each_row, ctx);        // stores them all if some are new
 *
 * A million procedures' figures are tens of MB: the memo holds none of
 * them.  It reads and writes its file a piece at a time (db/binaries.h),
 * matching what it reads with the caller's procedures as it goes, and the
 * caller keeps the figures it shows.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_MEMO_H
#define DCPI_CORE_ANALYSIS_CALC_MEMO_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/calc.h"
#include "db/binaries.h"

struct db;

/* The first number of a memo's payload (a cached static part starts with another). */
#define CALC_MEMO_FORMAT DB_CALC_MEMO_FORMAT

struct calc_memo;

/*
 * The memo of v's procedures analysed with o (NULL: the defaults), with
 * what the database holds of it; NULL if there can be none (an estimator
 * of its own, o->est).  Reads v, not the images: call it where v may be
 * read.
 */
struct calc_memo *calc_memo_open(struct db *db, struct epoch_view *v, const struct calc_opts *o);
/* Item k's procedure: image (of the view) and p; false if it has none. */
typedef bool (*calc_memo_item_fn)(void *ctx, size_t k, size_t *image, const struct proc **p);
/*
 * Item k's figures, found: those a view shows (cpi, best_cpi, dominant,
 * dominant_share, high_share; the others 0).
 */
typedef void (*calc_memo_found_fn)(void *ctx, size_t k, const struct calc_procrow *row);
/*
 * Finds the figures the database holds of items 0..n-1 (their procedures,
 * the same range), calling found() for each in no order; returns how many.
 * A stale memo has none; a damaged one is warned about (made again).  m
 * may be NULL.  Call it once, before calc_memo_close().
 */
size_t calc_memo_find(struct calc_memo *m, size_t n, calc_memo_item_fn item,
		      calc_memo_found_fn found, void *ctx);

/* A procedure's figures to keep: row(ctx, k, ...) gives the kth, false if it has none. */
typedef bool (*calc_memo_row_fn)(void *ctx, size_t k, size_t *image, const struct proc **p,
				 struct calc_procrow *row);
/*
 * Stores the figures of the n procedures row() gives if some are new
 * (more than the memo had), and frees the memo (NULL: nothing).  The
 * caller keeps the figures it shows: the memo holds none of its own.  A
 * memo that cannot be stored is only not stored.
 */
void calc_memo_close(struct calc_memo *m, size_t n, calc_memo_row_fn row, void *ctx);

/* Validates a memo's payload as calc_memo_open() reads it (dcpidb check, the fuzz target). */
int calc_memo_check_payload(const void *payload, size_t len, unsigned count, const char **why);

#endif
