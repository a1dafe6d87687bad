/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/die.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "dcpi";
static report_fn report_routine;
static _Atomic unsigned n_errors; /* errors may come from worker threads */

void set_progname(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0 && *argv0)
		prog = slash ? slash + 1 : argv0;
}

const char *progname(void)
{
	return prog;
}

void set_report_routine(report_fn fn)
{
	report_routine = fn;
}

unsigned error_count(void)
{
	return n_errors;
}

static void vreport(enum report_level level, int errnum, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "warning: ", "error: ", "fatal: " };
	char msg[4096];
	size_t len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errnum) {
		len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s", strerror(errnum));
	}
	if (report_routine) {
		report_routine(level, msg);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "%s: %s%s\n", prog, prefix[level], msg);
}

#define REPORT(level, errnum)                        \
	do {                                         \
		va_list ap;                          \
		va_start(ap, fmt);                   \
		vreport((level), (errnum), fmt, ap); \
		va_end(ap);                          \
	} while (0)

int errorf(const char *fmt, ...)
{
	n_errors++;
	REPORT(REPORT_ERROR, 0);
	return -1;
}

int errorf_errno(const char *fmt, ...)
{
	int e = errno;

	n_errors++;
	REPORT(REPORT_ERROR, e);
	errno = e;
	return -1;
}

void warning(const char *fmt, ...)
{
	REPORT(REPORT_WARNING, 0);
}

void warning_errno(const char *fmt, ...)
{
	int e = errno;

	REPORT(REPORT_WARNING, e);
	errno = e;
}

void die(const char *fmt, ...)
{
	REPORT(REPORT_FATAL, 0);
	exit(1);
}

void die_errno(const char *fmt, ...)
{
	int e = errno;

	REPORT(REPORT_FATAL, e);
	exit(1);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: BUG: %s:%d: ", prog, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
