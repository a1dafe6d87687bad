/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-cache.h - the static part of the instruction-level
 * analysis (calc.h), cached: what the analysis of a procedure finds that
 * depends only on the binary and the processor model -- its CFG with the
 * frequency-equivalence classes, and each block's schedules (cold, after
 * each predecessor's code, in a self-loop's steady state) -- kept per
 * (build-id, model) in the database (calc/BUILD-ID.MODEL, docs/db-format.md
 * "Cached analyses"), so that the next analysis of the procedure, in this
 * process or another, starts from it: dcpicalc's second run over an image,
 * dcpi-tui's second opening of an epoch.
 *
 *   struct calc_cache *cc = calc_cache_new(view.db);
 *   struct calc_opts o = CALC_OPTS_INIT;
 *   o.cache = cc;
 *   calc_build(&c, &view, &ref, &o);   // as many procedures as wanted
 *   ...
 *   calc_cache_free(cc);               // stores what was found anew
 *
 * What comes from the cache gives exactly the figures the analysis would
 * find again (tests/bench/calc-bench --digest, test-analysis).  Only
 * images with a build-id whose binary is the one profiled are cached.  A
 * cache is never trusted beyond what it says of itself: one made by
 * another version of the analysis or of capstone, or with other symbols
 * (a debug file found or gone), is made again without a word; one that is
 * damaged (its checksum, or a payload the decoder refuses) is made again
 * with a warning, once.  Storing needs write access to the database
 * directory; without it the analysis works as without a cache.
 *
 * Thread-safe: one cache may be shared by threads analysing procedures at
 * once (calc_prepare() and calc_compute(), calc.h): its functions take its
 * lock; calc_cache_free() must come after every analysis using it ended.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_CACHE_H
#define DCPI_CORE_ANALYSIS_CALC_CACHE_H

#include <stdbool.h>
#include <stddef.h>

struct db;

struct calc_cache;

/* A cache over db (NULL: in this process only, nothing stored). */
struct calc_cache *calc_cache_new(struct db *db);
/*
 * Stores the procedures found anew since the last flush, with those the
 * database held, one file per (build-id, model).  Returns 0, or -1 if some
 * could not be stored (no message: a cache that cannot be stored is only
 * not stored).
 */
int calc_cache_flush(struct calc_cache *cc);
/* Flushes and frees (NULL: nothing). */
void calc_cache_free(struct calc_cache *cc);

struct calc_cache_stats {
	size_t hits;      /* procedures whose static part came from the cache */
	size_t misses;    /* ... that were analysed in full (and added) */
	size_t stored;    /* procedures written to the database by flushes */
};
void calc_cache_get_stats(struct calc_cache *cc, struct calc_cache_stats *st);

/*
 * Validates the payload of a cached analysis file (the blob's payload,
 * count its record count) as a reader would: every procedure's record
 * decoded and checked (or, for a memo of a view's figures, calc-memo.h,
 * every row).  Returns 0, or -1 with *why (static text).  For dcpidb check
 * and the fuzz target.
 */
int calc_cache_check_payload(const void *payload, size_t len, unsigned count, const char **why);

#endif
