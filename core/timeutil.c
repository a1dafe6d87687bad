/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/timeutil.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t time_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t time_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void split(int64_t ns, struct tm *tm, int *ms)
{
	time_t sec = (time_t)(ns / 1000000000);
	int64_t rem = ns % 1000000000;

	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	*ms = (int)(rem / 1000000);
	gmtime_r(&sec, tm);
}

void strbuf_add_time_iso(struct strbuf *sb, int64_t ns)
{
	struct tm tm;
	int ms;

	split(ns, &tm, &ms);
	strbuf_addf(sb, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void strbuf_add_time_short(struct strbuf *sb, int64_t ns)
{
	struct tm tm;
	int ms;

	split(ns, &tm, &ms);
	strbuf_addf(sb, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)**s))
			return -1;
		v = v * 10 + (*(*s)++ - '0');
	}
	*out = v;
	return 0;
}

int time_parse_iso(const char *s, int64_t *ns)
{
	struct tm tm;
	int y, mo, d, h, mi, sec;
	int64_t frac = 0, scale = 100000000;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
	    digits(&s, 2, &d) || *s++ != 'T' || digits(&s, 2, &h) || *s++ != ':' ||
	    digits(&s, 2, &mi) || *s++ != ':' || digits(&s, 2, &sec))
		return -1;
	/* int64_t nanoseconds since 1970 reach into 2262. */
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s)) {
			frac += (*s++ - '0') * scale;
			scale /= 10;
		}
	}
	if (strcmp(s, "Z"))
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	*ns = (int64_t)t * 1000000000 + frac;
	return 0;
}

void strbuf_add_duration(struct strbuf *sb, int64_t ns)
{
	int64_t s = ns / 1000000000;

	if (ns < 0) {
		strbuf_addstr(sb, "-");
		return;
	}
	if (s >= 86400)
		strbuf_addf(sb, "%" PRId64 "d%02" PRId64 "h", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		strbuf_addf(sb, "%" PRId64 "h%02" PRId64 "m", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		strbuf_addf(sb, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
	else
		strbuf_addf(sb, "%.1fs", (double)ns / 1e9);
}
