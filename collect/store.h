/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/store.h - the daemon's in-memory profiles and how they reach the
 * database.
 *
 * Resolved samples are merged into one table per (image, event), and per
 * (image, event, pid) for images named with --per-process.  A table that
 * has new counts is dirty; store_tick() writes dirty tables that have
 * waited write_interval, oldest first, at most write_budget a tick, so the
 * disk sees a steady trickle instead of DCPI's 10-minute bursts.  Each write
 * is a merge-add (db_profile_merge): the table then holds only what came
 * since.  A failed write keeps the counts and is retried later (with
 * back-off); only when memory passes its cap are new samples dropped, and
 * counted.
 *
 * Before the first profile of an image the epoch's image index is stored;
 * after each batch of profiles the epoch's meta is stored with the sample
 * counts that are on disk.  A crash (SIGKILL) can leave the meta one batch
 * behind the profiles, never ahead; a store that continues an epoch
 * recomputes the counts from the profiles (store_begin()).
 *
 * The kernel image gets the lines of /proc/kallsyms it needs (the symbols
 * holding its sampled addresses and their successors) as the epoch's
 * `kallsyms` file; an anon image gets its process's /tmp/perf-PID.map, if
 * any, as `perf-PID.map`.
 */
#ifndef DCPI_COLLECT_STORE_H
#define DCPI_COLLECT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/kallsyms.h"
#include "collect/procs.h"
#include "core/u64map.h"
#include "db/db.h"

struct store_config {
	int64_t write_interval_ns;  /* how long a table stays dirty before it is written */
	unsigned write_budget;      /* tables written per tick (0: no limit) */
	uint64_t max_entries;       /* offsets held in memory before samples are dropped */
	bool kallsyms;              /* save the kernel's symbols with kernel samples */
	bool perf_maps;             /* copy /tmp/perf-PID.map for anon images */
};

/* Defaults: 60 s interval, 4 tables a tick, 4M offsets. */
void store_config_init(struct store_config *cfg);

struct ptable {
	uint32_t image;
	uint8_t event;
	bool per_pid;
	uint32_t pid;
	struct u64map counts;       /* offset -> samples since the last write */
	uint64_t total;             /* samples in counts */
	int64_t dirty_since;        /* monotonic ns of the first unwritten sample, 0 if clean */
	int64_t retry_at;           /* after a failure: not before this */
	unsigned failures;          /* consecutive */
};

struct store_stats {
	uint64_t writes;            /* profiles written */
	uint64_t write_failures;
	uint64_t meta_writes;
	uint64_t index_writes;
	uint64_t aux_writes;
	uint64_t dropped;           /* samples dropped at the memory cap */
};

/* Called before each meta write, to fill in the events and collector counters. */
typedef void (*store_meta_fn)(void *ctx, struct epoch_meta *meta);

struct store {
	struct db *db;
	struct procs *procs;
	struct store_config cfg;
	store_meta_fn fill_meta;
	void *fill_ctx;

	uint32_t seq;               /* the epoch being written, 0 if none */
	uint32_t gen;               /* bumped per epoch: marks images already indexed */
	struct epoch_meta meta;
	struct image_index index;
	bool index_dirty;

	struct ptable *t;
	size_t n, alloc;
	struct u64map lookup;       /* table key -> index + 1 */
	uint64_t entries;           /* offsets held over all tables */
	size_t dirty;               /* dirty tables */

	/* Samples on disk in this epoch (aggregate profiles). */
	uint64_t written[EVENT__COUNT];
	uint64_t written_unknown, written_kernel;
	/* Counters this epoch had before this store continued it. */
	struct epoch_meta base;

	struct u64map kaddrs;       /* kernel offsets sampled this epoch */
	bool kallsyms_stale;        /* some are outside the saved symbols */
	struct kallsyms_range *kranges;     /* the symbols the saved subset names */
	size_t nkranges;
	int64_t last_meta;
	int64_t last_kallsyms;      /* monotonic ns of the last rewrite of the subset */
	struct store_stats st;
};

void store_init(struct store *s, struct db *db, struct procs *procs,
		const struct store_config *cfg, store_meta_fn fill_meta, void *ctx);
void store_release(struct store *s);

/* How to start: a new epoch, or continue an existing one. */
struct store_epoch_opts {
	uint32_t continue_seq;      /* 0: create a new epoch */
	const char *label;          /* new epoch: its label (NULL: none) */
	char **command;             /* new epoch: dcpirun's command (NULL: none) */
};

/*
 * Starts writing an epoch.  Continuing one loads its meta and index, clears
 * its end time and recomputes the sample counts from its profiles.
 */
int store_begin(struct store *s, const struct store_epoch_opts *o);

/* Adds count samples at offset of an image for an event (and pid, if per-process). */
void store_add(struct store *s, uint32_t image, unsigned event, uint32_t pid, uint64_t offset,
	       uint64_t count);

/*
 * Notes a frame of a stack (collect/callchain.h) that has no samples of its
 * own: its image goes into the epoch's index, and a kernel address into the
 * kallsyms subset.
 */
void store_note_frame(struct store *s, uint32_t image, uint64_t offset);

/*
 * Stores the image index and the kallsyms subset if they changed: what an
 * epoch file naming images (the stack table) needs on disk before it.
 */
int store_sync_aux(struct store *s);

/* Bounded work: writes tables due at now.  Returns the number written. */
size_t store_tick(struct store *s, int64_t now);

/* Writes every dirty table, the index and the meta.  -1 if something failed. */
int store_flush(struct store *s);

/* Flushes, then sets the epoch's end time.  -1 on failure. */
int store_close(struct store *s);

/* The value of a counter the epoch had before this run (see base). */
uint64_t store_base_counter(const struct store *s, const char *name);

/* Approximate bytes of memory held. */
size_t store_bytes(const struct store *s);

#endif
