/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/collector-int.h - the collector's insides, shared by
 * collect/collector.c (the sample path), options.c, events.c,
 * calibrate.c and status.c (its reports).  Not for other users: see collect/collector.h.
 */
#ifndef DCPI_COLLECT_COLLECTOR_INT_H
#define DCPI_COLLECT_COLLECTOR_INT_H

#include "collect/burst.h"
#include "collect/emburst.h"
#include "collect/whose.h"
#include "collect/collector.h"
#include "collect/ladder.h"
#include "collect/order.h"
#include "collect/perf.h"
#include "collect/perfrec.h"
#include "collect/procs.h"
#include "collect/shash.h"
#include "collect/store.h"
#include "collect/values.h"
#include "core/u64map.h"
#include "db/meta.h"

#define NS_PER_SEC ((int64_t)1000000000)
/* Retired address spaces that make the collector drain its tables early. */
#define COLLECT_MAX_RETIRED 256

/* One DCPI event as this machine counts it. */
struct cevent {
	struct perf_evspec spec;
	bool freq;                  /* kernel-adjusted frequency (hardware events with -F) */
	uint64_t mean;              /* requested mean period (or the frequency if freq) */
	uint64_t top;               /* top of the random period range */
	uint64_t samples;           /* this run */
	uint64_t period_sum, period_n;      /* this epoch, for the mean period */
	uint64_t enabled_base, running_base;/* times at the start of the epoch */
};

struct ccpu {
	int cpu;
	int *fd;                    /* one per event, -1 if not open */
	struct perf_ring ring;
	bool hup;                   /* the traced processes are gone */
	struct shash hash;
	struct shash *shadow;       /* --hash-compare: the other policy, for its statistics */
	uint64_t samples, lost, throttled;
	uint64_t window_samples;    /* samples at the start of the rate window */
	double rate;                /* samples/s over the last window */
};

struct collector {
	struct collect_options opt;
	struct perf_target target;
	struct db *db;
	struct cevent ev[EVENT__COUNT];
	size_t n_ev;
	struct u64map id_event;     /* kernel event id -> index into ev + 1 */
	struct ccpu *cpu;
	size_t ncpu;
	struct order_queue order;
	struct procs procs;
	struct store store;
	uint64_t rng;
	bool offline;               /* no perf events: records come from collector_feed() */
	struct callchain *cg;       /* -g: stacks (NULL without) */
	struct perf_rec_format fmt; /* what the samples carry (--values, -g) */
	struct cvalues *values;     /* --values: the value tables, else NULL */
	size_t values_ev;           /* the event whose samples give values (in ev) */
	struct bursts *bursts;      /* --bursts=step, else NULL */
	struct emburst *emb;        /* --bursts (emulated), else NULL */
	struct whose *whose;        /* whose values may be recorded (--values, --bursts), else NULL */
	struct ladder ladder;       /* --values: load latencies measured here (ns 0: not yet) */
	pid_t burst_pid, burst_tid; /* the thread of the latest user sample: the next burst's */
	int64_t next_values_write;
	bool enabled;               /* collector_enable() ran */
	bool map_failed;            /* the last open_all failed mapping a ring */

	/* Calibration (collector_calibrate): this run's, and the continued epoch's. */
	int time_ev;                /* index in ev of the time event, -1 if none */
	struct epoch_calib calib;   /* intervals 0: none */
	struct epoch_core_sig core_sig;     /* what the core does (have false: not measured) */
	struct epoch_calib calib_base;
	bool calib_base_taken;      /* calib_base was read from the epoch's meta */
	int64_t calib_ns;

	int64_t started, next_redraw, next_drain, window_start;
	/* This run. */
	uint64_t samples, lost, throttled, unknown, kernel, records, bad_records, stray, garbled;
	/* lost: from LOST records; collector_lost() also asks the kernel. */
	uint64_t drains;
	/* At the start of the epoch (for the epoch's counters). */
	uint64_t epoch_lost, epoch_throttled, epoch_hash_samples, epoch_hash_hits;
	/* collector_lost() as last written to the epoch's meta (0: not yet): the
	 * kernel's count can still grow while inherited events are torn down, and
	 * the summary must say what the epoch says. */
	uint64_t lost_stored;
	/* collector_lost() when the first epoch began: losses before it (while
	 * calibrating) belong to no epoch. */
	uint64_t run_lost;
	uint64_t epoch_evictions, epoch_shadow_hits, epoch_shadow_evictions;
	const struct collect_retention *retention;  /* dcpid's, for status; NULL: none */
};

/* events.c: the events this machine can count, their periods, their rings. */
void collector_set_period(struct cevent *e, const struct collect_options *o);
int collector_choose_events(struct collector *c);
int collector_open_events(struct collector *c);
void collector_close_cpu(struct ccpu *cc, size_t n_ev);
/* Draws a new random period for every event on every CPU. */
void collector_redraw_periods(struct collector *c);

/* calibrate.c: the time event to calibrate (the first counted by the clock), or -1. */
int collector_time_event(const struct collector *c);
/* The epoch's calibration into m: this run's, merged with a continued epoch's. */
void collector_fill_calib(struct collector *c, struct epoch_meta *m);

/* The measured mean period of event i in this epoch (ns for the clock). */
uint64_t collector_mean_period(struct collector *c, size_t i);

/*
 * Samples lost on CPU k, and on all: the kernel's count (read(2) with
 * PERF_FORMAT_LOST) or the LOST records', whichever is higher.  The kernel
 * reports a full ring's losses with the next record it writes there, which
 * never comes if the traced process exits first.
 */
uint64_t collector_cpu_lost(struct collector *c, size_t k);
uint64_t collector_lost(struct collector *c);

/* Totals of the per-CPU hash statistics (of the shadow tables if shadow). */
void collector_hash_totals(struct collector *c, struct shash_stats *t, bool shadow);

#endif
