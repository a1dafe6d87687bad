/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/upkeep.h - a database's upkeep: what it holds and how big it is, the
 * removal of old epochs (retention), and the removal of binary snapshots
 * no epoch uses any more.  dcpid applies a retention policy as it runs
 * (--max-size, --max-age); dcpidb prune and gc do it offline.
 *
 * Removal is crash-safe and atomic from a reader's view: an epoch is
 * renamed to a temp name (.tmp.*) first, the database directory is
 * fsynced, and only then are its files deleted.  A reader sees the epoch
 * whole or not at all; a crash in between leaves a temp directory that the
 * next writer removes when it opens the database (docs/db-format.md,
 * "Removing epochs").  Epochs go oldest first, so after a crash the
 * survivors are still the newest ones.  The latest epoch (the highest
 * number) and the current one are never removed: epoch numbers are never
 * reused, and a writer's epoch stays.
 *
 * Sizes are disk use as du(1) counts it (allocated blocks, directories
 * included), so that a limit bounds what the file system gives up.
 */
#ifndef DCPI_DB_UPKEEP_H
#define DCPI_DB_UPKEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/* One epoch, as retention sees it. */
struct db_epoch_usage {
	uint32_t seq;
	uint64_t bytes;         /* disk use of its directory and files */
	uint64_t files;
	bool meta_ok;           /* false: its meta is unreadable (reported) */
	char *label;            /* NULL if none */
	int64_t start_ns, end_ns;  /* end 0: still open */
};

/* What a database holds, with the disk use of each part. */
struct db_census {
	struct db_epoch_usage *epochs;  /* sorted by number */
	size_t n;
	uint32_t current;               /* the `current` file's epoch, 0 if none */
	uint64_t total_bytes;           /* everything under the directory (du -s) */
	uint64_t binaries_bytes;        /* binaries/ and its snapshots */
	size_t n_binaries;
	size_t n_unused_binaries;       /* snapshots no epoch names (0 if an index is unreadable) */
	uint64_t unwind_bytes;          /* unwind/ and its cached unwind tables */
	size_t n_unwind;
	size_t n_unused_unwind;         /* tables no epoch names (0 if an index is unreadable) */
	uint64_t calc_bytes;            /* calc/ and its cached analyses */
	size_t n_calc;
	size_t n_unused_calc;           /* analyses of binaries no epoch names, memos of
					   epochs gone (idem) */
	uint64_t temp_bytes;            /* .tmp.* left by writers that died (anywhere) */
	size_t n_temps;
	void *priv;                     /* the snapshots and which epochs name them */
};

/*
 * Takes the census of db: every epoch's size and metadata, the snapshots,
 * the temp files.  An unreadable meta is reported and the epoch listed
 * with meta_ok false.  Returns 0, or -1 if the directory cannot be read.
 */
int db_census_take(struct db *db, struct db_census *c);
void db_census_release(struct db_census *c);

/* What to remove (every limit 0 is no limit). */
struct db_retention {
	uint64_t max_bytes;     /* remove the oldest epochs until the database is this small */
	int64_t max_age_ns;     /* remove epochs that ended longer ago than this */
	uint32_t keep;          /* keep only the N latest epochs (of those label selects) */
	const char *label;      /* only epochs labelled so are candidates (NULL: all) */
};

/* True if the retention removes nothing by itself (no limit; a label alone does). */
bool db_retention_empty(const struct db_retention *r);

/* The epochs a retention removes, oldest first. */
struct db_prune_plan {
	uint32_t *seqs;
	size_t n;
	uint64_t bytes;         /* what they use */
	uint64_t bytes_after;   /* the database's size without them (snapshots not counted out) */
	bool over_limit;        /* still above max_bytes: what is protected alone exceeds it */
};

/*
 * Chooses the epochs to remove from census c under r, at wall-clock time
 * now_ns: the oldest first, never the latest epoch, the current one or
 * `protect` (0: none).  A label alone (no limit) selects every epoch with
 * that label.  Epochs whose meta is unreadable are removed by size or
 * --keep (their age and label are unknown).
 */
void db_prune_plan_make(const struct db_census *c, const struct db_retention *r,
			uint32_t protect, int64_t now_ns, struct db_prune_plan *p);
void db_prune_plan_release(struct db_prune_plan *p);

/* What removal did (cumulative: callers may add runs up). */
struct db_prune_stats {
	uint64_t epochs;        /* epochs removed */
	uint64_t epoch_bytes;   /* their disk use */
	uint64_t binaries;      /* snapshots removed */
	uint64_t binary_bytes;
	uint64_t unwind_tables; /* cached unwind tables removed (db_binaries_gc) */
	uint64_t unwind_bytes;
	uint64_t calc_files;    /* cached analyses removed (db_binaries_gc) */
	uint64_t calc_bytes;
	uint32_t last_seq;      /* the newest epoch removed, 0 if none */
};

/*
 * Writer: removes the epochs seqs[0..n) (oldest first), atomically each:
 * all are renamed to temps, the directory is fsynced once, then their
 * files are deleted.  Refuses (BUG) the current epoch.  Returns 0, or -1
 * after reporting (what was removed before the failure stays removed and
 * is counted in st).
 */
int db_epochs_remove(struct db *db, const uint32_t *seqs, size_t n, struct db_prune_stats *st);

/*
 * Writer: removes the binary snapshots (binaries/HEX), the cached unwind
 * tables (unwind/HEX, listed by that name) and the cached analyses
 * (calc/HEX.MODEL, listed so) that no epoch's image index names by
 * build-id, and the memos of epochs gone (calc/DIGEST.MODEL, db/binaries.h).
 * If an epoch's index is unreadable
 * nothing is removed (it might name any of them) and 1 is returned, with a
 * warning.  With dry_run, only counts what would go (st) and lists it with
 * list(ctx, hex, bytes) if list is not NULL.  Returns 0, 1 or -1 (reported).
 */
int db_binaries_gc(struct db *db, bool dry_run, struct db_prune_stats *st,
		   void (*list)(void *ctx, const char *hex, uint64_t bytes), void *ctx);

/*
 * Writer: applies r (dcpid): takes the census, removes what the plan says
 * and then the snapshots no remaining epoch uses.  *bytes_after gets the
 * database's size afterwards.  Returns 0, or -1 after reporting.
 */
int db_retain(struct db *db, const struct db_retention *r, uint32_t protect,
	      struct db_prune_stats *st, uint64_t *bytes_after);

/* Disk use of the whole database (du -s), cheap enough for a status report. */
uint64_t db_disk_usage(struct db *db);

#endif
