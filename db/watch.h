/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/watch.h - stopwatch results: exact call counts and the times and
 * event counts between two points of the code, as dcpiwatch measured them
 * (docs/db-format.md, "Stopwatch results"; docs/watch.md).
 *
 * An epoch holds them in one blob, the epoch file "watch" (magic DCPIWTCH).
 * Each record is one measured thing in one thread: a function (entry to
 * return) or an interval between two probe points (--between A B), with
 * the number of calls, the calls still open at the end and those whose
 * return never came (longjmp, exceptions), and statistics of the wall time,
 * the on-CPU time and each counted event per completed call.  Records of
 * the same thing in the same thread (same key) are combined when a run is
 * merged into an epoch that already has results; totals per function or per
 * process are combinations of the per-thread records (watch_rec_combine).
 *
 * Functions and probe points are named by image key and file offset, like
 * profiles (docs/db-format.md, "What an offset means"), so that readers can
 * relate them to samples; each record also carries the function's name and
 * the image's path, so that it can be shown without the binary.
 *
 * The call-graph tools read exact call counts through watch_calls_load()
 * or, for many lookups, watch_set_load() and watch_set_calls().
 */
#ifndef DCPI_DB_WATCH_H
#define DCPI_DB_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/profile.h"

struct db;
struct strbuf;

#define WATCH_FILE "watch"
#define WATCH_MAGIC "DCPIWTCH"
#define WATCH_VERSION 1
/* log2 histogram of wall times: bucket k counts calls of [2^k, 2^(k+1)) ns (bucket 0: 0-1 ns). */
#define WATCH_HIST 64
/* Events counted per call besides wall and on-CPU time. */
#define WATCH_MAX_EVENTS 8
#define WATCH_EVENT_NAME_MAX 24
/* Longest name, path or command name stored. */
#define WATCH_STR_MAX 4096

/* One measured quantity over n values (Welford's mean and sum of squared deviations). */
struct watch_stat {
	uint64_t n, min, max;
	double mean, m2;
};

void watch_stat_add(struct watch_stat *s, uint64_t v);
/* Adds all values of b to a (Chan et al.'s parallel combination). */
void watch_stat_combine(struct watch_stat *a, const struct watch_stat *b);
/* Population standard deviation; 0 for fewer than two values. */
double watch_stat_stddev(const struct watch_stat *s);

/* The histogram bucket of a time in ns. */
unsigned watch_hist_bucket(uint64_t ns);

enum watch_kind {
	WATCH_FUNC = 1,      /* entry of a function to its return */
	WATCH_BETWEEN = 2,   /* probe point A to the next B on the same thread */
};

struct watch_event_stat {
	char name[WATCH_EVENT_NAME_MAX]; /* kernel event name: task-clock, page-faults, ... */
	struct watch_stat st;            /* its change per completed call */
};

struct watch_rec {
	/* the key */
	enum watch_kind kind;
	char key[PROFILE_KEY_MAX + 1];   /* image of the function (of A) */
	uint64_t offset;                 /* file offset of its entry (of A) */
	char key_b[PROFILE_KEY_MAX + 1]; /* WATCH_BETWEEN: the image of B; else "" */
	uint64_t offset_b;               /* WATCH_BETWEEN: B's file offset; else 0 */
	uint32_t pid, tid;               /* process and thread; 0 in combined records */
	/* what it is */
	char *name;                      /* "main", "push..pop" (owned) */
	char *path;                      /* the image's path (owned) */
	char *comm;                      /* the thread's command name (owned; may be "") */
	/* the counts */
	uint64_t calls;                  /* entries seen (A hits that started an interval) */
	uint64_t open;                   /* still running at the end */
	uint64_t unwound;                /* never returned: left by longjmp or an exception */
	struct watch_stat wall, cpu;     /* ns per completed call */
	uint64_t hist[WATCH_HIST];       /* wall ns, log2 */
	unsigned nevents;
	struct watch_event_stat ev[WATCH_MAX_EVENTS];
};

/* A set of records, sorted by key after watch_set_sort(); owns them. */
struct watch_set {
	struct watch_rec *v;
	size_t n, alloc;
};

#define WATCH_SET_INIT { NULL, 0, 0 }

void watch_set_release(struct watch_set *s);
/* Appends a copy of r (strings duplicated) and returns it. */
struct watch_rec *watch_set_add(struct watch_set *s, const struct watch_rec *r);
/* Sorts by key and combines records with equal keys. */
void watch_set_sort(struct watch_set *s);
void watch_rec_release(struct watch_rec *r);
/* Compares the keys of two records (kind, images, offsets, pid, tid). */
int watch_rec_cmp(const struct watch_rec *a, const struct watch_rec *b);
/* Adds b's counts and statistics to a (events by name). */
void watch_rec_combine(struct watch_rec *a, const struct watch_rec *b);

enum watch_by { WATCH_BY_FUNCTION, WATCH_BY_PROCESS, WATCH_BY_THREAD };

/*
 * Appends to out the records of in combined per function (pid and tid 0,
 * no command name), per process (tid 0, the command name of one of its
 * threads) or per thread (as they are), sorted by key.
 */
void watch_set_group(const struct watch_set *in, enum watch_by by, struct watch_set *out);

/* Encodes the records (in their order) as a payload; *count is the number. */
void watch_encode(const struct watch_set *s, struct strbuf *out);
/*
 * Decodes and validates a payload of count records, appending them to s.
 * Returns 0, or -1 with *why set (s then holds what was decoded before).
 */
int watch_decode(const void *payload, size_t len, uint32_t count, struct watch_set *s,
		 const char **why);

/* Writer: merges s into epoch seq's results (read-merge-write under the lock). */
int db_watch_merge(struct db *db, uint32_t seq, const struct watch_set *s);
/*
 * Reader: the results of epoch seq, appended to s, sorted.  Returns 0; 1 if
 * the epoch has none (no message); -1 on an error (reported).
 */
int db_watch_load(struct db *db, uint32_t seq, struct watch_set *s);

/*
 * The read API for exact call counts (dcpicg): the number of calls of the
 * function whose entry is at file offset `offset` of image `key`, over
 * every thread.  Returns true and sets *calls (0 for a function that was
 * watched and never called) if the function was measured, false if not
 * ("not measured": show the estimate).
 */
bool watch_set_calls(const struct watch_set *s, const char *key, uint64_t offset,
		     uint64_t *calls);
/*
 * The same straight from the database, for one lookup: 0 with *calls, 1 if
 * not measured (or the epoch has no results), -1 on an error (reported).
 */
int watch_calls_load(struct db *db, uint32_t seq, const char *key, uint64_t offset,
		     uint64_t *calls);

#endif
