/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emburst.h - emulated bursts, the collector's part (dcpirun
 * --bursts, dcpid --bursts; the default; --bursts=step keeps the single
 * steps of collect/burst.h): seed 004's interpreter on x86-64.
 *
 * Now and then the thread of the latest user sample is stopped
 * (collect/tracestop.h) and its whole user state read: the general
 * registers with fs/gs base, and the SSE and x87 state (compiled code
 * keeps pointers in the XMM registers).  The sandboxed worker
 * (collect/emu-worker.h) follows it in an emulator for up to `limit`
 * instructions while the thread stays stopped (its memory is as the thread
 * saw it), the collector serving the pages it touches; then the thread
 * goes on.  The stopped time counts against the budget: the threads spend
 * at most `budget` of the elapsed time stopped in bursts.
 *
 * Windows: after a burst that reached its limit, the worker keeps the
 * emulator where it stopped; the thread's next two ordinary samples, B1
 * and B2, if they are consecutive samples of one CPU about one period
 * apart, are where the emulation must pass (every general register, rip
 * and the arithmetic flags equal).  The instructions between B1 and B2
 * are those of one sampling period; matched windows record them per
 * block.  The worker's time in windows is budgeted too.
 *
 * Everything is resolved to (image, file offset) here, with the address
 * spaces of collect/procs.h, and aggregated per image into path profiles
 * (db/paths.h), merged into the epoch with the value profiles; a small
 * uniform sample of raw traces (the first instructions of bursts with
 * their registers) goes to the epoch's `bursts` (db/bursts.h).
 */
#ifndef DCPI_COLLECT_EMBURST_H
#define DCPI_COLLECT_EMBURST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/emdip.h"
#include "collect/emtrail.h"
#include "collect/stopfiles.h"
#include "collect/stopmem.h"
#include "collect/tracestop.h"
#include "core/hotlist.h"
#include "core/u64map.h"
#include "db/bursts.h"
#include "db/paths.h"

struct db;
struct procs;
struct emu_worker;

/*
 * What bursts may cost by default: the worker's CPU and the threads' stops
 * over the CPU time sampled (with --values, at most +5% of a program's CPU).
 */
#define EMBURST_DEFAULT_BUDGET 0.03
/* Instructions a burst follows at most (picked by measurement: docs/collect.md). */
#define EMBURST_DEFAULT_LIMIT 50000
/* Of them, followed in detail (values, addresses), and raw steps kept. */
#define EMBURST_DETAIL 512
/*
 * The emulation's time cap, on the worker's CPU (a cold burst, code
 * translated for the first time and pages fetched one by one, takes 20-30
 * ms), and how long the collector waits for the worker's answer: more
 * than the cap on the clock (EMU_WALL_FACTOR times the CPU's).
 */
#define EMBURST_TIME_US 50000
#define EMBURST_DEADLINE_NS (250 * 1000000LL)
/* A trail's cap on the worker's CPU time, and how long its samples are waited for. */
#define EMBURST_TRAIL_TIME_US 100000
#define EMBURST_TRAIL_WAIT_NS (200 * 1000000LL)
/* Log2 buckets of the time threads were stopped, from 1 us. */
#define EMBURST_STOP_BUCKETS 24
/* Memory the path tables may hold before they are written early. */
#define EMBURST_MAX_BYTES ((size_t)64 << 20)
/* Distinct instructions named as ending bursts (the summary's). */
#define EMBURST_END_NAMES 32

struct emburst_stats {
	uint64_t bursts;                        /* followed, and counted */
	uint64_t insns, detailed;               /* instructions followed, in detail */
	uint64_t insns_verified;                /* of them, in bursts a later sample confirmed */
	uint64_t ends[PATHS_END__COUNT];        /* bursts by why they ended */
	uint64_t refused;                       /* threads that could not be stopped */
	uint64_t in_syscall;                    /* stopped inside a system call: not followed */
	uint64_t signals;                       /* a signal was pending: not followed */
	uint64_t lost;                          /* the worker failed: nothing recorded */
	uint64_t unverified;                    /* read memory rewritten since, maybe: not counted */
	uint64_t stops;                         /* threads stopped */
	uint64_t stop_hist[EMBURST_STOP_BUCKETS];       /* by how long (log2 us) */
	int64_t ns;                             /* time threads spent stopped */
	int64_t longest_ns;                     /* ...by the longest stop */
	int64_t worker_ns;                      /* the worker's CPU for bursts and trails */
	uint64_t snap_pages;                    /* pages copied at stops */
	uint64_t live_pages;                    /* data pages the worker read after the stop */
	uint64_t trails;                        /* trails the worker emulated */
	uint64_t points;                        /* ...their samples it matched */
	uint64_t windows;                       /* windows past the dip, recorded */
	uint64_t dip_windows;                   /* windows in the dip: measured, not recorded */
	uint64_t not_periods;                   /* windows that were not one period of the thread */
	uint64_t window_insns;                  /* instructions of the windows recorded */
	uint64_t misses[PATHS_MISS__COUNT];     /* trails that ended early, by why */
	uint64_t written;                       /* bursts in the database */
	uint64_t write_failures;
};

/* The time a thread was stopped that a share q of the stops took at most (ns). */
int64_t emburst_stop_quantile(const struct emburst_stats *s, double q);

struct emburst_end_name {
	char mnemonic[32];
	uint64_t count;
};

/* One image's path profile being built. */
struct emburst_image {
	uint32_t image;                         /* collect/procs.h index */
	struct paths_profile prof;              /* not normalized */
	struct u64map at;                       /* values' offset -> index + 1 */
	size_t normalized;                      /* records at the last normalize */
	bool touched;                           /* in the burst being added */
};

