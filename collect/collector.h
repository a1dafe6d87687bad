/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/collector.h - the sampling driver and the daemon's sample path,
 * from perf events to the profile database; shared by dcpid (system-wide)
 * and dcpirun (one process tree).
 *
 *   rings --read--> order queue --time order--> side-band: collect/procs.h
 *                                           \-> samples: per-CPU shash
 *   shash --evictions, drains--> resolve (pid, pc) --> collect/store.h --> db
 *
 * Typical use:
 *   c = collector_new(&opts, db);               // opens the events
 *   collector_begin(c, &epoch_opts);             // new or continued epoch
 *   collector_enable(c); collector_scan(c);      // system-wide only
 *   loop: poll(collector_pollfds) ...; collector_read(c, false);
 *         collector_tick(c, time_monotonic_ns());
 *   collector_finish(c);                         // last records, flush, end time
 *   collector_free(c);
 */
#ifndef DCPI_COLLECT_COLLECTOR_H
#define DCPI_COLLECT_COLLECTOR_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/callchain.h"
#include "collect/emburst.h"
#include "collect/shash.h"
#include "collect/store.h"
#include "core/cli.h"
#include "core/event.h"
#include "db/paths.h"
#include "db/upkeep.h"

struct strbuf;

/*
 * The default sampling rate.  A timer sample costs about 15 us of guest
 * time on the virtual machines dcpi is built on (docs/collect.md): 1000
 * samples/s per CPU keeps the cost near 1.5%, under the 2% budget.
 */
#define COLLECT_DEFAULT_HZ 1000
/* Periods are re-drawn at least this often (PERF_EVENT_IOC_PERIOD). */
#define COLLECT_REDRAW_NS (100 * (int64_t)1000000)

/*
 * DCPI's randomised period: uniform over the top sixteenth of the range,
 * [top - top/16, top], from the random bits r.  The mean is top * 31/32.
 */
static inline uint64_t collect_random_period(uint64_t top, uint64_t r)
{
	return top - r % (top / 16 + 1);
}

struct collect_options {
	enum dcpi_event events[EVENT__COUNT];
	size_t n_events;
	bool events_given;          /* -e was used (else the defaults: cycles, imiss) */
	uint64_t freq_hz;           /* mean rate per CPU (-F), or 0 */
	uint64_t period;            /* mean period (-c), or 0; cycles/events, ns for clock */
	pid_t pid;                  /* -1: system-wide; else the tree of this process */
	bool user_only;             /* never sample the kernel */
	enum shash_kind hash;
	bool hash_compare;          /* also run the other policy on the same samples */
	size_t hash_bytes;          /* per CPU */
	size_t overflow_entries;    /* per overflow buffer */
	unsigned ring_pages;        /* per CPU, a power of two */
	int64_t drain_ns;           /* hash tables drained at least this often */
	int64_t slack_ns;           /* records this recent wait for the next round */
	bool no_calibrate;          /* --no-calibrate: do not measure the cycles per sample */
	struct callchain_opts callgraph;    /* -g, --call-graph: stacks (collect/callchain.h) */
	bool ring_pages_given;      /* --ring-pages was used */
	bool values;                /* --values: registers with each sample (collect/values.h) */
	double burst_budget;        /* --bursts: share of the time in bursts; 0: off */
	bool burst_step;            /* --bursts=step: single steps (collect/burst.h), else emulated
				       (collect/emburst.h) */
	uint32_t burst_limit;       /* --burst-limit: instructions an emulated burst follows (0: default) */
	uint32_t burst_deadline_ms; /* --burst-deadline: the worker's answer awaited (0: default) */
	const char *values_users;   /* --values-users: whose values (collect/whose.h); NULL: dcpirun's
				       invoker, dcpid nobody's */
	unsigned values_mode;       /* --values-mode: value-bearing files' mode (0600 or 0640) */
	const char *emulate_socket; /* --emulate-socket: the dcpi-emulate service's, else NULL: forked */
	size_t values_bytes;        /* memory cap of the value tables */
	char **per_process;         /* image paths with per-process profiles */
	size_t n_per_process;
	struct store_config store;
};

void collect_options_init(struct collect_options *o);

