/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/agg.h - from the probes' samples, in time order, to calls and their
 * statistics per target and thread.
 *
 * Each thread keeps a stack of open calls.  An entry pushes a frame with
 * the stack pointer at entry (the address of the return address), the time
 * and the thread's counters; a return pops the frame whose stack pointer it
 * finds again (a uretprobe reports the pointer after the return popped the
 * return address: 8 more; an exit instruction reports it unchanged).  Any
 * frame deeper than the one returning, or than a new entry, was left
 * without a return: a longjmp or an exception unwound it.  Such calls are
 * counted as unwound, and open calls at a thread's end as open; neither has
 * a time.  Recursion nests frames; a function that jumps back to its own
 * entry stacks a second frame at the same pointer, both completed by the
 * return.
 *
 * Counters are virtualised per thread.  In a process tree (inherited
 * per-CPU events) each sample carries the thread's own counts on the CPU
 * it ran on; the thread's total is their sum over CPUs, kept up to date by
 * a sample at every context switch.  System-wide (pid -1) the counts are the
 * CPU's; a thread's share is the sum of the increments between consecutive
 * samples on a CPU that belong to it (every switch is sampled, so the CPU
 * ran that thread in between).
 *
 * Times are corrected for the probes' own cost (the work the kernel does
 * inside the measured interval: single-stepping or emulating the entry
 * instruction after the entry sample, reaching the return's handler
 * before its sample), measured at start by watch/calib.h.
 */
#ifndef DCPI_WATCH_AGG_H
#define DCPI_WATCH_AGG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/watch.h"
#include "watch/plan.h"

/* Counters read at each sample: [0] task-clock (on-CPU ns), then the -e events. */
#define WATCH_MAX_VALS (1 + WATCH_MAX_EVENTS)

struct watch_sample {
	uint64_t time;          /* ns, CLOCK_MONOTONIC */
	uint32_t pid, tid, cpu;
	int point;              /* index in plan->p; -1: the thread was switched out */
	uint64_t sp;            /* user stack pointer */
	uint64_t vals[WATCH_MAX_VALS];
};

/* What the probes add to a measured interval, in ns: [entry stepped][return by an int3]. */
struct watch_bias {
	uint64_t wall[2][2], cpu[2][2];
};

struct watch_agg_opts {
	const struct watch_plan *plan;
	unsigned nvals;                 /* 1 + events */
	const char *const *names;       /* the events' names (names[0] for vals[1]) */
	bool system_wide;               /* counts are per CPU, not per thread */
	const struct watch_bias *bias;  /* NULL: no correction */
	FILE *trace;                    /* the in-order stream, or NULL */
};

struct watch_agg_totals {
	uint64_t samples;
	uint64_t unmatched;             /* returns without an entry (a call begun before the probes) */
	uint64_t threads;
};

struct watch_agg;

struct watch_agg *watch_agg_new(const struct watch_agg_opts *opts);
void watch_agg_free(struct watch_agg *a);

void watch_agg_sample(struct watch_agg *a, const struct watch_sample *s);
/* A thread's command name (COMM records; also /proc at attach). */
void watch_agg_comm(struct watch_agg *a, uint32_t pid, uint32_t tid, const char *comm);
/* A thread ended at time: its open calls are counted as open. */
void watch_agg_exit(struct watch_agg *a, uint32_t pid, uint32_t tid, uint64_t time);

/*
 * Ends the measurement at time (calls still open are counted) and appends a
 * record per target and thread to out, one per target even for targets
 * never called (pid and tid 0, calls 0).
 */
void watch_agg_finish(struct watch_agg *a, uint64_t time, struct watch_set *out);

void watch_agg_totals(const struct watch_agg *a, struct watch_agg_totals *t);

#endif
