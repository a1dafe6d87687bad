/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/timeutil.h - wall-clock time in nanoseconds since the Unix epoch, and
 * its UTC ISO 8601 form used in files and reports (2026-11-22T06:31:00.123Z).
 */
#ifndef DCPI_CORE_TIMEUTIL_H
#define DCPI_CORE_TIMEUTIL_H

#include <stdint.h>

struct strbuf;

int64_t time_now_ns(void);          /* CLOCK_REALTIME */
int64_t time_monotonic_ns(void);    /* CLOCK_MONOTONIC */
/* Appends ns as "YYYY-MM-DDTHH:MM:SS.mmmZ" (milliseconds, UTC). */
void strbuf_add_time_iso(struct strbuf *sb, int64_t ns);
/* Appends ns as "YYYY-MM-DD HH:MM:SS" (UTC), for tables. */
void strbuf_add_time_short(struct strbuf *sb, int64_t ns);
/* Parses "YYYY-MM-DDTHH:MM:SS[.fff...]Z" (years 1970-2261); returns 0 or -1. */
int time_parse_iso(const char *s, int64_t *ns);
/* Appends a duration such as "1h02m", "3m05s", "12.3s". */
void strbuf_add_duration(struct strbuf *sb, int64_t ns);

#endif