/* Parses a comma-separated event list ("cycles,imiss") into o. */
int collect_parse_events(struct collect_options *o, const char *list);

/*
 * Options dcpid and dcpirun share: COLLECT_OPTIONS(o) are their entries
 * in a core/cli.h option table (o: a struct collect_options *), each
 * handled by collect_option() with its code: it returns 1, or 0 if opt is
 * not one of them, -1 on a bad value (reported).
 */
enum {
	COLLECT_OPT_HASH = 0x2000,
	COLLECT_OPT_PER_PROCESS,
	COLLECT_OPT_WRITE_INTERVAL,
	COLLECT_OPT_RING_PAGES,
	COLLECT_OPT_HASH_COMPARE,
	COLLECT_OPT_HASH_BYTES,
	COLLECT_OPT_NO_CALIBRATE,
	COLLECT_OPT_CALL_GRAPH,
	COLLECT_OPT_THREADS,
	COLLECT_OPT_VALUES,
	COLLECT_OPT_BURSTS,
	COLLECT_OPT_BURST_LIMIT,
	COLLECT_OPT_BURST_DEADLINE,
	COLLECT_OPT_VALUES_USERS,
	COLLECT_OPT_VALUES_MODE,
	COLLECT_OPT_EMULATE_SOCKET,
};
int collect_option(struct collect_options *o, int opt, const char *arg);
/* 0 if label can name a new epoch (db/meta.h), else -1 after saying why. */
int collect_check_label(const char *label);
int collect_cli_option(const struct cli_option *opt, const char *arg);
#define COLLECT_OPT_(s, l, o, a, h, code, fl) \
	OPT_CALLBACK_F((s), (l), (o), (a), (h), collect_cli_option, (fl), (code))
#define COLLECT_OPTIONS(o)                                                                  \
	COLLECT_OPT_('e', "events", (o), "LIST", "events to sample (default: cycles,imiss); of\n" \
		     "cycles imiss dmiss branchmp dtlbmiss itlbmiss instructions clock", 'e', 0), \
	COLLECT_OPT_('F', "freq", (o), "HZ", "mean samples per second per CPU (default: 1000)", \
		     'F', 0),                                                               \
	COLLECT_OPT_('c', "period", (o), "N", "mean sampling period (events; ns for clock)", 'c', 0), \
	COLLECT_OPT_(0, "per-process", (o), "PATH", "also keep per-process profiles of this image", \
		     COLLECT_OPT_PER_PROCESS, 0),                                           \
	COLLECT_OPT_(0, "hash", (o), "rr4|stf6", "the per-CPU sample hash table (default: stf6)", \
		     COLLECT_OPT_HASH, 0),                                                  \
	COLLECT_OPT_(0, "write-interval", (o), "S",                                          \
		     "write profiles that waited S seconds (default: 60)",                  \
		     COLLECT_OPT_WRITE_INTERVAL, 0),                                        \
	COLLECT_OPT_(0, "no-calibrate", (o), NULL,                                           \
		     "do not measure the cycles per clock sample (~25 ms per\n"             \
		     "CPU at each epoch's start)", COLLECT_OPT_NO_CALIBRATE, 0),             \
	COLLECT_OPT_(0, "values", (o), NULL,                                                 \
		     "record the registers with each user sample: value profiles\n"          \
		     "(dcpicalc --values, dcpivals)", COLLECT_OPT_VALUES, 0),                \
	COLLECT_OPT_(0, "bursts", (o), "[step,]PCT",                                         \
		     "now and then follow a sampled thread for thousands of\n"            \
		     "instructions in an emulator (step: a few hundred ptrace single\n"    \
		     "steps), at most PCT% of the time (default 5): paths, branch\n"      \
		     "outcomes, written values, store/load conflicts, instructions\n"     \
		     "per sample period", COLLECT_OPT_BURSTS, CLI_OPTARG),                  \
	COLLECT_OPT_(0, "values-users", (o), "LIST",                                         \
		     "whose registers --values and --bursts record: users (names\n"        \
		     "or uids), or all; dumpable processes only (dcpirun: its\n"            \
		     "invoker's; dcpid: nobody's unless given)", COLLECT_OPT_VALUES_USERS, 0), \
	COLLECT_OPT_(0, "values-mode", (o), "MODE",                                          \
		     "mode of the files holding values (0600, the default, or 0640:\n"     \
		     "readable by the database's group)", COLLECT_OPT_VALUES_MODE, 0),       \
	COLLECT_OPT_(0, "emulate-socket", (o), "PATH",                                       \
		     "emulate bursts in workers of the dcpi-emulate socket\n"                \
		     "service at PATH instead of forked ones (dcpid.service: its\n"        \
		     "MemoryDenyWriteExecute= leaves a forked one no JIT)",                 \
		     COLLECT_OPT_EMULATE_SOCKET, 0),                                        \
	COLLECT_OPT_(0, "burst-limit", (o), "N", NULL, COLLECT_OPT_BURST_LIMIT, CLI_HIDDEN), \
	COLLECT_OPT_(0, "burst-deadline", (o), "MS", NULL, COLLECT_OPT_BURST_DEADLINE, CLI_HIDDEN), \
	COLLECT_OPT_(0, "ring-pages", (o), "N", "ring buffer pages per CPU (default: 64)",    \
		     COLLECT_OPT_RING_PAGES, 0),                                            \
	COLLECT_OPT_('g', NULL, (o), NULL, "record the call stack of every sample (--call-graph dwarf)", \
		     'g', 0),                                                               \
	COLLECT_OPT_(0, "call-graph", (o), "MODE",                                            \
		     "fp (frame pointers) or dwarf[,SIZE] (unwound from a SIZE-byte\n"      \
		     "copy of the user stack with the binaries' CFI; default 12288)",        \
		     COLLECT_OPT_CALL_GRAPH, 0),                                            \
	COLLECT_OPT_(0, "threads", (o), NULL,                                                \
		     "record each sample's process and thread, without its stack\n"         \
		     "(for dcpiprof --by comm|pid|tgid; -g records them too)",              \
		     COLLECT_OPT_THREADS, 0),                                               \
	COLLECT_OPT_(0, "hash-compare", (o), NULL, NULL, COLLECT_OPT_HASH_COMPARE, CLI_HIDDEN), \
	COLLECT_OPT_(0, "hash-bytes", (o), "N", NULL, COLLECT_OPT_HASH_BYTES, CLI_HIDDEN)

