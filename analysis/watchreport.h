/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/watchreport.h - stopwatch results (db/watch.h) as a text report
 * drawn in styled segments (present/draw.h: dcpiwatch prints it, dcpi-tui's
 * stopwatch view draws its rows and histogram with the same functions) and
 * as JSON.
 *
 * JSON (docs/dcpiwatch.1):
 *   {"functions": [{"function", "image", "calls", "open", "unwound", "timed",
 *     "wall_ns": {"min", "max", "mean", "stddev"}, "cpu_ns": {...},
 *     "histogram": [{"from_ns", "to_ns", "count"}...],
 *     "events": {"page-faults": {"min", "max", "mean", "stddev", "total"}...},
 *     "threads": [{"pid", "tid", "comm", "calls", ...the same...}]}]}
 */
#ifndef DCPI_ANALYSIS_WATCHREPORT_H
#define DCPI_ANALYSIS_WATCHREPORT_H

#include <stdbool.h>

#include "db/watch.h"

struct draw;
struct strbuf;

struct watch_report_opts {
	bool threads;           /* a row per thread under each function */
	bool processes;         /* a row per process under each function */
	bool histograms;        /* the histogram of each function */
};

/* Draws the results (per-thread records) as text, a line after another. */
void watch_report_draw(const struct watch_set *s, struct draw *d, const struct watch_report_opts *o);

/* The header of the table and one row (a function's or a thread's total); no draw_eol(). */
void watch_header_draw(struct draw *d);
void watch_row_draw(const struct watch_rec *r, struct draw *d, const char *label);
/* The lines of a record's event statistics and histogram (each ended with draw_eol()). */
void watch_events_draw(const struct watch_rec *r, struct draw *d);
void watch_hist_draw(const struct watch_rec *r, struct draw *d, int width);
/* The same a line at a time (no draw_eol()): event i's statistics; the histogram's lines. */
void watch_event_draw(const struct watch_rec *r, struct draw *d, unsigned i);
/* The buckets from the first to the last that have calls, and the largest count; false if none. */
bool watch_hist_range(const struct watch_rec *r, unsigned *lo, unsigned *hi, uint64_t *max);
void watch_hist_header_draw(struct draw *d);
/* Bucket k of r, its bar width columns at max. */
void watch_hist_line_draw(const struct watch_rec *r, struct draw *d, unsigned k, uint64_t max,
			  int width);
/* True if two records measure the same thing (function, or interval). */
bool watch_same_target(const struct watch_rec *a, const struct watch_rec *b);
/*
 * The same as JSON (dcpiwatch --json): one object, with what it was made
 * without (db/damage.h) when read from db (NULL: a live run).
 */
struct json_writer;
void watch_report_json(const struct watch_set *s, struct db *db, struct json_writer *w);

/* A time in ns with three significant digits and a unit: "212 us", "1.05 ms". */
void strbuf_add_ns(struct strbuf *sb, double ns);


#endif
