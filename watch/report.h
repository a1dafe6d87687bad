/*
 * watch/report.h - stopwatch results as text and JSON (dcpiwatch, and
 * dcpi-tui's stopwatch view for the histogram lines).
 *
 * JSON (docs/dcpiwatch.1):
 *   {"functions": [{"function", "image", "calls", "open", "unwound", "timed",
 *     "wall_ns": {"min", "max", "mean", "stddev"}, "cpu_ns": {...},
 *     "histogram": [{"from_ns", "to_ns", "count"}...],
 *     "events": {"page-faults": {"min", "max", "mean", "stddev", "total"}...},
 *     "threads": [{"pid", "tid", "comm", "calls", ...the same...}]}]}
 */
#ifndef DCPI_WATCH_REPORT_H
#define DCPI_WATCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "db/watch.h"

struct strbuf;

struct watch_report_opts {
	bool threads;           /* a row per thread under each function */
	bool histograms;        /* the histogram of each function */
};

/* Writes the results (per-thread records) as text. */
void watch_report_text(FILE *out, const struct watch_set *s, const struct watch_report_opts *o);
/* Writes them as JSON; returns 0, or -1 on a write error. */
int watch_report_json(FILE *out, const struct watch_set *s);

/* A time in ns with three significant digits and a unit: "212 us", "1.05 ms". */
void strbuf_add_ns(struct strbuf *sb, double ns);

/*
 * One line of a histogram: "[1.02 us, 2.05 us)  count  bar" with the bar
 * width scaled to max over width columns.
 */
void watch_hist_line(struct strbuf *sb, unsigned bucket, uint64_t count, uint64_t max,
		     unsigned width);

#endif