struct collector;

/*
 * Opens the events on every online CPU.  Events this machine cannot count
 * are reported once and skipped (cycles falls back to clock); no event at
 * all is an error.  Returns NULL after reporting.
 */
struct collector *collector_new(const struct collect_options *o, struct db *db);
void collector_free(struct collector *c);

/*
 * For tests and benchmarks: a collector with ncpu CPUs that opens no perf
 * events.  collector_feed() queues a raw perf record (in dcpi's sample
 * format, collect/perfrec.h) as if read from CPU k's ring; event i of
 * o->events has the identifier i + 1.  collector_read() then handles them.
 */
struct collector *collector_new_offline(const struct collect_options *o, struct db *db,
					size_t ncpu);
void collector_feed(struct collector *c, size_t k, const void *rec, size_t len);

/* Starts (or continues) the epoch samples go to. */
int collector_begin(struct collector *c, const struct store_epoch_opts *eo);

/*
 * Measures how many cycles one sample of the time event stands for
 * (collect/calib.h) and records it in the epoch's metadata (a `calib`
 * line, docs/db-format.md): system-wide on every CPU in turn (the thread
 * pinned there, that CPU's events paused meanwhile if enabled), for a
 * process tree once on the calling thread, before the command runs.  Does
 * nothing with --no-calibrate, when the time event is a cycles counter
 * (a PMU: its period is in cycles already) or on other architectures than
 * x86-64.  Best effort: a failure is a warning, and the analysis then
 * falls back to the period x cpu_mhz.  Call it before collector_begin (or
 * collector_new_epoch: collector_new_epoch calls it again itself).
 * Returns the CPU time it took in ns.
 */
int64_t collector_calibrate(struct collector *c);

/* Enables the events (system-wide; a process tree starts at its exec). */
int collector_enable(struct collector *c);

