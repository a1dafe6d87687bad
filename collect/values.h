/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/values.h - value sampling in the collector (dcpirun --values,
 * dcpid --values; seed 004): with each user-mode sample of the time event
 * the kernel hands over the interrupted thread's registers
 * (PERF_SAMPLE_REGS_USER); they are aggregated here, per (image, file
 * offset), in constant space:
 *
 *  - a hot list per register (core/hotlist.h, Gibbons and Matias):
 *    VALUES_CAP entries, so a week of profiling keeps the most common
 *    values and their frequencies in a bounded database;
 *  - pair sums: when a thread's previous user sample (kernel samples in
 *    between do not count) was in the same image, at most
 *    VALUES_PAIR_WINDOW bytes away, each register's increase or decrease
 *    between the two, summed by sign at the later sample's offset, with
 *    the largest change.  Consecutive samples in one run of a loop
 *    telescope: their changes of an induction register add up to the
 *    iterations between the run's first and last sample, exactly
 *    (docs/analysis.md, "Measured frequencies").
 *
 * Nothing here reads a binary: the offsets come from the collector's
 * address spaces (collect/procs.h), the registers from the kernel.  The
 * tables are merged into the database (db/values.h, one blob per image
 * and epoch) by cvalues_write(): on the collector's write interval, when
 * they pass half their memory cap, on flush, before a new epoch and at the
 * end.  Past the cap, samples at offsets not yet in memory are dropped
 * (counted) until the next write frees it.
 */
#ifndef DCPI_COLLECT_VALUES_H
#define DCPI_COLLECT_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hotlist.h"
#include "core/u64map.h"
#include "db/values.h"

struct db;
struct procs;

/*
 * The registers asked of the kernel (perf_event_attr.sample_regs_user,
 * asm/perf_regs.h bits): AX BX CX DX SI DI BP SP, FLAGS, R8-R15.  A sample
 * carries them in bit order; cvalues_from_perf() puts them in the format's.
 */
#define CVALUES_PERF_REGS 0xff02ffull
#define CVALUES_PERF_NREGS 17

/* Default cap on the tables' memory. */
#define CVALUES_DEFAULT_MAX_BYTES ((size_t)64 << 20)

struct cvalues_image {
	uint32_t image;             /* collect/procs.h image index */
	struct values_profile prof; /* unsorted; records of offsets seen since the last write */
	struct u64map at;           /* offset -> index + 1 */
	unsigned failures;          /* consecutive failed writes */
};

struct cvalues_thread {
	uint32_t tid;
	bool valid;                 /* the last sample had values */
	uint32_t image;
	uint64_t offset, time;
	uint64_t regs[VALUES_NREGS];
};

struct cvalues_stats {
	uint64_t samples;           /* value samples aggregated */
	uint64_t pairs;             /* ... of them with a previous sample nearby */
	uint64_t dropped;           /* not aggregated: the memory cap */
	uint64_t unresolved;        /* user samples outside any known image */
	uint64_t refused;           /* user samples of processes whose values are not recorded */
	uint64_t writes, write_failures;
	uint64_t written_samples;   /* value samples in the database (this run) */
};

struct cvalues {
	size_t max_bytes;
	struct cvalues_image *img;
	size_t n_img, alloc_img;
	struct u64map img_at;       /* image index -> index in img + 1 */
	struct cvalues_thread *thr;
	size_t n_thr, alloc_thr;
	struct u64map thr_at;       /* tid -> index in thr + 1 */
	struct hotlist_rng rng;
	size_t bytes;               /* approximate memory of the tables */
	struct cvalues_stats st;
};

void cvalues_init(struct cvalues *v, size_t max_bytes, uint64_t seed);
void cvalues_release(struct cvalues *v);

/* Reorders a sample's registers (CVALUES_PERF_REGS, bit order) into regs[VALUES_NREGS]. */
void cvalues_from_perf(const uint64_t *perf, uint64_t *regs);

/*
 * A user-mode sample of thread tid at time (ns) resolved to (image,
 * offset), with its registers in the format's order.
 */
void cvalues_sample(struct cvalues *v, uint32_t tid, uint64_t time, uint32_t image,
		    uint64_t offset, const uint64_t *regs);

/* A user sample of tid without values (unresolved): ends its pair chain. */
void cvalues_break(struct cvalues *v, uint32_t tid);

/* The thread tid is gone. */
void cvalues_forget(struct cvalues *v, uint32_t tid);

/*
 * Merges every table into epoch seq of db (db_values_merge) and frees
 * what was written; a table that failed stays (merged again next time).
 * Returns 0, or -1 if some write failed (reported).
 */
int cvalues_write(struct cvalues *v, struct db *db, uint32_t seq, struct procs *procs);

/* Empties every table (what it held is lost, counted as dropped). */
void cvalues_clear(struct cvalues *v);

/* True when the tables hold more than half their cap (write early). */
bool cvalues_pressed(const struct cvalues *v);

#endif
