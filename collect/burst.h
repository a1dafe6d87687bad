/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/burst.h - short bursts (seed 004: vprof's interpreter, vreplay):
 * now and then a thread that was just sampled is stopped and followed for
 * a few hundred instructions, one ptrace single step at a time, its place
 * and registers recorded before each instruction (db/bursts.h).  From
 * them the analysis gets exact branch outcomes, and the load and store
 * addresses that store-to-load forwarding failures and 4K aliasing need
 * (it decodes the instructions; nothing here does: no binary is read).
 *
 * A single step costs about 35 us here (a VM exit each way), so bursts are
 * budgeted by time: the threads spend at most `budget` of the elapsed time
 * stopped in bursts (5% by default), each burst at most max_steps steps
 * and max_ns.  A burst ends early at a system call instruction (its two
 * bytes are peeked: a blocking call would stop the collector too), at a
 * signal (delivered when the thread is let go), or when the thread exits.
 * A thread that cannot be traced (another tracer, ptrace refused) is
 * counted and skipped.
 *
 * The traces are merged into the epoch's `bursts` blob with the profiles;
 * at most BURSTS_KEEP of them stay per epoch, a uniform sample.
 */
#ifndef DCPI_COLLECT_BURST_H
#define DCPI_COLLECT_BURST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/tracestop.h"
#include "db/bursts.h"

struct db;
struct procs;

#define BURST_DEFAULT_BUDGET 0.05
#define BURST_DEFAULT_STEPS 256
#define BURST_MAX_NS (50 * 1000000LL)

struct burst_stats {
	uint64_t bursts;            /* bursts taken */
	uint64_t steps;             /* instructions stepped */
	uint64_t refused;           /* threads that could not be traced */
	uint64_t syscalls;          /* bursts ended at a system call */
	uint64_t signals;           /* bursts ended by a signal (delivered) */
	uint64_t trap_masked;       /* not stepped: the thread blocks or ignores SIGTRAP */
	int64_t ns;                 /* wall time threads spent stopped in bursts */
	uint64_t written;           /* bursts that reached the database */
};

struct bursts {
	double budget;              /* share of the elapsed time */
	unsigned max_steps;
	int64_t started;            /* monotonic ns bursting became possible */
	int64_t next_at;            /* no burst before this */
	struct burst_set set;       /* this epoch's bursts since the last write (seen: taken) */
	struct burst_stats st;
	struct tracer tracer;       /* stops threads; reaped: the exit of dcpirun's command */
};

void bursts_init(struct bursts *b, double budget, unsigned max_steps, pid_t watch);
void bursts_release(struct bursts *b);

/* True if a burst may start at now (the budget allows it). */
bool bursts_due(struct bursts *b, int64_t now);

/*
 * One burst on thread tid of process pid, its steps resolved with procs.
 * Returns the number of steps recorded (0: none, counted why).
 */
size_t bursts_run(struct bursts *b, pid_t pid, pid_t tid, struct procs *procs, int64_t now);

/* Merges the bursts taken since the last write into epoch seq: 0, or -1 (kept, reported). */
int bursts_write(struct bursts *b, struct db *db, uint32_t seq);

/* Drops the bursts not written (a new epoch could not get them). */
void bursts_clear(struct bursts *b);

#endif