/* Learns the mappings of the processes already running (/proc). */
void collector_scan(struct collector *c);

/* Fills fds (room for max) with the ring buffers to poll; returns the count. */
size_t collector_pollfds(struct collector *c, struct pollfd *fds, size_t max);

/*
 * Takes note of poll's results for those fds: a ring that reports POLLHUP
 * (every process it followed is gone) is polled no more.
 */
void collector_polled(struct collector *c, const struct pollfd *fds, size_t n);

/*
 * Reads the rings and handles every record old enough to be in order; with
 * final, handles everything (the traced process has exited).
 */
void collector_read(struct collector *c, bool final);

/* Periodic work (period re-draw, drains, writes).  Returns the next deadline. */
int64_t collector_tick(struct collector *c, int64_t now);

/*
 * dcpirun: without waiting, true once its command (pid) has exited, with
 * its wait status in *status, whether a burst's tracer reaped it or this
 * call did (a ptrace stop of the command this wait sees goes to the
 * tracer: collect/tracestop.h).
 */
bool collector_wait_child(struct collector *c, pid_t pid, int *status);

/* Reads, drains every table and writes every profile (dcpictl flush). */
int collector_flush(struct collector *c);

/* Flushes, then starts a new epoch (dcpictl epoch). */
int collector_new_epoch(struct collector *c, const char *label);

/* Handles the last records, flushes and ends the epoch. */
int collector_finish(struct collector *c);

/* Summary figures (dcpirun's last line, tests). */
struct collect_summary {
	uint32_t epoch;
	uint64_t samples;           /* this run */
	uint64_t lost, throttled;   /* this run, since its first epoch began */
	uint64_t unknown, kernel;   /* samples resolved to those images, this run */
	uint64_t dropped;
	bool user_only;
	char events[128];           /* "cycles=clock,imiss" */
	uint64_t value_samples;     /* --values: samples whose registers were aggregated */
	uint64_t value_pairs;       /* ... of them paired with the thread's previous sample */
	uint64_t value_dropped;     /* ... not aggregated (memory cap) */
	uint64_t bursts, burst_steps;       /* --bursts: taken, instructions followed */
	double burst_share;                 /* ... the share of the run's time they took */
	bool burst_emulated;                /* emulated is valid */
	struct emburst_report emulated;     /* the emulated bursts: how they ended, the windows */
	char burst_off[80];                 /* why no burst can be emulated ("": they can) */
	char burst_lost[240];               /* requests lost by cause ("2 timed out, ...") */
	char burst_not_tried[240];          /* bursts not tried by cause ("40 backing off ...") */
	double calib_cycles;        /* this run's calibration: cycles per sample (0: none) */
	double calib_mhz;           /* ... the loop's clock */
	int64_t calib_ns;           /* ... and its cost (CPU time) */
	char calib_how[24];         /* ... which clock ("regadd", "imul") */
	char calib_problem[160];    /* ... what is wrong with it, or "" (epoch_calib_problem) */
	bool stacks;                /* -g: the figures below are valid */
	uint64_t user_stacks;       /* samples with user frames (this run) */
	uint64_t complete_stacks;   /* ... whose walk reached the thread's entry */
	uint64_t tables, table_failures;    /* unwind tables built, binaries without one */
	uint64_t tables_cached;             /* of tables: read from the database */
};
void collector_summary(struct collector *c, struct collect_summary *s);

/*
 * dcpid's retention (db/upkeep.h), for the status report: its limits and
 * what it removed since the daemon started.
 */
struct collect_retention {
	struct db_retention limits;
	struct db_prune_stats removed;
	int64_t last_ns;            /* wall-clock time it last removed something, 0: never */
	bool over_limit;            /* the last run stayed above max_bytes (the current epoch) */
};
/* Shows r in the status report (NULL, the default: no retention). */
void collector_set_retention(struct collector *c, const struct collect_retention *r);

/*
 * Appends dcpictl's status report: per-CPU and per-event rates, losses,
 * the unknown fraction, the hash's hit rate and evictions, the daemon's CPU
 * per sample, memory and database size; JSON if json.
 */
void collector_status(struct collector *c, struct strbuf *out, bool json);

#endif