struct emburst {
	double budget;                          /* bursts' cost over the CPU time sampled */
	uint32_t limit;
	int64_t deadline_ns;                    /* how long the worker's answer is awaited */
	int64_t started;                        /* first time a burst was possible */
	int64_t next_at;
	uint64_t profiled_ns;                   /* CPU time sampled (samples x period) */
	uint64_t next_profiled;                 /* no stop before this much (the dips) */
	struct tracer tracer;
	struct emu_worker *worker;
	uint64_t space;                         /* the identity of the last address space */
	const void *space_as;
	pid_t space_pid;
	uint64_t period_ns;                     /* the sampling period (windows check it) */

	/* The burst in flight and its trail. */
	int state;
	pid_t pid;
	uint32_t tid;
	const void *as;                         /* the address space it was taken in (compared only) */
	int pidfd;
	int64_t deadline;                       /* the worker's answer awaited until then */
	int64_t trail_give_up;                  /* the trail's samples awaited until then */
	int64_t cpu_mark;                       /* the worker's CPU time at the last answer */
	struct emu_result res;                  /* the burst's answer, until a sample confirms it */
	bool have_res;
	struct emtrail trail;
	unsigned skip;                          /* the trail's windows counted from here */
	struct stopmem mem;                     /* the memory copied at the stop */
	struct stopfiles files;                 /* the files read, their positions at the stop */
	uint32_t hint_fd[EMU_MAX_FILES];        /* fds the last trail could not read, of hint_as */
	size_t n_hint_fd;
	struct emdip dip;
	const void *hint_as;                    /* the last burst's pages read live, and its space */
	uint64_t hint[EMU_MAX_WORKING];
	size_t n_hint;

	struct emburst_image *img;
	size_t n_img, alloc_img;
	struct u64map img_at;                   /* image index -> index into img + 1 */
	size_t bytes;
	struct burst_set raw;                   /* raw traces since the last write */
	uint64_t epoch_bursts;                  /* this epoch's, for the raw traces' sample */
	struct hotlist_rng rng;
	struct paths_summary pending;           /* in memory, not yet written */
	struct paths_summary written;           /* this epoch's, written */
	struct emburst_end_name ends[EMBURST_END_NAMES];
	size_t n_ends;
	struct emburst_stats st;
};

/*
 * Starts the worker (call it before the collector's large tables exist: a
 * fork copies them).  NULL with a warning if it cannot start.
 */
struct emburst *emburst_new(double budget, uint32_t limit, pid_t watch, uint64_t seed);
void emburst_free(struct emburst *e);

/* The sampling period, for the windows' check that B1 and B2 are one period apart. */
void emburst_set_period(struct emburst *e, uint64_t period_ns);

/* True if a burst may start at now (the budget, the worker). */
bool emburst_due(struct emburst *e, int64_t now);

/* One burst on thread tid of process pid, resolved with procs. */
void emburst_run(struct emburst *e, pid_t pid, pid_t tid, struct procs *procs);

/*
 * A sample of the time event on CPU k: in user mode or not, with its
 * thread's user rip and registers (db/values.h order; for a sample in the
 * kernel, as they were at its entry), or regs NULL.  Trails wait for their
 * thread's.
 */
void emburst_sample(struct emburst *e, unsigned k, uint32_t tid, uint64_t time, bool user,
		    uint64_t ip, const uint64_t *regs, struct procs *procs);

/* Serves a window in progress; gives up on one waiting too long.  Call at every tick. */
void emburst_poll(struct emburst *e, struct procs *procs, int64_t now);
/* The descriptor to poll while a window runs, else -1. */
int emburst_fd(const struct emburst *e);

/* Merges the tables into epoch seq: 0, or -1 (kept, reported). */
int emburst_write(struct emburst *e, struct db *db, uint32_t seq, struct procs *procs);
/* Drops what is not written (a new epoch could not get it). */
void emburst_clear(struct emburst *e);
/* A new epoch begins: the epoch's totals start again. */
void emburst_new_epoch(struct emburst *e);
/* True when the tables hold more than half their cap (write early). */
bool emburst_pressed(const struct emburst *e);

/* The run summary's figures (dcpirun's last line; collect_summary copies them). */
struct emburst_report {
	uint64_t bursts, insns;             /* counted, instructions followed */
	double share;                       /* their cost (the worker's CPU, the stops) over the
					       CPU time sampled */
	uint64_t ends[PATHS_END__COUNT];    /* by why they ended */
	uint64_t lost;                      /* lost (the worker failed) */
	uint64_t unverified;                /* not counted: memory read after the stop, unconfirmed */
	uint64_t stops;                     /* threads stopped */
	int64_t stop_p50_ns, stop_p99_ns, stop_max_ns;  /* how long */
	uint64_t trails, windows, dip_windows;  /* trails, windows recorded, windows in the dip */
	unsigned skip;                      /* windows from this sample after a stop */
	char end_names[160];                /* "vmovdqu64 12, pclmulqdq 3" */
};
void emburst_report(const struct emburst *e, int64_t started, struct emburst_report *r);

/* dcpictl status: a line of bursts and one of windows; the "bursts" object's members. */
struct strbuf;
struct json_writer;
void emburst_status_text(const struct emburst *e, int64_t started, struct strbuf *o);
void emburst_status_json(const struct emburst *e, int64_t started, struct json_writer *w);

/* The worker's counters (starts, failures, pages). */
const struct emu_worker *emburst_worker(const struct emburst *e);

#endif
